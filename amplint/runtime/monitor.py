"""The runtime monitor: watch real execution and report AMP hazards at the user's line.

::

    with amplint.runtime.monitor() as m:          # a context manager ...
        loss = train_step(model, batch)
    m.findings                                    # [Finding(code, message, filename, line, extra)]

    @amplint.runtime.monitor(mode="warn")         # ... and a decorator
    def train_step(...): ...

Modes: ``"record"`` (collect findings), ``"warn"`` (also issue an :class:`AmpHazardWarning` at
the user's line, once per code and line), ``"raise"`` (raise :class:`AmpHazardError` at the first
finding, before the hazardous op runs where the check sees it first).

Checks (``checks=``, default all of :data:`DEFAULT_CHECKS`):

- AMP101 a float32 tensor from a factory without ``dtype=`` in an autocast region or a half
  module's forward meets a half tensor in an op that needs equal dtypes (reported at the factory).
- AMP102 ``F.binary_cross_entropy`` / ``nn.BCELoss`` under autocast (on CPU: "raises under CUDA
  autocast").
- AMP103 a module with fp16/bf16 parameters runs inside autocast; GradScaler asked to unscale
  fp16 gradients.
- AMP104 ``Tensor.backward`` / ``torch.autograd.backward/grad`` while autocast is enabled.
- AMP105 a half tensor produced in an autocast region meets a float32 tensor after the region in
  mm/matmul/linear/conv or an index put into a float32 buffer (reported at the use).
- AMP110 a fill value outside the range of the tensor's dtype.
- AMP111 a fill value that is another dtype's ``finfo`` bound (``torch.finfo(x.dtype).max`` with
  ``x`` float32) written into a half tensor.
- AMP127 an optimizer stepped directly (not by ``scaler.step``) on gradients of an enabled
  GradScaler's scaled backward that were never unscaled (the update is scale× too large).
- OVERFLOW (``overflow=True``, off by default: it checks every half op's output) the first op whose
  fp16/bf16 output holds inf/NaN from finite inputs.

Errors that torch raises for AMP hazards and that leave the block (index put dtype mismatch,
"unsafe to autocast", "Attempting to unscale FP16 gradients", scaler protocol errors, autocast
without device type, ...) are recorded with their code too, and propagate unchanged.

It works through torch's interposition points: a ``TorchFunctionMode`` (function-level
checks), global module forward hooks (module-level checks), a ``TorchDispatchMode`` (overflow),
a global optimizer step pre-hook (AMP127); AMP127 also wraps ``GradScaler.scale`` while the
monitor is active (torch has no hook there) and restores it on exit.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import ContextDecorator
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from . import checks as _checks
from .errors import code_for_exception, first_line
from .findings import AmpHazardError, AmpHazardWarning, Finding
from .locate import traceback_location, user_location, user_stack
from .modules import ModuleTracker

DEFAULT_CHECKS = frozenset(
    {"AMP101", "AMP102", "AMP103", "AMP104", "AMP105", "AMP110", "AMP111", "AMP127"}
)
ALL_CHECKS = DEFAULT_CHECKS | {"OVERFLOW"}
MODES = ("record", "warn", "raise")


class _FunctionMode(TorchFunctionMode):
    """Routes the few torch functions the checks care about to them; everything else passes."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        entry = self.table.get(func)
        if entry is None:
            return func(*args, **kwargs)
        pres, posts = entry
        for pre in pres:
            pre(func, args, kwargs)
        result = func(*args, **kwargs)
        for post in posts:
            post(func, args, kwargs, result)
        return result


