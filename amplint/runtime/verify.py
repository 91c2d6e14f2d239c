"""The verifier: run a before/after pair and decide whether the fix is right.

A *runner* is a function ``run(device, dtype) -> {name: tensor}`` (the fixture contract of
fixtures/README.md): ``dtype`` is ``torch.float16`` / ``torch.bfloat16`` for a mixed-precision
run, or ``None`` for the fp32 reference (autocast disabled, no half casts).  ``nn.Module``s with
their inputs are turned into runners by :func:`module_runner`.

A pair is **PASS** when all three checks hold:

1. *the fix keeps the meaning*: the before and the after, both run in fp32, return the same
   tensors per element within :data:`FP32_TOLERANCE` (the before's fp32 run is the reference);
2. *the before shows the hazard the rule names*, in at least one dtype, under autocast: it raises
   that rule's own error (:func:`amplint.runtime.errors.code_for_exception`, or the exact text
   given as ``hazard=``), the monitor reports that code (when the run then raises, only a
   RuntimeError/ValueError/AssertionError counts as explained by that finding), or its tensors
   leave the dtype's tolerance of the fp32 reference (NaN/inf included);
3. *the after is right under autocast*: for every dtype it raises nothing, the monitor reports
   nothing, every output and gradient is within the noise tolerance of the fp32 reference
   (4x the element's spread under rounding noise + 1 eps of the tensor's scale, see
   :mod:`amplint.runtime.noise`), and where the before ran without raising, the after is not
   further from the reference than it (RMS noise ratio <= 2x the before's + 0.25).

**FAIL** when a check does not hold (an after that raises anything fails check 1 or 3).  **ERROR**
when the pair cannot be judged: the before raises in fp32, or raises under autocast an error
other than its hazard (an unrelated ``NameError`` is not the hazard).  A clean case (no before)
runs check 3 alone against its own fp32 run.

Device: CUDA when available (float16, and bfloat16 where supported), otherwise ``cuda-emulated``:
CUDA's autocast rules applied on CPU (:mod:`amplint.runtime.emulate`); ``cpu`` runs plain CPU
autocast.  The result lists what the device could not show.  Check 3's tolerance is the dtype's
own noise on the after program (:mod:`amplint.runtime.noise`).
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from .compare import FP32_TOLERANCE, TOLERANCES, Comparison, Tolerance, compare, worst
from .errors import code_for_exception, code_for_warning, first_line
from .findings import Finding
from .fixes import cast_inputs
from .locate import is_internal
from .monitor import Monitor
from . import noise as _noise
from .results import ERROR, FAIL, PASS, DtypeResult, PairResult, RunOutcome, dtype_name

__all__ = ["PASS", "FAIL", "ERROR", "DtypeResult", "PairResult", "RunOutcome", "dtype_name",
           "verify", "module_runner", "run_once", "measure_spread", "default_device",
           "default_dtypes", "before_hazard", "EMULATED", "DEVICES"]
Runner = Callable[[str, Optional[torch.dtype]], Any]

EMULATED = "cuda-emulated"
DEVICES = ("cuda", EMULATED, "cpu")
EMULATED_SKIPPED = (
    "CUDA autocast was emulated on CPU (CUDA's op lists, raises and GradScaler('cuda')); CUDA's "
    "kernels were not run: cuBLAS/cuDNN accumulation order, TF32 and fused attention kernels "
    "differ (amplint/runtime/emulate.py)"
)
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


# -- running ------------------------------------------------------------------------------------
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


def run_once(fn: Runner, device: str, dtype: Optional[torch.dtype], seed: int = 0,
             mode=None) -> RunOutcome:
    """Run ``fn(device, dtype)`` from a fixed seed under a recording monitor (and ``mode``, a
    dispatch mode such as :class:`amplint.runtime.noise.RoundingNoise`, when given)."""
    torch.manual_seed(seed)
    outcome = RunOutcome()
    mon = Monitor("record", stand_in_for_cuda=device == "cpu")
    result = None
    emulation = contextlib.nullcontext()
    if device == EMULATED:
        from .emulate import CudaEmulation

        emulation, device = CudaEmulation(), "cpu"  # the program sees CPU tensors
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with emulation, mon, (mode if mode is not None else contextlib.nullcontext()):
                result = fn(device, dtype)
        except Exception as exc:  # judged by the caller: the hazard, or an error
            outcome.error = first_line(exc)
            outcome.error_code = code_for_exception(exc)
            outcome.error_type = type(exc).__name__
    outcome.findings = mon.findings
    for w in caught:
        code = code_for_warning(w.category, str(w.message))
        if code and not is_internal(w.filename):
            outcome.findings.append(Finding(code, f"warned {str(w.message)}", w.filename, w.lineno))
    if result is not None:
        _flatten(result, "", outcome.outputs)
    return outcome


def measure_spread(fn: Runner, device: str, dtype: torch.dtype, clean: RunOutcome,
                   runs: int = _noise.RUNS) -> Tuple[Dict[str, torch.Tensor], List[str]]:
    """The per-element spread of ``fn``'s float32 run under ``runs`` rounding-noise runs
    (:mod:`amplint.runtime.noise`), and the errors of noisy runs that raised (left out)."""
    noisy, failed = [], []
    for k in range(runs):
        out = run_once(fn, device, None, mode=_noise.RoundingNoise(dtype, seed=1000 + k))
        if out.error:
            failed.append(out.error)
        else:
            noisy.append(out.outputs)
    return _noise.spread(clean.outputs, noisy), failed


# -- verifying ----------------------------------------------------------------------------------
def default_device() -> str:
    """CUDA when available, else CUDA autocast emulated on CPU (:mod:`amplint.runtime.emulate`)."""
    return "cuda" if torch.cuda.is_available() else EMULATED


def default_dtypes(device: str) -> List[torch.dtype]:
    if device == "cuda" and not torch.cuda.is_bf16_supported():
        return [torch.float16]
    return [torch.float16, torch.bfloat16]


# check 3, "no worse than the before": the after's RMS noise ratio may exceed the before's by this
# factor plus this slack (1/MULTIPLE: the RMS of a run whose error is the size of the spread)
WORSE_FACTOR = 2.0
WORSE_SLACK = 1 / _noise.MULTIPLE

# the error types torch raises for dtype/range problems (a NameError is never explained by a finding)
_TORCH_ERRORS = frozenset({"RuntimeError", "ValueError", "AssertionError"})


def before_hazard(codes: Sequence[str], hazard: Optional[str], before: RunOutcome,
                  vs_ref: List[Comparison]):
    """``(how the before showed the hazard, why it cannot be judged)``; both None: no hazard.

    ``codes``: the rules whose hazard counts (empty: any rule's)."""
    wanted_code = (lambda c: c is not None and (not codes or c in codes))
    if before.error:
        if hazard is not None and hazard in before.error:
            return f"raised {before.error}", None
        if hazard is None and wanted_code(before.error_code):
            return f"raised {before.error} ({before.error_code})", None
        explained = [f for f in before.findings if wanted_code(f.code)]
        if hazard is None and explained and before.error_type in _TORCH_ERRORS:
            # the rule's own check fired first at the op that then raised (e.g. a half value
            # escaping its region meets float32 in an index_put): its finding explains the raise
            return f"raised {before.error}, after the monitor's {explained[0].code} at " \
                   f"{explained[0].location}", None
        wanted = (f"'{hazard}'" if hazard else
                  f"the {'/'.join(codes)} error" if codes else "an AMP hazard error")
        return None, f"the before raised {before.error}, not {wanted}"
    matching = [f for f in before.findings if wanted_code(f.code)]
    if matching:
        return f"monitor reported {matching[0].code} at {matching[0].location}", None
    bad = [c for c in vs_ref if not c.ok]
    if bad:
        return f"deviates from the fp32 reference: {worst(bad)}", None
    return None, None


def verify(before: Optional[Any], after: Any, *, inputs: Optional[Sequence] = None,
           loss_fn: Optional[Callable] = None, code: Union[None, str, Sequence[str]] = None,
           hazard: Optional[str] = None, device: Optional[str] = None,
           dtypes: Optional[Sequence[torch.dtype]] = None,
           tolerances: Optional[Mapping[torch.dtype, Tolerance]] = None,
           name: str = "pair", require_hazard: bool = True,
           notes: Sequence[str] = ()) -> PairResult:
    """Verify a before/after pair (see the module doc); ``before=None`` checks a clean case.

    ``before``/``after`` are runners ``fn(device, dtype) -> {name: tensor}`` or ``nn.Module``s
    (then ``inputs``, a tuple of forward arguments, and optionally ``loss_fn(output) -> loss``
    are used by :func:`module_runner`).  ``code`` is the rule (or rules) whose hazard the before
    must show;
    ``hazard`` an exact piece of the error message it must raise instead (for hazards no rule
    code translates).  With ``require_hazard=False`` check 2 is not made.
    """
    if isinstance(before, nn.Module):
        before = module_runner(before, inputs, loss_fn)
    if isinstance(after, nn.Module):
        after = module_runner(after, inputs, loss_fn)
    codes: Tuple[str, ...] = (code,) if isinstance(code, str) else tuple(code or ())
    code = "/".join(codes) or None
    device = device or default_device()
    dtypes = list(dtypes or default_dtypes(device))
    tols = dict(TOLERANCES, **(tolerances or {}))
    problems: List[str] = []
    errors: List[str] = []
    skipped_noise: List[str] = []

    ref_after = run_once(after, device, None)
    ref_before = run_once(before, device, None) if before is not None else None
    reference = ref_before if ref_before is not None else ref_after
    if ref_after.error:
        problems.append(f"float32: the after raised {ref_after.error}")
    elif ref_after.findings:
        problems.append(f"float32: the after is not clean: {ref_after.describe()}")
    fp32_cmp: List[Comparison] = []
    if ref_before is not None:
        if ref_before.error:
            errors.append(f"float32: the before raised {ref_before.error}: no fp32 reference")
        elif not ref_before.outputs:
            errors.append("the before returned no tensors to compare")
        elif not ref_after.error:
            fp32_cmp = compare(ref_after.outputs, ref_before.outputs, FP32_TOLERANCE)
            bad = [c for c in fp32_cmp if not c.ok]
            if bad:
                problems.append("float32: the after computes something else than the before: "
                                + "; ".join(c.describe() for c in bad))
    elif not ref_after.outputs and not ref_after.error:
        problems.append("the after returned no tensors to compare")

    results: List[DtypeResult] = []
    for dtype in dtypes:
        tol = tols[dtype]
        tag = dtype_name(dtype)
        spreads: Dict[str, torch.Tensor] = {}
        if not ref_after.error:
            spreads, failed = measure_spread(after, device, dtype, ref_after)
            if failed:
                skipped_noise.append(f"{tag}: {len(failed)} of {_noise.RUNS} rounding-noise runs "
                                     f"raised ({failed[0]}); the spread is from the others")
        after_run = run_once(after, device, dtype)
        result = DtypeResult(dtype, tol, None, after_run,
                             _noise.compare_noise(after_run.outputs, reference.outputs, spreads,
                                                  dtype))
        result.after_rms = _noise.rms_ratio(after_run.outputs, reference.outputs, spreads, dtype)
        if before is not None:
            result.before = run_once(before, device, dtype)
            if result.before.error is None:
                result.before_vs_reference = _noise.compare_noise(
                    result.before.outputs, reference.outputs, spreads, dtype)
                result.before_rms = _noise.rms_ratio(result.before.outputs, reference.outputs,
                                                     spreads, dtype)
            result.hazard, why = before_hazard(codes, hazard, result.before,
                                               result.before_vs_reference)
            if why:
                result.errors.append(f"{tag}: {why}")
        if after_run.error:
            result.problems.append(f"{tag}: the after raised {after_run.error}")
        if after_run.findings:
            result.problems.append(f"{tag}: the after is not clean: "
                                   + ", ".join(str(f) for f in after_run.findings))
        bad = [c for c in result.after_vs_reference if not c.ok]
        if not after_run.error and bad and not reference.error:
            result.problems.append(f"{tag}: the after leaves the noise tolerance of the fp32 "
                                   "reference: " + "; ".join(c.describe() for c in bad))
        elif (not after_run.error and not reference.error and result.before_rms is not None
              and result.after_rms > WORSE_FACTOR * result.before_rms + WORSE_SLACK):
            result.problems.append(
                f"{tag}: the after is further from the fp32 reference than the before: RMS noise "
                f"ratio {result.after_rms:.3g} > {WORSE_FACTOR:g} * {result.before_rms:.3g} + "
                f"{WORSE_SLACK:g}")
        problems.extend(result.problems)
        errors.extend(result.errors)
        results.append(result)

    if before is not None and require_hazard and not any(r.hazard for r in results):
        what = f"its hazard {code}" if code else "a hazard"
        problems.append(f"the before shows {what} in no dtype ({', '.join(map(dtype_name, dtypes))})")

    skipped: List[str] = list(notes) + skipped_noise
    if device == EMULATED:
        skipped.append(EMULATED_SKIPPED)
    elif device != "cuda":
        skipped.append(CPU_SKIPPED)
        skipped.extend(CUDA_ONLY[c] for c in codes if c in CUDA_ONLY)
    skipped.extend(DTYPE_NOTES[c] for c in codes if c in DTYPE_NOTES)
    return PairResult(name, code, device, reference, ref_before, ref_after, fp32_cmp, results,
                      skipped, problems, errors)


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
