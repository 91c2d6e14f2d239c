"""AMP121 at a helper class's `self.scaler.step(...)` when the caller handed the scaler to the
constructor and updates it itself (project/scaler_constructed.py, read by
scaler_resolution._instance_updates).

tests/projects/scaler_cifar_stored_stepper: kuangliu/pytorch-cifar layout (main.py `train`,
utils.py `OptimizerStepper(optimizer, accum=1, scaler=None)`). Here its `step` leaves the update
to the caller, as EfficientNet-style `GradAccumulator.maybe_step` helpers do: main.py builds
`stepper = OptimizerStepper(optimizer, accum=args.accum, scaler=scaler)`, calls
`stepper.step(batch_idx)` and then `scaler.update()`. The update of the scaler the class steps is
the caller's: no AMP121. The finding stays where the caller does not update that scaler, or where
the instance's scaler cannot be told (passed on, rebound).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_cifar_stored_stepper"
STEP = ("utils.py", 26, "AMP121")
HANDED = (
    ("    stepper = OptimizerStepper(optimizer, accum=args.accum)\n",
     "    stepper = OptimizerStepper(optimizer, accum=args.accum, scaler=scaler)\n"),
    ("            self.scaler.step(self.optimizer)\n            self.scaler.update()\n",
     "            self.scaler.step(self.optimizer)\n"),
)
CALLED = "        stepper.step(batch_idx)\n"


def amp121(*replace):
    return code_findings(load(NAME, HANDED + tuple(replace)), "AMP121")[0]


def test_a_caller_that_hands_the_scaler_and_never_updates_it_keeps_the_finding():
    assert amp121() == [STEP]


def test_the_caller_updating_the_scaler_it_handed_is_the_update():
    assert amp121() == [STEP]
    assert amp121((CALLED, CALLED + "        scaler.update()\n")) == []


def test_handed_by_position_and_updated_is_silent():
    assert amp121(
        ("accum=args.accum, scaler=scaler)", "args.accum, scaler)"),
        (CALLED, CALLED + "        scaler.update()\n"),
    ) == []


def test_updating_another_scaler_keeps_the_finding():
    assert amp121(
        ("    train_loss = 0\n", "    other = torch.amp.GradScaler('cuda')\n    train_loss = 0\n"),
        (CALLED, CALLED + "        other.update()\n"),
    ) == [STEP]


def test_an_instance_passed_on_keeps_the_finding():
    # the callee may store another scaler in it
    assert amp121(
        (CALLED, CALLED + "        scaler.update()\n        progress_bar(stepper, 0)\n"),
    ) == [STEP]


def test_a_scaler_bound_twice_in_the_caller_keeps_the_finding():
    # which of the two the constructor got is not told by the name
    assert amp121(
        (CALLED, CALLED + "        scaler.update()\n"),
        ("    stepper = OptimizerStepper(", "    scaler = torch.amp.GradScaler('cuda')\n    stepper = OptimizerStepper("),
    ) == [STEP]