class Monitor(ContextDecorator):
    """Records AMP hazards while its block (or decorated function) runs. See the module doc."""

    def __init__(self, mode: str = "record", checks: Optional[Iterable[str]] = None, *,
                 overflow: bool = False, overflow_backward: bool = False,
                 stand_in_for_cuda: bool = False):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        codes = set(DEFAULT_CHECKS if checks is None else checks)
        if overflow:
            codes.add("OVERFLOW")
        unknown = codes - ALL_CHECKS
        if unknown:
            raise ValueError(f"unknown checks {sorted(unknown)}; known: {sorted(ALL_CHECKS)}")
        self.mode = mode
        self.checks = frozenset(codes)
        # CPU autocast standing in for CUDA autocast (the verifier on a machine without a GPU):
        # hazards that only CUDA raises (AMP102) are reported on CPU too. Off by default, so the
        # monitor and the linter agree: code that runs under CPU autocast only is not reported.
        self.stand_in_for_cuda = stand_in_for_cuda
        self.overflow_backward = overflow_backward
        self.tracker = ModuleTracker()
        self._found: Dict[Tuple[str, str, int], Finding] = {}
        self._depth = 0
        self._modes: List[object] = []
        self.cleanups: List[Callable[[], None]] = []  # undo what checks installed (AMP127)
        self.overflow_mode = None  # the overflow locator of the last activation, if any

    # -- results -------------------------------------------------------------------------------
    @property
    def findings(self) -> List[Finding]:
        """Findings in the order first seen (one per code and line; ``extra["count"]`` repeats)."""
        return list(self._found.values())

    @property
    def codes(self) -> List[str]:
        """The distinct codes found, in order first seen."""
        return list(dict.fromkeys(f.code for f in self._found.values()))

    def clear(self) -> None:
        self._found.clear()

    def assert_clean(self) -> None:
        """Raise AssertionError listing the findings, if there are any."""
        if self._found:
            raise AssertionError("AMP hazards found:\n" + "\n".join(map(str, self.findings)))

    def report(self, code: str, message: str, location: Optional[Tuple[str, int]] = None,
               _raise: bool = True, **extra) -> Optional[Finding]:
        """Record a finding at ``location`` (default: the user's frame). Used by the checks."""
        frame = sys._getframe(1)
        filename, line = location if location is not None else user_location(frame)
        key = (code, filename, line)
        known = self._found.get(key)
        if known is not None:
            known.extra["count"] += 1
            return known
        extra["count"] = 1
        extra.setdefault("stack", user_stack(4, frame))
        finding = Finding(code, message, filename, line, extra)
        self._found[key] = finding
        if self.mode == "warn":
            warnings.warn_explicit(f"{code} {message}", AmpHazardWarning, filename, line)
        elif self.mode == "raise" and _raise:
            raise AmpHazardError(finding)
        return finding

    # -- activation ----------------------------------------------------------------------------
    def __enter__(self) -> "Monitor":
        self._depth += 1
        if self._depth > 1:
            return self
        self.tracker.callbacks.clear()
        self.cleanups = []
        table = _checks.build_table(self, self.checks)
        if self.checks & {"AMP101", "AMP103", "OVERFLOW"}:
            self.tracker.start()
        self._modes = []
        if table:  # nothing to route: no mode, no cost
            function_mode = _FunctionMode(table)
            function_mode.__enter__()
            self._modes.append(function_mode)
        if "OVERFLOW" in self.checks:
            from .overflow import OverflowMode

            dispatch_mode = self.overflow_mode = OverflowMode(self, backward=self.overflow_backward)
            dispatch_mode.__enter__()
            self._modes.append(dispatch_mode)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._depth -= 1
        if self._depth > 0:
            return False
        for mode in reversed(self._modes):
            mode.__exit__(None, None, None)
        self._modes = []
        for undo in reversed(self.cleanups):
            undo()
        self.cleanups = []
        self.tracker.stop()
        if exc is not None and not isinstance(exc, AmpHazardError):
            self._translate(exc, tb)
        return False

    def _translate(self, exc: BaseException, tb) -> None:
        code = code_for_exception(exc)
        # a check that saw the hazard first may name the code torch's message suggests
        if code is None or any(
            f.code == code or code in f.extra.get("explains", ()) for f in self._found.values()
        ):
            return
        self.report(code, f"raised {first_line(exc)}", location=traceback_location(tb),
                    _raise=False, error=type(exc).__name__, stack=[])


def monitor(mode: str = "record", checks: Optional[Iterable[str]] = None, *,
            overflow: bool = False, overflow_backward: bool = False,
            stand_in_for_cuda: bool = False) -> Monitor:
    """A :class:`Monitor`: ``with monitor() as m: ...`` or ``@monitor(mode="warn")``.
    ``stand_in_for_cuda``: report on CPU autocast what CUDA autocast would raise (AMP102)."""
    return Monitor(mode, checks, overflow=overflow, overflow_backward=overflow_backward,
                   stand_in_for_cuda=stand_in_for_cuda)
