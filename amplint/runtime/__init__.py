"""amplint.runtime -- the runtime companion of amplint (needs torch).

Static analysis cannot see dtypes, dynamic flags or code inside libraries.  This package watches
real execution and reports the same rule codes as the static linter, at the user's own
``file:line`` (the first stack frame outside torch and amplint), and it verifies that a fix keeps
the numbers.

Monitor (:mod:`amplint.runtime.monitor`)::

    import amplint.runtime as ar
    with ar.monitor() as m:              # mode="record" (default), "warn" or "raise"
        train_step(model, batch)
    for f in m.findings:                 # Finding(code, message, filename, line, extra)
        print(f)

    @ar.monitor(mode="warn")             # also a decorator
    def train_step(...): ...

    with ar.monitor(overflow=True):      # + the overflow locator (costs a check per op)
        ...

Verifier (:mod:`amplint.runtime.verify`)::

    result = ar.verify(before_fn, after_fn, code="AMP104")   # fn(device, dtype) -> {name: tensor}
    print(result.summary()); assert result.verified          # status: PASS / FAIL / ERROR

    python -m amplint.runtime verify fixtures/
    python -m amplint.runtime verify --entry smoke.py::step  # your step vs amplint --fix of it

Runtime fixes (:mod:`amplint.runtime.fixes`): :func:`cast_inputs`, :func:`keep_norm_fp32`,
:func:`half_model`, :func:`bce_fp32_island`, :func:`patch_bce_fp32`.

Pytest: add ``pytest_plugins = ["amplint.runtime.pytest_plugin"]`` to a conftest.py and use the
``amp_monitor`` fixture.
"""

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only where torch is missing
    raise ImportError("amplint.runtime needs torch: pip install 'amplint[runtime]'") from exc

from .findings import AmpHazardError, AmpHazardWarning, Finding
from .monitor import ALL_CHECKS, DEFAULT_CHECKS, Monitor, monitor
from .compare import Tolerance, TOLERANCES
from .verify import PairResult, module_runner, verify
from .fixtures import discover, verify_fixture_pair
from .fixes import bce_fp32_island, cast_inputs, half_model, keep_norm_fp32, patch_bce_fp32

__all__ = [
    "ALL_CHECKS",
    "AmpHazardError",
    "AmpHazardWarning",
    "DEFAULT_CHECKS",
    "Finding",
    "Monitor",
    "PairResult",
    "TOLERANCES",
    "Tolerance",
    "bce_fp32_island",
    "discover",
    "cast_inputs",
    "half_model",
    "keep_norm_fp32",
    "module_runner",
    "monitor",
    "patch_bce_fp32",
    "verify",
    "verify_fixture_pair",
]
