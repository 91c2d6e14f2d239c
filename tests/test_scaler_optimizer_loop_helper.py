"""A helper steps each of its optimizers in a loop over them, with the GradScaler its caller passes
in, and the caller updates once after the call: GradScaler's documented multi-optimizer pattern
(several `step`s, one per optimizer, then one `update()`), split over two methods and two files.
Neither the helper ("step without update": the update is its caller's, after the call) nor the
caller ("runs every iteration but update only after the loop": the loop is the callee's, over
optimizers) is a hazard.

tests/projects/scaler_nerfstudio_optimizers: nerfstudio-project/nerfstudio layout
(nerfstudio/engine/optimizers.py `Optimizers.optimizer_scaler_step_all(grad_scaler)` stepping
`for param_group, optimizer in self.optimizers.items()`, and `..._step_some(grad_scaler, groups)`
rebinding `optimizer = self.optimizers[group]` in its loop; nerfstudio/engine/trainer.py
`Trainer.train_iteration` calling it through `self.optimizers`, then `self.grad_scaler.update()`).

Twins: the helper's loop steps the same optimizer on every iteration (reported, in the helper and
at the caller's call); no method of the trainer updates (reported at the call in the loop).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_nerfstudio_optimizers"
OPTIMIZERS = f"{NAME}/nerfstudio/engine/optimizers.py"
TRAINER = f"{NAME}/nerfstudio/engine/trainer.py"


def amp121(files):
    return sorted((f[0], f[1]) for f in code_findings(files, "AMP121")[0])


def test_steps_over_the_optimizers_then_one_update_are_silent():
    assert amp121(load(NAME)) == []


def test_one_file_variation_is_silent():
    files = load(NAME)
    helper = files.pop(OPTIMIZERS)
    trainer = files[TRAINER].replace("from nerfstudio.engine.optimizers import Optimizers\n", "")
    files[TRAINER] = helper + "\n\n" + trainer
    assert amp121(files) == []


def test_twin_same_optimizer_each_iteration_is_reported():
    same = ("grad_scaler.step(optimizer=optimizer)", 'grad_scaler.step(optimizer=self.optimizers["fields"])')
    found = amp121(load(NAME, (same,)))
    assert (OPTIMIZERS.split("/", 1)[1], 33) in found
    assert (TRAINER.split("/", 1)[1], 31) in found
    assert all(line in (31, 33) for _, line in found)


def test_twin_never_updated_is_reported_at_the_call():
    found = amp121(load(NAME, (("        self.grad_scaler.update()\n", ""),)))
    assert found == [(TRAINER.split("/", 1)[1], 38)]  # `self.train_iteration(...)` in `train`
