"""AMP127 and an optimizer the scaler's owner hands back, read on the installed accelerate
package (huggingface/accelerate 1.15.0: `Accelerator.backward` runs
`self.scaler.scale(loss).backward()`, `Accelerator.prepare` wraps the optimizer in an
`AcceleratedOptimizer` whose `step()` calls `self.scaler.step(self.optimizer)`).

Since round 41 the scaler protocol composes a method of a project object a local holds
(`accelerator.backward(loss)` is read in the caller as `accelerator.scaler.scale(...)`). Its
own scripts then step the optimizer `accelerator.prepare(...)` returned: right, since the
wrapper steps through the scaler, but reported as bypassing it (24 false AMP127 on accelerate's
tree, found by the lead's findings diff). An optimizer the accelerator never wrapped still
bypasses the scaler and is reported."""

from __future__ import annotations

import importlib.util
import os

import pytest
import torch

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

_SPEC = importlib.util.find_spec("accelerate")
pytestmark = pytest.mark.skipif(_SPEC is None, reason="accelerate is not installed")

FILES = ("__init__.py", "accelerator.py", "optimizer.py", "test_utils/__init__.py",
         "test_utils/scripts/__init__.py", "test_utils/scripts/test_merge_weights.py")
SCRIPT = "accelerate/test_utils/scripts/test_merge_weights.py"
PREPARE = "    train_dl, model, optimizer = accelerator.prepare(train_dl, model, optimizer)\n"


def _package(replace=()):
    root = os.path.dirname(_SPEC.origin)
    files = {}
    for name in FILES:
        path = os.path.join(root, name)
        text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        for old, new in replace:
            text = text.replace(old, new)
        files["accelerate/" + name] = text
    return files


def _amp127(files):
    results = lint_project(files, Settings.default())
    return [(path, d.line) for path, r in results.items() for d in r.diagnostics if d.code == "AMP127"]


def test_the_optimizer_prepare_wrapped_steps_through_the_scaler():
    files = _package()
    assert PREPARE in files[SCRIPT]  # the script this test reads
    assert _amp127(files) == []


def test_twin_an_optimizer_the_accelerator_never_wrapped_bypasses_the_scaler():
    files = _package(((PREPARE, "    train_dl, model = accelerator.prepare(train_dl, model)\n"),))
    found = _amp127(files)
    assert [path for path, _ in found] == [SCRIPT]


def test_premise_a_step_through_the_scaler_unscales_and_a_bare_step_does_not():
    def run(through_scaler):
        weight = torch.nn.Parameter(torch.ones(1))
        optimizer = torch.optim.SGD([weight], lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        scaler.scale((weight * 2).sum()).backward()
        if through_scaler:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        return weight.item()

    assert run(True) == pytest.approx(1 - 0.1 * 2)
    assert run(False) == pytest.approx(1 - 0.1 * 2 * 1024)
