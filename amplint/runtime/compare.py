"""Per-element comparison of a run's tensors with a reference run's.

Every element of every compared tensor ``a`` must satisfy, against the reference ``r``::

    |a - r| <= rtol * |r| + floor * max|r|

``rtol`` bounds the relative error of each element; ``floor`` (a fraction of the tensor's largest
reference magnitude) only keeps elements that are zero up to rounding from failing on a relative
bound.  Both are multiples of the dtype's machine epsilon (:data:`TOLERANCES`)::

    float32 (before vs after, the fix keeps the meaning): rtol 1e-5,  floor 1e-6
    float16 (eps 2**-10 ~ 9.8e-4):                        rtol 5e-3,  floor 4e-3   (~5 eps, ~4 eps)
    bfloat16 (eps 2**-7 ~ 7.8e-3):                        rtol 4e-2,  floor 5e-2   (~5 eps, ~6 eps)

The floor is a few eps because a gradient element is a sum whose terms are rounded: its error
scales with the sum of the terms' magnitudes, which a small element does not show.

NaN matches NaN and an infinity matches the same infinity; any other non-finite value fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import torch


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    floor: float

    def describe(self) -> str:
        return f"per element |a - ref| <= {self.rtol:g}*|ref| + {self.floor:g}*max|ref|"


TOLERANCES: Dict[torch.dtype, Tolerance] = {
    torch.float16: Tolerance(rtol=5e-3, floor=4e-3),
    torch.bfloat16: Tolerance(rtol=4e-2, floor=5e-2),
}
FP32_TOLERANCE = Tolerance(rtol=1e-5, floor=1e-6)


@dataclass
class Comparison:
    name: str
    max_abs: float  # max |a - r|
    max_rel: float  # max |a - r| / max|r| (as earlier versions reported it)
    worst: float  # max over elements of |a - r| / bound (> 1: beyond tolerance)
    bad: int  # elements beyond tolerance
    total: int
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.bad == 0 and not self.note

    def describe(self) -> str:
        text = (f"{self.name}: max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}, "
                f"{self.bad}/{self.total} elements beyond tolerance")
        return text + (f" ({self.note})" if self.note else "")


def compare_tensor(name: str, got: Optional[torch.Tensor], ref: torch.Tensor,
                   tol: Tolerance) -> Comparison:
    if got is None:
        return Comparison(name, math.inf, math.inf, math.inf, ref.numel(), ref.numel(), "missing")
    if got.shape != ref.shape:
        return Comparison(name, math.inf, math.inf, math.inf, ref.numel(), ref.numel(),
                          f"shape {tuple(got.shape)} != {tuple(ref.shape)}")
    n = ref.numel()
    if n == 0:
        return Comparison(name, 0.0, 0.0, 0.0, 0, 0)
    got, ref = got.double(), ref.double()
    same = (got == ref) | (torch.isnan(got) & torch.isnan(ref))
    finite_ref = ref[torch.isfinite(ref)]
    scale = float(finite_ref.abs().max()) if finite_ref.numel() else 0.0
    diff = torch.where(same, torch.zeros_like(ref), (got - ref).abs())
    diff = torch.nan_to_num(diff, nan=math.inf, posinf=math.inf)
    bound = tol.rtol * ref.abs() + tol.floor * scale
    bad = ~same & ~(diff <= bound)
    max_abs = float(diff.max())
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
    ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)  # bound 0: inf
    worst = float(ratio.max())
    return Comparison(name, max_abs, max_rel, worst, int(bad.sum()), n)


def compare(outputs: Dict[str, torch.Tensor], reference: Dict[str, torch.Tensor],
            tol: Tolerance) -> List[Comparison]:
    """Compare every reference tensor with the same-named output, per element."""
    result = [compare_tensor(name, outputs.get(name), ref, tol) for name, ref in reference.items()]
    for name in outputs.keys() - reference.keys():
        got = outputs[name]
        result.append(Comparison(name, math.inf, math.inf, math.inf, got.numel(), got.numel(),
                                 "not in the reference"))
    return result


def worst(comparisons: Sequence[Comparison]) -> str:
    if not comparisons:
        return "nothing to compare"
    by_abs = max(comparisons, key=lambda c: c.max_abs)
    by_rel = max(comparisons, key=lambda c: c.max_rel)
    bad = sum(c.bad for c in comparisons)
    total = sum(c.total for c in comparisons)
    return (f"max abs {by_abs.max_abs:.3g} ({by_abs.name}), max rel {by_rel.max_rel:.3g} "
            f"({by_rel.name}), {bad}/{total} elements beyond tolerance")
