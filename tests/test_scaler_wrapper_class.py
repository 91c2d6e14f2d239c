"""A script's own scaler wrapper class is not a GradScaler (r16b-scalerfp).

tests/projects/scaler_beit_wrapper: a single-file fine-tuning script in the shape of the
BEiT/VideoMAE forks that inline utils.py's `NativeScalerWithGradNormCount` (a plain class
holding `self._scaler = GradScaler()`, whose `__call__` and `step(loss, optimizer, ...)` scale,
step and update). `loss_scaler = NativeScalerWithGradNormCount()` then
`loss_scaler.step(loss, optimizer)` was taken for a GradScaler by its name: main reported AMP121
(no `loss_scaler.update()`) and AMP125 (`optimizer` read as a positional closure) at the call.
Now a name bound to a construction of a base-less class of the file is not a scaler by its name
(facts/scaler_wrappers.py); the wrapper's own `self._scaler` protocol is still checked.
Twin: the wrapper never calls `self._scaler.update()`: reported in its `step`.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_beit_wrapper"
SCRIPT = "run_finetuning.py"


def findings(files, code):
    return code_findings(files, code)[0]


def test_the_wrappers_step_is_not_a_grad_scalers():
    files = load(NAME)
    assert findings(files, "AMP121") == []
    assert findings(files, "AMP125") == []


def test_twin_the_wrapper_itself_never_updates():
    files = load(NAME, (("            self._scaler.update()\n", ""), ("        self._scaler.update()\n", "")))
    assert findings(files, "AMP121") == [(SCRIPT, 20, "AMP121"), (SCRIPT, 25, "AMP121")]
    assert findings(files, "AMP125") == []
