"""The verifier: run a before/after pair and prove the fix keeps the numbers.

A *runner* is a function ``run(device, dtype) -> {name: tensor}`` (the fixture contract of
fixtures/README.md): ``dtype`` is ``torch.float16`` / ``torch.bfloat16`` for a mixed-precision
run, or ``None`` for the fp32 reference (autocast disabled, no half casts).  ``nn.Module``s with
their inputs are turned into runners by :func:`module_runner`.

For each mixed-precision dtype :func:`verify` runs, under a recording monitor:

- the *before*: its outcome is what it raised and which codes the monitor reported; it *shows its
  hazard* when the monitor (or a translated error) reports the expected code, when it raises an
  error with no code of its own, or when its numbers leave the tolerance of the fp32 reference;
- the *after*: it must raise nothing, report nothing, and match the fp32 reference (the after run
  with ``dtype=None``) within the tolerance below, for every output and gradient it returns.

It also reports the after against the before (where the before ran) and the fp32 before against
the fp32 after.  A pair is *verified* when the after passes for every dtype and the before shows
its hazard for at least one (a float16-only hazard such as AMP110 stays silent in bfloat16).

Tolerances (:data:`TOLERANCES`), per compared tensor ``a`` against the reference ``r``::

    max|a - r| <= atol + rtol * max|r|

    float16:  atol 1e-3, rtol 1e-2      bfloat16: atol 2e-3, rtol 5e-2

The reported relative difference is ``max|a - r| / max|r|``.  NaN or inf in an after's output
fails.  Device: CUDA when available (float16, and bfloat16 where supported), otherwise CPU autocast
(float16 and bfloat16), and the result lists which CUDA-only expectations were not checked.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import torch
from torch import nn

from .errors import code_for_warning, first_line
from .findings import Finding
from .fixes import cast_inputs
from .locate import is_internal
from .monitor import Monitor

Runner = Callable[[str, Optional[torch.dtype]], Any]


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    def allows(self, max_abs: float, scale: float) -> bool:
        return max_abs <= self.atol + self.rtol * scale


TOLERANCES: Dict[torch.dtype, Tolerance] = {
    torch.float16: Tolerance(atol=1e-3, rtol=1e-2),
    torch.bfloat16: Tolerance(atol=2e-3, rtol=5e-2),
}

# fp32 before against fp32 after: informational (a fix may legitimately change fp32 numbers)
FP32_TOLERANCE = Tolerance(atol=1e-5, rtol=1e-4)

CPU_SKIPPED = (
    "CUDA kernels were not run: float16/bfloat16 numerics were checked with CPU autocast, "
    "whose op lists and kernels differ from CUDA's"
)
CUDA_ONLY: Dict[str, str] = {
    "AMP102": "binary_cross_entropy/BCELoss raises 'unsafe to autocast' only under CUDA autocast; "
              "on CPU the monitor's AMP102 finding stands in for the raise",
    "AMP103": "GradScaler('cuda') raising 'Attempting to unscale FP16 gradients' was not run "
              "(GradScaler('cpu') behaves the same where the fixture uses it)",
}
DTYPE_NOTES: Dict[str, str] = {
    "AMP110": "bfloat16 has float32's range: the overflowing constant is a float16-only hazard",
}


def dtype_name(dtype: Optional[torch.dtype]) -> str:
    return "float32" if dtype is None else str(dtype).replace("torch.", "")


# -- running ------------------------------------------------------------------------------------
@dataclass
class RunOutcome:
    """One run of a runner: what it raised, what the monitor found, what it returned."""

    error: Optional[str] = None
    findings: List[Finding] = field(default_factory=list)
    outputs: Dict[str, torch.Tensor] = field(default_factory=dict, repr=False)

    @property
    def codes(self) -> List[str]:
        return list(dict.fromkeys(f.code for f in self.findings))

    @property
    def clean(self) -> bool:
        return self.error is None and not self.findings

    def describe(self) -> str:
        parts = []
        if self.error:
            parts.append(f"raised {self.error}")
        if self.findings:
            parts.append("monitor: " + ", ".join(f"{f.code} at {f.location}" for f in self.findings))
        return "; ".join(parts) or "clean"


def _flatten(obj, prefix: str, out: Dict[str, torch.Tensor]) -> None:
    if isinstance(obj, torch.Tensor):
        out[prefix or "output"] = obj.detach().to("cpu", torch.float64)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[prefix or "output"] = torch.tensor(float(obj), dtype=torch.float64)
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            _flatten(value, f"{prefix}.{i}" if prefix else str(i), out)


def run_once(fn: Runner, device: str, dtype: Optional[torch.dtype], seed: int = 0) -> RunOutcome:
    """Run ``fn(device, dtype)`` from a fixed seed under a recording monitor."""
    torch.manual_seed(seed)
    outcome = RunOutcome()
    mon = Monitor("record")
    result = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with mon:
                result = fn(device, dtype)
        except Exception as exc:  # the before is expected to raise
            outcome.error = first_line(exc)
    outcome.findings = mon.findings
    for w in caught:
        code = code_for_warning(w.category, str(w.message))
        if code and not is_internal(w.filename):
            outcome.findings.append(Finding(code, f"warned {str(w.message)}", w.filename, w.lineno))
    if result is not None:
        _flatten(result, "", outcome.outputs)
    return outcome


# -- comparing ----------------------------------------------------------------------------------
@dataclass
class Comparison:
    name: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""

    def describe(self) -> str:
        text = f"{self.name}: max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}"
        return text + (f" ({self.note})" if self.note else "")


def compare(outputs: Dict[str, torch.Tensor], reference: Dict[str, torch.Tensor],
            tol: Tolerance) -> List[Comparison]:
    """Compare every reference tensor with the same-named output (see the module doc)."""
    result = []
    for name, ref in reference.items():
        got = outputs.get(name)
        if got is None:
            result.append(Comparison(name, math.inf, math.inf, False, "missing"))
            continue
        if got.shape != ref.shape:
            result.append(Comparison(name, math.inf, math.inf, False,
                                     f"shape {tuple(got.shape)} != {tuple(ref.shape)}"))
            continue
        if got.numel() == 0:
            result.append(Comparison(name, 0.0, 0.0, True))
            continue
        diff = (got - ref).abs()
        max_abs = float(diff.max()) if bool(torch.isfinite(diff).all()) else math.inf
        scale = float(ref.abs().max()) if bool(torch.isfinite(ref).all()) else math.inf
        max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
        ok = math.isfinite(max_abs) and tol.allows(max_abs, scale)
        result.append(Comparison(name, max_abs, max_rel, ok, "" if ok else "beyond tolerance"))
    return result


def _worst(comparisons: Sequence[Comparison]) -> str:
    if not comparisons:
        return "nothing to compare"
    worst_abs = max(comparisons, key=lambda c: c.max_abs)
    worst_rel = max(comparisons, key=lambda c: c.max_rel)
    return (f"max abs {worst_abs.max_abs:.3g} ({worst_abs.name}), "
            f"max rel {worst_rel.max_rel:.3g} ({worst_rel.name})")


# -- verifying ----------------------------------------------------------------------------------
@dataclass
class DtypeResult:
    dtype: torch.dtype
    tolerance: Tolerance
    before: Optional[RunOutcome]
    after: RunOutcome
    after_vs_reference: List[Comparison]
    before_vs_reference: List[Comparison] = field(default_factory=list)
    after_vs_before: List[Comparison] = field(default_factory=list)
    hazard: Optional[str] = None  # how the before showed its hazard
    problems: List[str] = field(default_factory=list)  # what is wrong with the after


@dataclass
class PairResult:
    """The verifier's answer for one pair (or one clean case, where ``before`` is absent)."""

    name: str
    code: Optional[str]
    device: str
    reference: RunOutcome
    reference_before: Optional[RunOutcome]
    fp32_before_vs_after: List[Comparison]
    dtypes: List[DtypeResult]
    skipped: List[str]
    problems: List[str]

    @property
    def verified(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = "PASS" if self.verified else "FAIL"
        lines = [f"{head} {self.name}" + (f" [{self.code}]" if self.code else "") + f" on {self.device}"]
        for r in self.dtypes:
            tag = dtype_name(r.dtype)
            if r.before is not None:
                lines.append(f"  {tag} before: {r.before.describe()}")
                lines.append(f"  {tag} hazard shown: {r.hazard or 'no'}")
                if r.after_vs_before:
                    lines.append(f"  {tag} after vs before: {_worst(r.after_vs_before)}")
            state = "clean" if r.after.clean else r.after.describe()
            lines.append(f"  {tag} after: {state}; vs fp32 reference: {_worst(r.after_vs_reference)}"
                         f" (tol atol {r.tolerance.atol:g} + rtol {r.tolerance.rtol:g} * max|ref|)")
        if self.fp32_before_vs_after:
            lines.append(f"  float32 before vs after: {_worst(self.fp32_before_vs_after)}")
        for note in self.skipped:
            lines.append(f"  not checked: {note}")
        for problem in self.problems:
            lines.append(f"  problem: {problem}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        def comps(cs):
            return {c.name: {"max_abs": c.max_abs, "max_rel": c.max_rel, "ok": c.ok} for c in cs}

        def run(o):
            return None if o is None else {
                "error": o.error, "codes": o.codes,
                "findings": [str(f) for f in o.findings]}

        return {
            "name": self.name, "code": self.code, "device": self.device,
            "verified": self.verified, "problems": self.problems, "skipped": self.skipped,
            "reference": run(self.reference),
            "dtypes": [{
                "dtype": dtype_name(r.dtype), "before": run(r.before), "hazard": r.hazard,
                "after": run(r.after), "after_vs_reference": comps(r.after_vs_reference),
                "after_vs_before": comps(r.after_vs_before),
                "tolerance": {"atol": r.tolerance.atol, "rtol": r.tolerance.rtol},
            } for r in self.dtypes],
        }


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def default_dtypes(device: str) -> List[torch.dtype]:
    if device == "cuda" and not torch.cuda.is_bf16_supported():
        return [torch.float16]
    return [torch.float16, torch.bfloat16]


def _hazard(code: Optional[str], before: RunOutcome, vs_ref: List[Comparison]) -> Optional[str]:
    matching = [f for f in before.findings if code is None or f.code == code]
    if matching:
        f = matching[0]
        if before.error and f.extra.get("error"):
            return f"raised {before.error} ({f.code})"
        return f"monitor reported {f.code} at {f.location}"
    if before.error and not before.findings:
        return f"raised {before.error}"
    bad = [c for c in vs_ref if not c.ok]
    if before.error is None and bad:
        return f"silent wrong numbers vs fp32: {_worst(bad)}"
    return None


def verify(before: Optional[Any], after: Any, *, inputs: Optional[Sequence] = None,
           loss_fn: Optional[Callable] = None, code: Optional[str] = None,
           device: Optional[str] = None, dtypes: Optional[Sequence[torch.dtype]] = None,
           tolerances: Optional[Mapping[torch.dtype, Tolerance]] = None,
           name: str = "pair", require_hazard: bool = True) -> PairResult:
    """Verify a before/after pair (see the module doc); ``before=None`` checks a clean case.

    ``before``/``after`` are runners ``fn(device, dtype) -> {name: tensor}`` or ``nn.Module``s
    (then ``inputs``, a tuple of forward arguments, and optionally ``loss_fn(output) -> loss``
    are used by :func:`module_runner`).  ``code`` is the rule code the before must show (None:
    any).  With ``require_hazard=False`` a before that shows nothing is no problem.
    """
    if isinstance(before, nn.Module):
        before = module_runner(before, inputs, loss_fn)
    if isinstance(after, nn.Module):
        after = module_runner(after, inputs, loss_fn)
    device = device or default_device()
    dtypes = list(dtypes or default_dtypes(device))
    tols = dict(TOLERANCES, **(tolerances or {}))
    problems: List[str] = []

    reference = run_once(after, device, None)
    if reference.error:
        problems.append(f"the after's fp32 reference raised {reference.error}")
    elif reference.findings:
        problems.append(f"the after's fp32 reference is not clean: {reference.describe()}")
    elif not reference.outputs:
        problems.append("the after returned no tensors to compare")
    reference_before = run_once(before, device, None) if before is not None else None
    fp32_cmp: List[Comparison] = []
    if reference_before is not None and reference_before.error is None:
        fp32_cmp = compare(reference_before.outputs, reference.outputs, FP32_TOLERANCE)

    results: List[DtypeResult] = []
    for dtype in dtypes:
        tol = tols[dtype]
        after_run = run_once(after, device, dtype)
        result = DtypeResult(dtype, tol, None, after_run,
                             compare(after_run.outputs, reference.outputs, tol))
        if before is not None:
            result.before = run_once(before, device, dtype)
            if result.before.error is None:
                result.before_vs_reference = compare(result.before.outputs, reference.outputs, tol)
                result.after_vs_before = compare(after_run.outputs, result.before.outputs, tol)
            result.hazard = _hazard(code, result.before, result.before_vs_reference)
        tag = dtype_name(dtype)
        if after_run.error:
            result.problems.append(f"{tag}: the after raised {after_run.error}")
        if after_run.findings:
            result.problems.append(f"{tag}: the after is not clean: "
                                   + ", ".join(str(f) for f in after_run.findings))
        bad = [c for c in result.after_vs_reference if not c.ok]
        if not after_run.error and bad and not reference.error:
            result.problems.append(f"{tag}: the after leaves the tolerance of the fp32 reference: "
                                   + "; ".join(c.describe() for c in bad))
        problems.extend(result.problems)
        results.append(result)

    if before is not None and require_hazard and not any(r.hazard for r in results):
        what = f"its hazard {code}" if code else "a hazard"
        problems.append(f"the before shows {what} in no dtype ({', '.join(map(dtype_name, dtypes))})")

    skipped: List[str] = []
    if device != "cuda":
        skipped.append(CPU_SKIPPED)
        if code in CUDA_ONLY:
            skipped.append(CUDA_ONLY[code])
    if code in DTYPE_NOTES:
        skipped.append(DTYPE_NOTES[code])
    return PairResult(name, code, device, reference, reference_before, fp32_cmp, results,
                      skipped, problems)


def module_runner(model: nn.Module, inputs: Optional[Sequence] = None,
                  loss_fn: Optional[Callable] = None) -> Runner:
    """Turn a module and its inputs into a runner: a fresh deep copy of ``model`` (fp32 for the
    reference, as given otherwise) runs ``model(*inputs)`` under ``torch.autocast(device,
    dtype)``, then ``loss_fn(output)`` (default: the fp32 sum of the output) is backpropagated
    after the autocast block.  Returns the output, the loss and every parameter's gradient."""
    inputs = tuple(inputs or ())

    def run(device: str, dtype: Optional[torch.dtype]):
        m = copy.deepcopy(model)
        if dtype is None:
            m = m.float()
        m = m.to(device)
        args = tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in inputs)
        if dtype is None:
            args = cast_inputs(args, (torch.float16, torch.bfloat16), torch.float32)
        with torch.autocast(device, dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            out = m(*args)
        loss = loss_fn(out) if loss_fn is not None else _sum_float(out)
        loss.backward()
        result = {"output": out, "loss": loss}
        for pname, p in m.named_parameters():
            if p.grad is not None:
                result[f"grad.{pname}"] = p.grad
        return result

    return run


def _sum_float(out) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out.float().sum()
    if isinstance(out, Mapping):
        out = list(out.values())
    return sum(_sum_float(o) for o in out if isinstance(o, (torch.Tensor, list, tuple, dict)))
