"""How much a computation moves when its values are rounded to a half dtype: the yardstick of
the verifier's check 3.

A fixed tolerance cannot tell a right fix from a wrong one: through two matmuls bfloat16's own
rounding moves some gradient elements by 10 %, while a wrong fix can move a loss by 1 %.  So the
verifier measures, on the after program itself, how sensitive each output element is to rounding
at the dtype's precision, and judges the after's real autocast deviation against that.

**The statistic.**  The after runs ``RUNS`` more times in float32 under :class:`RoundingNoise`,
which multiplies every floating input of every computing op (forward, backward, optimizer) by
``1 + d``, ``d`` drawn uniformly from ``[-u, u]`` per element, ``u`` the dtype's unit roundoff
(``eps / 2``: 2**-11 for float16, 2**-8 for bfloat16) -- the standard model of one rounding to
that dtype at every op's input, which is where autocast rounds.  The *spread* of an element is
the largest ``|noisy - clean|`` over the runs.  An output element of the real autocast run passes
when::

    |a - ref| <= MULTIPLE * spread + FLOOR * eps * max|ref|

``RUNS`` = 8 and ``MULTIPLE`` = 4: the real run is one more draw of errors of the same kind, but
their tail is heavy -- a value near a ReLU's kink that rounding flips switches a whole term of a
gradient on or off.  With 4 runs, fixtures/AMP102/sigmoid_head's right fix had one bfloat16
gradient element 9.3x its spread (no noisy run had flipped that unit); with 6, 8, 12 or 48 runs
its worst element is 0.93-0.94x its spread.  Eight runs catch such flips; 4x their max leaves
room for the draw the runs missed.  ``FLOOR`` = 1
eps of the tensor's largest reference value keeps elements whose spread is 0 (exact zeros, a
ReLU's dead units) from failing on a last-bit difference.  The model rounds inputs of ops that
autocast keeps in float32 too, so it over-states the noise there (a wider, not a narrower bound);
a wrong fix that changes the float32 meaning is caught by check 1 first, whatever this bound.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .compare import Comparison

RUNS = 8
MULTIPLE = 4.0
FLOOR = 1.0

_ATEN = torch.ops.aten
# ops that move or make values without computing on them: their inputs are not rounded again
_MOVES = {
    "_to_copy", "copy_", "clone", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "empty_like", "zeros_like", "ones_like", "full_like", "fill_", "zero_", "index", "select",
    "slice", "gather", "index_select", "cat", "stack", "stride", "size", "sym_size", "sym_stride",
    "is_same_size", "_local_scalar_dense", "item", "set_", "resize_", "_unsafe_view", "view",
    "expand", "t", "transpose", "permute", "squeeze", "unsqueeze", "as_strided", "split",
    "split_with_sizes", "unbind", "chunk", "narrow", "reshape", "flatten", "contiguous",
    "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "empty_strided",
    "isinf", "isnan", "isfinite", "eq", "ne", "lt", "le", "gt", "ge", "equal", "where",
}


def unit_roundoff(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps / 2


class RoundingNoise(TorchDispatchMode):
    """Perturb every float32 input of every computing op by one rounding of ``dtype`` (see the
    module doc).  Mutated arguments are left alone (the op writes into them); the noise comes
    from a private generator, so the program's own random numbers are the same as without it."""

    def __init__(self, dtype: torch.dtype, seed: int):
        super().__init__()
        self.u = unit_roundoff(dtype)
        self.gen = torch.Generator().manual_seed(seed)

    def _jitter(self, t):
        if (not isinstance(t, torch.Tensor) or t.dtype != torch.float32 or t.numel() == 0
                or t.is_sparse):
            return t
        noise = torch.rand(t.shape, generator=self.gen, dtype=torch.float32)
        return t * (1 + (2 * noise.to(t.device) - 1) * self.u)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name.split("::")[-1]
        if name in _MOVES or func.is_view or name.startswith("_foreach"):
            return func(*args, **kwargs)
        schema = func._schema.arguments
        # a loss's target is data, not a rounded value (CUDA's BCE asserts 0 <= target <= 1)
        written = {a.name for a in schema if a.alias_info is not None and a.alias_info.is_write}
        written.add("target")
        names = [a.name for a in schema]
        args = tuple(a if i < len(names) and names[i] in written else self._jitter(a)
                     for i, a in enumerate(args))
        kwargs = {k: (v if k in written else self._jitter(v)) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def spread(clean: Dict[str, torch.Tensor], noisy: List[Dict[str, torch.Tensor]]
           ) -> Dict[str, torch.Tensor]:
    """Per element: the largest ``|noisy - clean|`` over the noisy runs (inf where a run lost
    the element or went non-finite where the clean run is finite)."""
    out: Dict[str, torch.Tensor] = {}
    for name, ref in clean.items():
        ref = ref.double()
        worst = torch.zeros_like(ref)
        for run in noisy:
            got = run.get(name)
            if got is None or got.shape != ref.shape:
                worst = torch.full_like(ref, math.inf)
                break
            diff = (got.double() - ref).abs()
            diff = torch.where(torch.isnan(got) & torch.isnan(ref), torch.zeros_like(diff), diff)
            worst = torch.maximum(worst, torch.nan_to_num(diff, nan=math.inf))
        out[name] = worst
    return out


def compare_noise(outputs: Dict[str, torch.Tensor], reference: Dict[str, torch.Tensor],
                  spreads: Dict[str, torch.Tensor], dtype: torch.dtype) -> List[Comparison]:
    """Per element ``|a - ref| <= MULTIPLE * spread + FLOOR * eps * max|ref|``; ``worst`` is the
    largest ``|a - ref| / bound`` (the *noise ratio*: above 1 is beyond the tolerance)."""
    eps = torch.finfo(dtype).eps
    result = []
    for name, ref in reference.items():
        got = outputs.get(name)
        n = ref.numel()
        if got is None or got.shape != ref.shape:
            note = "missing" if got is None else f"shape {tuple(got.shape)} != {tuple(ref.shape)}"
            result.append(Comparison(name, math.inf, math.inf, math.inf, n, n, note))
            continue
        if n == 0:
            result.append(Comparison(name, 0.0, 0.0, 0.0, 0, 0))
            continue
        got, ref = got.double(), ref.double()
        same = (got == ref) | (torch.isnan(got) & torch.isnan(ref))
        finite = ref[torch.isfinite(ref)]
        scale = float(finite.abs().max()) if finite.numel() else 0.0
        diff = torch.where(same, torch.zeros_like(ref), (got - ref).abs())
        diff = torch.nan_to_num(diff, nan=math.inf, posinf=math.inf)
        noise = spreads.get(name)
        noise = torch.zeros_like(ref) if noise is None or noise.shape != ref.shape else noise
        bound = MULTIPLE * noise + FLOOR * eps * scale
        bad = ~same & ~(diff <= bound)
        max_abs = float(diff.max())
        max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
        ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)
        result.append(Comparison(name, max_abs, max_rel, float(ratio.max()), int(bad.sum()), n))
    for name in outputs.keys() - reference.keys():
        got = outputs[name]
        result.append(Comparison(name, math.inf, math.inf, math.inf, got.numel(), got.numel(),
                                 "not in the reference"))
    return result


