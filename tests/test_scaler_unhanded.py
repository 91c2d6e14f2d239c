"""A helper class whose method steps `self.scaler` that no construction in the project hands a
scaler: its own file has no protocol to report (project/scaler_unhanded.py,
facts/scaler_unhanded.py).

tests/projects/scaler_wlm_unhanded_stepper: pytorch/examples' word_language_model layout
(main.py's argparse script with `get_batch` and `train`, model.py's `RNNModel`, a utils.py with
`repackage_hidden`) in a fork that moves clipping and the optimizer step into
`ClippedStepper(model, optimizer, clip, scaler=None)`, stepping through the scaler "when one is
given (the caller updates it)". main.py trains in bf16 and builds
`ClippedStepper(net, optimizer, args.clip)` without one: `self.scaler` is always `None`, and
AMP121 at `self.scaler.step(...)` (utils.py:25, reported before) was a false positive.

Each test checks the project is silent and a variant keeps the finding: a construction that
hands a GradScaler (and never updates it: the finding is true), an instance passed on, a class
a dict names, `**kwargs`.
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

NAME = "scaler_wlm_unhanded_stepper"
BUILT = "    stepper = ClippedStepper(net, optimizer, args.clip)\n"
STEP = ("utils.py", 25, "AMP121")


def amp121(files):
    return code_findings(files, "AMP121")[0]


def silent():
    assert amp121(load(NAME)) == []
    assert code_findings(load(NAME), "AMP127")[0] == []


def test_no_construction_hands_a_scaler_so_the_helper_is_silent():
    silent()


def test_explicit_none_is_no_scaler():
    files = load(NAME, ((BUILT, "    stepper = ClippedStepper(net, optimizer, args.clip, scaler=None)\n"),))
    assert amp121(files) == []
    silent()


def test_construction_that_hands_a_grad_scaler_keeps_the_finding():
    silent()
    files = load(NAME, (
        (BUILT, "    scaler = torch.amp.GradScaler('cuda')\n"
                "    stepper = ClippedStepper(net, optimizer, args.clip, scaler)\n"),
        ("        loss.backward()\n", "        scaler.scale(loss).backward()\n"),
    ))
    assert amp121(files) == [STEP]


def test_construction_by_keyword_in_another_function_keeps_the_finding():
    silent()
    files = load(NAME, (("optimizer = torch.optim.SGD(", "def finetune(optimizer, scaler):\n"
                         "    return ClippedStepper(net, optimizer, args.clip, scaler=scaler).step()\n\n\n"
                         "optimizer = torch.optim.SGD("),))
    assert amp121(files) == [STEP]


def test_instance_passed_on_is_not_read():
    silent()  # the callee may set its scaler
    files = load(NAME, ((BUILT, BUILT + "    print(stepper)\n"),))
    assert amp121(files) == [STEP]


def test_class_named_in_a_dict_is_not_read():
    silent()
    files = load(NAME, (("criterion = nn.NLLLoss()\n",
                         "criterion = nn.NLLLoss()\nSTEPPERS = {'clipped': ClippedStepper}\n"),))
    assert amp121(files) == [STEP]


def test_star_arguments_are_not_read():
    silent()
    files = load(NAME, ((BUILT, "    stepper = ClippedStepper(net, optimizer, args.clip, **vars(args))\n"),))
    assert amp121(files) == [STEP]


def test_class_with_an_alternative_constructor_is_not_read():
    silent()  # `cls(model, optimizer, clip, scaler)` makes an instance no name of the class shows
    files = load(NAME, (("    def step(self):\n",
                         "    @classmethod\n    def with_scaler(cls, model, optimizer, clip, scaler):\n"
                         "        return cls(model, optimizer, clip, scaler)\n\n    def step(self):\n"),))
    assert amp121(files) == [("utils.py", 29, "AMP121")]


def test_class_that_sets_another_instance_s_scaler_is_not_read():
    silent()
    files = load(NAME, (("    def step(self):\n",
                         "    def share(self, other):\n        other.scaler = self.scaler\n\n    def step(self):\n"),))
    assert amp121(files) == [("utils.py", 28, "AMP121")]


def test_a_class_the_project_never_constructs_keeps_the_finding():
    """The helper linted as a library (its file without main.py): its users construct it
    outside the tree and may hand it a scaler, so no construction is not "no scaler"."""
    silent()
    library = {path: text for path, text in load(NAME).items() if not path.endswith("main.py")}
    assert amp121(library) == [STEP]


def test_an_instance_returned_by_a_method_is_not_read():
    """`ClippedStepper(...).ready()` may return the instance itself: its caller can then set
    the scaler (round 49's review)."""
    silent()
    files = load(NAME, (
        ("    def step(self):\n", "    def ready(self):\n        return self\n\n    def step(self):\n"),
        (BUILT, "    stepper = ClippedStepper(net, optimizer, args.clip).ready()\n"),
    ))
    assert amp121(files) == [("utils.py", 28, "AMP121")]


def test_a_class_that_hands_itself_out_is_not_read():
    silent()
    files = load(NAME, (("        self.scaler = scaler\n",
                         "        self.scaler = scaler\n        model.stepper = self\n"),))
    assert amp121(files) == [("utils.py", 26, "AMP121")]


@pytest.mark.parametrize("store", [
    "stepper.scaler = torch.amp.GradScaler('cuda')",
    "stepper.scaler: torch.amp.GradScaler = torch.amp.GradScaler('cuda')",
    "stepper.scaler, started = torch.amp.GradScaler('cuda'), True",
    "setattr(stepper, 'scaler', torch.amp.GradScaler('cuda'))",
])
def test_a_scaler_set_on_the_instance_in_another_file_keeps_the_finding(store):
    silent()
    files = load(NAME, ((BUILT, BUILT + "    " + store + "\n"),))
    assert amp121(files) == [STEP]
