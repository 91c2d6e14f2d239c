"""The GradScaler protocol through a method of another file's helper class called on an
instance the caller constructs: what the constructor stored (project/scaler_stored.py, the
callee's side; facts/scaler_stored.py, the constructor call).

tests/projects/scaler_cifar_stored_stepper: kuangliu/pytorch-cifar layout (main.py `train`,
utils.py `progress_bar`, models/resnet.py `ResNet18`) in a fork that adds AMP and gradient
accumulation through `OptimizerStepper(optimizer, accum=1, scaler=None)` in utils.py. main.py
builds `stepper = OptimizerStepper(optimizer, accum=args.accum)` without the scaler, so
`stepper.step(batch_idx)` runs the plain `self.optimizer.step()` arm on gradients that
`scaler.scale(loss).backward()` made: AMP127 at the call, naming main.py's `optimizer`.

Each test checks the hazard is found and a variant stays silent: the twin that hands the scaler
(by keyword or position), an instance the function passes on, one a factory makes, a class
that stores `self.scaler` again elsewhere, a class with a base.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_cifar_stored_stepper"
CALL = ("main.py", 26, "AMP127")
BUILT = "    stepper = OptimizerStepper(optimizer, accum=args.accum)\n"


def amp(files, code="AMP127"):
    return code_findings(files, code)[0]


def hazard_found():
    found, results = code_findings(load(NAME), "AMP127")
    assert found == [CALL]
    return next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP127")


def test_constructor_leaves_the_scaler_unset_so_the_plain_step_runs():
    message = hazard_found()
    assert "`optimizer.step()` (at utils.py:29, through this call, which leaves `stepper.scaler` at its " \
           "default `None`)" in message
    assert "use `scaler.step(optimizer)`" in message


def test_twin_hands_the_scaler_by_keyword_is_silent():
    hazard_found()
    files = load(NAME, ((BUILT, "    stepper = OptimizerStepper(optimizer, accum=args.accum, scaler=scaler)\n"),))
    assert amp(files) == []
    assert amp(files, "AMP121") == []


def test_twin_hands_the_scaler_by_position_is_silent():
    hazard_found()
    files = load(NAME, ((BUILT, "    stepper = OptimizerStepper(optimizer, args.accum, scaler)\n"),))
    assert amp(files) == []
    assert amp(files, "AMP121") == []


def test_instance_passed_on_is_not_read():
    hazard_found()  # the callee may store another scaler in it
    files = load(NAME, ((BUILT, BUILT + "    attach_scaler(stepper, scaler)\n"),))
    assert amp(files) == []


def test_instance_made_by_a_factory_is_not_read():
    hazard_found()
    files = load(NAME, (
        (BUILT, "    stepper = make_stepper(optimizer, accum=args.accum)\n"),
        ("from utils import OptimizerStepper, progress_bar\n", "from utils import make_stepper, progress_bar\n"),
        ("class OptimizerStepper(object):\n",
         "def make_stepper(optimizer, accum=1):\n    return OptimizerStepper(optimizer, accum)\n\n\n"
         "class OptimizerStepper(object):\n"),
    ))
    assert amp(files) == []


def test_class_that_stores_the_scaler_again_is_not_read():
    hazard_found()
    files = load(NAME, (("    def step(self, batch_idx):\n",
                         "    def attach(self, scaler):\n        self.scaler = scaler\n\n"
                         "    def step(self, batch_idx):\n"),))
    assert amp(files) == []


def test_class_with_a_base_is_not_read():
    hazard_found()  # a base's method may store the attribute
    files = load(NAME, (("class OptimizerStepper(object):\n", "class OptimizerStepper(Stepper):\n"),
                        ("import time\n", "import time\n\nfrom base import Stepper\n")))
    assert amp(files) == []
