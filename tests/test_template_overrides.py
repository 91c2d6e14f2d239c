"""`self.m()` in a method of a base class whose own `m` is abstract (`raise NotImplementedError`,
`@abstractmethod`) or missing runs a subclass's `m` (issue 26, the class hierarchy): the call
resolves to the one concrete `m` that every subclass running the calling method agrees on, in
the same file (facts/subclass_overrides.py, through the call graph) and across files (a
"template" call of the scaler summaries, resolved by project.dispatch). Exact or nothing: two
subclasses with different `m`s give no callee, and a subclass that overrides the calling method
itself does not run the call. A concrete `m` of the base is left as it was (the base's)."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
PROJECT = "template_d2_run_step"
SCALED = ("        losses.backward()\n", "        self.grad_scaler.scale(losses).backward()\n")

SOLVER = (
    "import abc\n"
    "\n"
    "import torch\n"
    "\n"
    "\n"
    "class BaseSolver(abc.ABC):\n"
    "    def __init__(self, model):\n"
    "        self.model = model\n"
    "        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "\n"
    "    @abc.abstractmethod\n"
    "    def run_step(self, batch):\n"
    "        \"\"\"One forward/backward of a batch.\"\"\"\n"
    "\n"
    "    def train_epoch(self, loader):\n"
    "        for batch in loader:\n"
    "            with torch.autocast(\"cpu\", dtype=torch.bfloat16):\n"
    "                self.run_step(batch=batch)\n"
    "            self.optimizer.step()\n"
    "\n"
    "\n"
    "class Solver(BaseSolver):\n"
    "    def run_step(self, batch):\n"
    "        loss = self.model(batch).float().mean()\n"
    "        loss.backward()\n"
)
HOOK = "    @abc.abstractmethod\n    def run_step(self, batch):\n        \"\"\"One forward/backward of a batch.\"\"\"\n\n"
# the base's hook raises instead of being declared abstract
RAISES = (HOOK, "    def run_step(self, batch):\n        raise NotImplementedError(\"one iteration\")\n\n")
# the base does not define the hook at all
MISSING = (HOOK, "")
# a subclass of the subclass inherits its hook: they agree
AGREE = ("", "\n\nclass EmaSolver(Solver):\n    def ema(self):\n        pass\n")
# a second subclass with another hook: which runs depends on the instance, nothing is taken
DISAGREE = ("", "\n\nclass EvalSolver(BaseSolver):\n    def run_step(self, batch):\n        return self.model(batch)\n")
# the subclass overrides the calling method too: the base's loop never runs its hook
OWN_LOOP = ("", "\n    def train_epoch(self, loader):\n        for batch in loader:\n"
                "            self.run_step(batch)\n            self.optimizer.step()\n")
# the base's hook is concrete: the call stays the base's (no guess at the instance's class)
CONCRETE = (HOOK, "    def run_step(self, batch):\n        return self.model(batch)\n\n")


def _source(*replace):
    text = SOLVER
    for old, new in replace:
        if old:
            assert old in text
            text = text.replace(old, new)
        else:
            text += new
    return text


def _codes(source):
    return [(d.line, d.code) for d in lint_source("solver.py", source, SETTINGS).diagnostics]


@pytest.mark.parametrize("replace", [(), (RAISES,), (MISSING,), (AGREE,), (RAISES, AGREE)])
def test_the_hook_a_base_calls_is_the_subclass_override(replace):
    source = _source(*replace)
    line = source.splitlines().index("        loss.backward()") + 1
    assert (line, "AMP104") in _codes(source)


@pytest.mark.parametrize("replace", [(DISAGREE,), (RAISES, DISAGREE), (OWN_LOOP,), (CONCRETE,)])
def test_an_override_that_is_not_the_only_one_run_stays_silent(replace):
    assert [c for c in _codes(_source(*replace)) if c[1] == "AMP104"] == []


@pytest.mark.torch
def test_the_base_loop_runs_the_subclass_hook_under_autocast():
    torch = pytest.importorskip("torch")
    seen = []
    scope = {}
    exec(compile(_source(), "solver.py", "exec"), scope)

    class Probe(scope["Solver"]):
        def run_step(self, batch):
            seen.append(torch.is_autocast_enabled("cpu"))
            super().run_step(batch)

    Probe(torch.nn.Linear(4, 4)).train_epoch([torch.randn(2, 4)])
    assert seen == [True]  # the subclass's backward runs inside the base's region


def test_a_subclass_in_another_file_implements_the_step():
    # facebookresearch/detectron2 laid out with the GradScaler step moved into
    # TrainerBase.train (d2/engine/train_loop.py), whose `run_step` raises; the AMPTrainer of
    # tools/plain_train_net.py implements it with an unscaled `losses.backward()`
    results = lint_project(load(PROJECT), SETTINGS)
    assert project_findings(results) == [("d2/engine/train_loop.py", 21, "AMP122")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics]
    assert "backward of an unscaled loss (at tools/plain_train_net.py:12, through this call)" in message
    assert project_findings(lint_project(load(PROJECT, [SCALED]), SETTINGS)) == []  # the clean twin


def test_a_second_subclass_in_a_third_file_that_disagrees_gives_nothing():
    files = load(PROJECT)
    files[f"{PROJECT}/tools/lazyconfig_train_net.py"] = (
        "import torch\n\nfrom d2.engine.train_loop import TrainerBase\n\n\n"
        "class SimpleTrainer(TrainerBase):\n"
        "    def run_step(self):\n"
        "        losses = sum(self.model(next(self._data_loader_iter)).values())\n"
        "        self.grad_scaler.scale(losses).backward()\n"
    )
    assert project_findings(lint_project(files, SETTINGS)) == []
    # the same subclass overriding `train` too never runs the base's loop: AMPTrainer's is the only one
    files[f"{PROJECT}/tools/lazyconfig_train_net.py"] += (
        "\n    def train(self, start_iter, max_iter):\n"
        "        for _ in range(start_iter, max_iter):\n"
        "            self.run_step()\n"
    )
    assert project_findings(lint_project(files, SETTINGS)) == [("d2/engine/train_loop.py", 21, "AMP122")]


@pytest.mark.torch
def test_the_unscaled_step_raises_under_torch():
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        losses = model(torch.randn(2, 4)).float().sum()
    losses.backward()
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(optimizer)
