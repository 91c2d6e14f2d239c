"""The verifier's results: one run (:class:`RunOutcome`), one dtype (:class:`DtypeResult`), one
pair (:class:`PairResult`, with its text summary and JSON form).  See :mod:`amplint.runtime.verify`
for the checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

from . import noise as _noise
from .compare import FP32_TOLERANCE, Comparison, Tolerance, worst
from .findings import Finding

PASS, FAIL, ERROR = "PASS", "FAIL", "ERROR"

def dtype_name(dtype: Optional[torch.dtype]) -> str:
    return "float32" if dtype is None else str(dtype).replace("torch.", "")



@dataclass
class RunOutcome:
    """One run of a runner: what it raised, what the monitor found, what it returned."""

    error: Optional[str] = None
    error_code: Optional[str] = None  # the rule whose hazard the error is, if any
    error_type: Optional[str] = None
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




@dataclass
class DtypeResult:
    dtype: torch.dtype
    tolerance: Tolerance
    before: Optional[RunOutcome]
    after: RunOutcome
    after_vs_reference: List[Comparison]
    before_vs_reference: List[Comparison] = field(default_factory=list)
    after_rms: float = 0.0  # RMS noise ratio of the after (check 3: no worse than the before)
    before_rms: Optional[float] = None
    hazard: Optional[str] = None  # how the before showed its hazard
    problems: List[str] = field(default_factory=list)  # what is wrong with the after
    errors: List[str] = field(default_factory=list)  # why the before cannot be judged


@dataclass
class PairResult:
    """The verifier's answer for one pair (or one clean case, where ``before`` is absent)."""

    name: str
    code: Optional[str]
    device: str
    reference: RunOutcome  # the fp32 reference: the before's fp32 run (the after's for a clean case)
    reference_before: Optional[RunOutcome]
    reference_after: RunOutcome
    fp32_before_vs_after: List[Comparison]
    dtypes: List[DtypeResult]
    skipped: List[str]
    problems: List[str]  # FAIL reasons
    errors: List[str] = field(default_factory=list)  # ERROR reasons

    @property
    def status(self) -> str:
        return ERROR if self.errors else FAIL if self.problems else PASS

    @property
    def verified(self) -> bool:
        return self.status == PASS

    def summary(self) -> str:
        lines = [f"{self.status} {self.name}" + (f" [{self.code}]" if self.code else "")
                 + f" on {self.device}"]
        if self.reference_before is not None:
            state = "ok" if self.fp32_before_vs_after and all(
                c.ok for c in self.fp32_before_vs_after) else "NO"
            lines.append(f"  1. fp32 before == after: {state}: {worst(self.fp32_before_vs_after)}"
                         f" ({FP32_TOLERANCE.describe()})")
            shown = "; ".join(f"{dtype_name(r.dtype)}: {r.hazard or 'no'}" for r in self.dtypes)
            lines.append(f"  2. before shows {self.code or 'its hazard'}: {shown}")
        for r in self.dtypes:
            tag = dtype_name(r.dtype)
            if r.before is not None:
                lines.append(f"     {tag} before: {r.before.describe()}")
            state = "clean" if r.after.clean else r.after.describe()
            lines.append(f"  3. {tag} after: {state}; vs fp32 reference: "
                         f"{worst(r.after_vs_reference)}, noise ratio "
                         f"{_noise.noise_ratio(r.after_vs_reference):.2g}, RMS {r.after_rms:.2g}"
                         + (f" (before: RMS {r.before_rms:.2g})" if r.before_rms is not None
                            else "") + f" ({_noise.describe(r.dtype)})")
        for note in self.skipped:
            lines.append(f"  not checked: {note}")
        for problem in self.problems:
            lines.append(f"  problem: {problem}")
        for error in self.errors:
            lines.append(f"  error: {error}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        def comps(cs):
            return {c.name: {"max_abs": c.max_abs, "max_rel": c.max_rel, "bad": c.bad,
                             "total": c.total, "ok": c.ok} for c in cs}

        def run(o):
            return None if o is None else {
                "error": o.error, "error_code": o.error_code, "codes": o.codes,
                "findings": [str(f) for f in o.findings]}

        return {
            "name": self.name, "code": self.code, "device": self.device, "status": self.status,
            "verified": self.verified, "problems": self.problems, "errors": self.errors,
            "skipped": self.skipped, "reference": run(self.reference),
            "fp32_before_vs_after": comps(self.fp32_before_vs_after),
            "fp32_tolerance": {"rtol": FP32_TOLERANCE.rtol, "floor": FP32_TOLERANCE.floor},
            "dtypes": [{
                "dtype": dtype_name(r.dtype), "before": run(r.before), "hazard": r.hazard,
                "after": run(r.after), "after_vs_reference": comps(r.after_vs_reference),
                "before_vs_reference": comps(r.before_vs_reference),
                "noise_ratio": _noise.noise_ratio(r.after_vs_reference),
                "after_rms": r.after_rms, "before_rms": r.before_rms,
                "tolerance": {"multiple": _noise.MULTIPLE, "floor_eps": _noise.FLOOR,
                              "runs": _noise.RUNS},
            } for r in self.dtypes],
        }


