"""AMP140 across files (amplint/analysis/project/half_params.py): a model one file casts to half
and passes to an optimizer helper of another file, which builds Adam over its parameters with
eps=1e-8.

tests/projects/half_slowfast_optimizer: facebookresearch/SlowFast layout (tools/train_net.py
builds the model with `slowfast.models.build_model`, halves it under a config flag and calls
`construct_optimizer(model, cfg)` of slowfast/models/optimizer.py, which sorts the parameters
into BN / other groups). Proven on CPU: the optimizer the helper builds holds float16
parameters, and one step with small gradients turns them to -inf; the fixed eps keeps them
finite. Twins: the eps fixed; the model left float32; the half model given only to the SGD
helper (no eps); a helper that rebinds its parameter before reading it (another model, a
float32 copy)."""

from __future__ import annotations

import os
import sys

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load

NAME = "half_slowfast_optimizer"
SETTINGS = Settings.default()
FINDING = (f"{NAME}/slowfast/models/optimizer.py", 14, "AMP140")
FIXED_EPS = ("eps=1e-8)", "eps=1e-4)")
NO_HALF = ("    if cfg[\"FP16\"]:\n        model.half()\n", "")
SGD_ONLY = ("optimizer = optim.construct_optimizer(model, cfg)", "optimizer = optim.construct_sgd(model, cfg)")
REBOUND = ("def construct_optimizer(model, cfg):\n",
           "def construct_optimizer(model, cfg):\n    model = cfg[\"MODEL\"]\n")
COPIED = ("def construct_optimizer(model, cfg):\n",
          "def construct_optimizer(model, cfg):\n    model = copy.deepcopy(model).float()\n")
ASSIGNED = ("        model.half()\n", "        model = model.half()\n")


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics if d.code == "AMP140")


def test_adam_over_a_model_another_file_halves_is_flagged():
    results = lint_project(load(NAME), SETTINGS)
    found = [(path, d) for path, r in results.items() for d in r.diagnostics]
    assert [(path, d.line, d.code) for path, d in found] == [FINDING]
    message = found[0][1].message
    assert "`AdamW` with eps=1e-08 over the parameters of `model`" in message
    assert "cast to float16 in tools/train_net.py at line 8, passed at tools/train_net.py:9" in message


def test_the_cast_assigned_back_is_the_same_half_model():
    assert findings(load(NAME, (ASSIGNED,))) == [FINDING]


@pytest.mark.parametrize("edit", [FIXED_EPS, NO_HALF, SGD_ONLY, REBOUND, COPIED],
                         ids=["eps-fixed", "model-float32", "sgd-only", "parameter-rebound", "float32-copy"])
def test_twins_are_silent(edit):
    files = load(NAME, (edit,))
    assert files != load(NAME)  # the edit applies
    assert findings(files) == []


torch_only = pytest.mark.torch


def _train_objects(fp16: bool, eps_fix: bool):
    """Build the project's model and optimizer as tools/train_net.py does (CPU), and take one
    AdamW step with small gradients."""
    torch = pytest.importorskip("torch")
    root = os.path.join(PROJECTS, NAME)
    sys.path.insert(0, root)
    try:
        import slowfast.models.optimizer as optim
        from slowfast.models import build_model

        cfg = {"WIDTH": 4, "NUM_CLASSES": 3, "NUM_GPUS": 0, "FP16": fp16, "BASE_LR": 1e-3, "WEIGHT_DECAY": 1e-4}
        model = build_model(cfg)
        if cfg["FP16"]:
            model.half()  # as tools/train_net.py does
        optimizer = optim.construct_optimizer(model, cfg)
        if eps_fix:
            for group in optimizer.param_groups:
                group["eps"] = 1e-4
        for p in model.parameters():
            p.grad = torch.full_like(p, 1e-4)
        optimizer.step()
        return model, optimizer
    finally:
        sys.path.remove(root)
        for name in [m for m in sys.modules if m == "slowfast" or m.startswith("slowfast.")]:
            del sys.modules[name]


@torch_only
def test_execution_the_helper_optimizes_float16_parameters_and_eps_rounds_to_zero():
    torch = pytest.importorskip("torch")
    model, optimizer = _train_objects(fp16=True, eps_fix=False)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    assert params and {p.dtype for p in params} == {torch.float16}
    assert torch.isinf(model.head.projection.weight).all()
    fixed, _ = _train_objects(fp16=True, eps_fix=True)
    assert torch.isfinite(fixed.head.projection.weight).all()
    float32, _ = _train_objects(fp16=False, eps_fix=False)
    assert torch.isfinite(float32.head.projection.weight).all()
