"""A same-file helper `def optimizer_step(optimizer, scaler=None)` called without the scaler:
the call runs the plain `optimizer.step()` arm, as it does when the helper lives in another
file (facts/scaler_left.py: the scaler step of the arm the call leaves dead is not one of this
path's steps).

tests/projects/scaler_mnist_step_helper: pytorch/examples' mnist/main.py layout (`Net`,
`train(args, model, device, train_loader, optimizer, epoch)`, `main()` with argparse and
`StepLR`) in a fork that adds AMP and moves the step into `optimizer_step(optimizer,
scaler=None)` beside `train`. `train` calls `optimizer_step(optimizer)` after
`scaler.scale(loss).backward()`: AMP127 at the call. The twin hands the scaler and is silent.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_mnist_step_helper"
CALL = "        optimizer_step(optimizer)\n"
HELPER_START = "def optimizer_step(optimizer, scaler=None):\n"
HELPER_END = "    optimizer.zero_grad()\n\n\n"


def amp127(files):
    found, results = code_findings(files, "AMP127")
    messages = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP127"]
    return found, messages


def test_same_file_helper_left_without_the_scaler_runs_the_plain_step():
    found, messages = amp127(load(NAME))
    assert found == [("main.py", 42, "AMP127")]
    assert "`optimizer.step()` (line 30, through this call, which leaves `scaler` at its default `None`)" \
        in messages[0]


def test_twin_that_hands_the_scaler_is_silent():
    assert amp127(load(NAME))[0]  # the hazard
    files = load(NAME, ((CALL, "        optimizer_step(optimizer, scaler)\n"),))
    assert amp127(files)[0] == []
    assert code_findings(files, "AMP121")[0] == []


def test_same_file_and_cross_file_helpers_agree():
    """The helper moved to utils.py gives the same finding at the same call."""
    (main,) = load(NAME).items()
    text = main[1]
    start, end = text.index(HELPER_START), text.index(HELPER_END) + len(HELPER_END)
    helper = "import torch\n\n\n" + text[start:end].rstrip() + "\n"
    rest = text[:start] + text[end:]
    rest = rest.replace("from torch.optim.lr_scheduler import StepLR\n",
                        "from torch.optim.lr_scheduler import StepLR\n\nfrom utils import optimizer_step\n")
    line = rest.splitlines().index(CALL.rstrip("\n")) + 1
    split = {f"{NAME}/main.py": rest, f"{NAME}/utils.py": helper}
    assert amp127(split)[0] == [("main.py", line, "AMP127")]
    assert amp127(load(NAME))[0] == [("main.py", 42, "AMP127")]