def rms_ratio(outputs: Dict[str, torch.Tensor], reference: Dict[str, torch.Tensor],
              spreads: Dict[str, torch.Tensor], dtype: torch.dtype) -> float:
    """The root mean square of ``|a - ref| / bound`` over every compared element: how far a run
    is from the reference on the whole, in units of the noise bound (check 3's *no worse than
    the before*)."""
    eps = torch.finfo(dtype).eps
    total, count = 0.0, 0
    for name, ref in reference.items():
        got = outputs.get(name)
        if got is None or got.shape != ref.shape:
            return math.inf
        if ref.numel() == 0:
            continue
        got, ref = got.double(), ref.double()
        same = (got == ref) | (torch.isnan(got) & torch.isnan(ref))
        finite = ref[torch.isfinite(ref)]
        scale = float(finite.abs().max()) if finite.numel() else 0.0
        noise = spreads.get(name)
        noise = torch.zeros_like(ref) if noise is None or noise.shape != ref.shape else noise
        bound = MULTIPLE * noise + FLOOR * eps * scale
        diff = torch.where(same, torch.zeros_like(ref), (got - ref).abs())
        ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)
        ratio = torch.nan_to_num(ratio, nan=math.inf)
        total += float((ratio ** 2).sum())
        count += ref.numel()
    return math.sqrt(total / count) if count else 0.0


def noise_ratio(comparisons: List[Comparison]) -> float:
    """The largest noise ratio over the compared tensors (0 with nothing to compare)."""
    return max((c.worst for c in comparisons), default=0.0)


def describe(dtype: Optional[torch.dtype]) -> str:
    if dtype is None:
        return ""
    return (f"per element |a - ref| <= {MULTIPLE:g}*spread + {FLOOR:g}*eps*max|ref|, spread: "
            f"max over {RUNS} float32 runs with every op input rounded by +-{unit_roundoff(dtype):.3g}")
