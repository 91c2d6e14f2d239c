"""A step of the object that holds the scaler is that object's own step, not torch's: when the
scaled backward ran through a wrapper (`self.optim.backward(loss)` doing
`self._scaler.scale(loss).backward()`), `self.optim.step()` is the wrapper's method, which
steps through `self._scaler` (found reading fresh real trees, r17-realread: AMP127 in
OpenNMT/OpenNMT-py's onmt/trainer.py, `self.optim.step()` after `self.optim.backward(loss)`).

tests/projects/step_onmt_optimizer_wrapper: OpenNMT-py layout (onmt/utils/optimizers.py the
`Optimizer` wrapper holding the GradScaler, onmt/trainer.py the `Trainer` with its autocast,
onmt/train_single.py wiring them). amplint/analysis/rules/amp127_step_bypasses_scaler.py. Twin,
reported: the wrapped torch optimizer stepped directly (`self.optim._optimizer.step()`), which
does bypass the scaler.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "step_onmt_optimizer_wrapper"


def amp127(*edits):
    return code_findings(load(NAME, edits), "AMP127")[0]


def test_the_wrappers_own_step_is_silent():
    assert amp127() == []


def test_twin_the_wrapped_optimizer_stepped_directly_is_reported():
    edit = ("        self.optim.step()\n", "        self.optim._optimizer.step()\n")
    assert amp127(edit) == [("onmt/trainer.py", 23, "AMP127")]
