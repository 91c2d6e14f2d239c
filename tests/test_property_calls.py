"""A call through a property (issue 26): `self.loss(output, target)` with `loss` a `@property`
runs the getter, then calls what the getter returns. The file's call graph took it for a call of
the getter alone, so nothing asked the class flow what the property holds
(amplint/analysis/project/summary.py and its `ast` twin; classvalues.py reads `self.prop` as the
getter's returns, as it already read `inst.prop`).

tests/projects/flow_classy_loss_property: facebookresearch/ClassyVision layout
(classy_vision/tasks/classification_task.py ClassificationTask with `set_loss` and the `loss`
property, `from_config` building the loss through classy_vision/losses `build_loss`,
classy_vision/trainer/local_trainer.py, classy_train.py) in a fork whose train_step runs the
forward and the loss under a CUDA autocast and whose soft-target BCE loss takes probabilities.
Twins: the loss computed on the logits; a property that returns another (MSE) loss."""

from __future__ import annotations

import importlib
import sys

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings

NAME = "flow_classy_loss_property"
HAZARD = ("classy_vision/losses/soft_target_bce.py", 16, "AMP102")
FIX = [("        probs = torch.sigmoid(output)\n        return F.binary_cross_entropy(probs,",
        "        return F.binary_cross_entropy_with_logits(output,")]


def amp102(files, value_flow=None):
    from types import SimpleNamespace
    config = SimpleNamespace(value_flow=True) if value_flow else None
    results = lint_project(files, Settings.default(), config=config)
    found = [f for f in project_findings(results) if f[2] == "AMP102"]
    return found, [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]


@pytest.mark.parametrize("value_flow", [False, True])
def test_loss_called_through_a_property_under_the_region(value_flow):
    found, messages = amp102(load(NAME), value_flow)
    assert found == [HAZARD]
    assert ("(self.loss <- build_loss(...) at classy_vision/tasks/classification_task.py:31 -> "
            "SoftTargetBinaryCrossEntropyLoss in classy_vision/losses/soft_target_bce.py; called at "
            "classy_vision/tasks/classification_task.py:39 under the autocast region at "
            "classy_vision/tasks/classification_task.py:37)") in messages[0]


def test_twin_logits_loss_is_silent():
    assert amp102(load(NAME, FIX))[0] == []


def test_twin_a_property_returning_another_loss_is_silent():
    files = load(NAME, (("        return self._loss\n", "        return torch.nn.MSELoss()\n"),))
    assert amp102(files)[0] == []


def test_the_getter_itself_still_runs_under_the_region():
    """The getter is still a same-file callee: a BCE written in the getter's body is reported."""
    files = load(NAME, (("        return self._loss\n",
                         "        torch.nn.functional.binary_cross_entropy(torch.rand(2), torch.rand(2))\n"
                         "        return self._loss\n"),))
    found = amp102(files)[0]
    assert ("classy_vision/tasks/classification_task.py", 23, "AMP102") in found


@pytest.mark.parametrize("fixed", [False, True])
def test_execution_monitor_reports_the_bce_the_property_returns(tmp_path, monkeypatch, fixed):
    """The project's own train_step on CPU bfloat16 autocast standing in for CUDA: the runtime
    monitor reports the BCE reached through the property (CUDA autocast raises on it); the
    twin runs clean."""
    torch = pytest.importorskip("torch")
    import amplint.runtime as ar
    for path, text in load(NAME, FIX if fixed else ()).items():
        target = tmp_path / path.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace('"cuda", dtype=torch.float16', '"cpu", dtype=torch.bfloat16'))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        task_module = importlib.import_module("classy_vision.tasks.classification_task")
        task = task_module.ClassificationTask.from_config({"loss": {"reduction": "mean"}})
        model = torch.nn.Linear(8, 4)
        task.set_model(model)
        task.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with ar.monitor(stand_in_for_cuda=True) as m:
            task.train_step({"input": torch.randn(3, 8), "target": torch.rand(3, 4)})
        found = [(f.code, f.filename.endswith("soft_target_bce.py"), f.line) for f in m.findings]
        assert found == ([] if fixed else [("AMP102", True, 16)])
    finally:
        for name in [n for n in sys.modules if n == "classy_vision" or n.startswith("classy_vision.")]:
            sys.modules.pop(name, None)
