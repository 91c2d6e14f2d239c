"""A function passed as an argument and called through the parameter that receives it binds its
parameters (amplint/analysis/project/callback_sites.py, read by the class flow's `_bound`).

tests/projects/half_megatron_callback: NVIDIA/Megatron-LM layout (pretrain_gpt.py passes
`model_provider` and `forward_step` to `megatron.training.pretrain`, which hands `forward_step`
on through `train` to `train_step`, which calls `forward_step_func(batch, model[0])` under
`torch.autocast` with a GradScaler; `get_model` wraps each model chunk in `Float16Module`, whose
`__init__` halves it under `args.fp16` (megatron/model/module.py)). Before, `model` in
`forward_step` was a parameter nothing bound, so the region never reached `Float16Module.forward`
and the wrapper's half cast was not known to meet autocast. Proven on CPU: the wrapped model's
weights are float16 and `scaler.unscale_` raises 'Attempting to unscale FP16 gradients.'.
Twins: the wrapper keeps the model float32; the step runs outside autocast; the callback is
handed a model the fp32 wrapper holds."""

from __future__ import annotations

import os
import sys
import types

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import PROJECTS, load

NAME = "half_megatron_callback"
SETTINGS = Settings.default()
FINDINGS = [(f"{NAME}/megatron/model/module.py", 16, "AMP103"), (f"{NAME}/megatron/model/module.py", 18, "AMP103")]
NO_HALF = (("module.half())", "module)"), ("module.bfloat16())", "module)"))
NO_REGION = (("    with torch.autocast(args.device, dtype=torch.float16, enabled=args.fp16):\n",
              "    if True:\n"),)
FP32_WRAPPER = (("from megatron.model.module import Float16Module\n",
                 "from megatron.model.module import Float16Module, Float32Module\n"),
                ("[Float16Module(model_module, args) for model_module in model]",
                 "[Float32Module(model_module) for model_module in model]"),
                ("    return model\n", "    Float16Module(model[0], args).state_dict_for_save_checkpoint()\n    return model\n"))


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics)


def test_a_model_a_callback_parameter_receives_runs_under_the_callers_region():
    results = lint_project(load(NAME), SETTINGS)
    found = [(path, d) for path, r in results.items() for d in r.diagnostics]
    assert sorted((path, d.line, d.code) for path, d in found) == FINDINGS
    message = found[0][1].message
    assert "`Float16Module.forward` runs it under autocast" in message
    assert "called at pretrain_gpt.py:11 in code that runs under the autocast region at megatron/training.py:14" in message


def test_the_callback_parameter_holds_the_wrapped_model():
    files = {path[len(NAME) + 1:]: text for path, text in load(NAME).items()}
    project = build(files, SETTINGS, value_flow=False)
    held = project.flow.values("pretrain_gpt.py", "forward_step", ("local", "model"))
    # `model` is rebound in get_model, and the class flow is flow-insensitive: both classes
    assert {(t[0], t[2]) for t in held} == {("inst", "Float16Module"), ("inst", "GPTModel")}


@pytest.mark.parametrize("edits", [NO_HALF, NO_REGION, FP32_WRAPPER], ids=["no-half", "no-region", "fp32-wrapper"])
def test_twins_are_silent(edits):
    files = load(NAME, edits)
    assert files != load(NAME)
    assert findings(files) == []


def test_a_parameter_the_middle_function_rebinds_is_not_followed():
    files = {path[len(NAME) + 1:]: text for path, text in load(NAME, ((
        "def train(forward_step_func, model, optimizer, scaler, batches, args):\n",
        "def train(forward_step_func, model, optimizer, scaler, batches, args):\n"
        "    forward_step_func = args.step_func\n"),)).items()}
    project = build(files, SETTINGS, value_flow=False)
    assert project.flow.values("pretrain_gpt.py", "forward_step", ("local", "model")) == {}


def _pretrain(fp16: bool):
    """Run pretrain_gpt.main on CPU with one batch; the wrapped model and the error, if any."""
    torch = pytest.importorskip("torch")
    root = os.path.join(PROJECTS, NAME)
    sys.path.insert(0, root)
    try:
        import megatron.training as training
        import pretrain_gpt

        made = []
        get_model = training.get_model
        training.get_model = lambda *a: made.append(get_model(*a)) or made[-1]
        args = types.SimpleNamespace(vocab_size=16, hidden_size=8, num_layers=2, fp16=fp16, bf16=False,
                                     device="cpu", lr=1e-3, clip_grad=1.0)
        tokens = torch.randint(0, 16, (2, 5))
        try:
            pretrain_gpt.main(args, [(tokens, tokens)])
            error = None
        except ValueError as caught:
            error = str(caught)
        return made[0][0], error
    finally:
        sys.path.remove(root)
        for name in [m for m in sys.modules if m in ("megatron", "pretrain_gpt") or m.startswith("megatron.")]:
            del sys.modules[name]


@pytest.mark.torch
def test_execution_the_wrapped_model_is_half_and_unscale_raises():
    torch = pytest.importorskip("torch")
    wrapped, error = _pretrain(fp16=True)
    assert {p.dtype for p in wrapped.module.parameters()} == {torch.float16}
    assert error == "Attempting to unscale FP16 gradients."
    wrapped, error = _pretrain(fp16=False)
    assert {p.dtype for p in wrapped.module.parameters()} == {torch.float32}
    assert error is None


# Files that name `forward_step` without passing it (Megatron-LM's tools/ and tests call their
# own `forward_step(...)` and define one): the passing pattern is not searched in them (issue 34)
NAMING_ONLY = {
    "tools/run_text_generation_server.py": (
        "def forward_step(batch, model):\n    return model(batch)\n\n\n"
        "def generate(model, batches):\n    return [forward_step(b, model) for b in batches]\n"
    ),
    "tests/test_forward_step.py": (
        "from pretrain_gpt import forward_step\n\n\n"
        "def test_forward_step(model, batch):\n    assert forward_step(batch, model) is not None\n"
    ),
}


def test_the_passing_pattern_is_searched_only_where_the_name_is_followed_by_a_comma_or_parenthesis(monkeypatch):
    from amplint.analysis.project import callback_sites

    searched = []
    compile_ = callback_sites.re.compile

    class Counted:
        def __init__(self, pattern):
            self.pattern = compile_(pattern)

        def search(self, text):
            searched.append(text)
            return self.pattern.search(text)

    def counting_compile(pattern, *args):
        return Counted(pattern) if pattern.startswith("[(,]") else compile_(pattern, *args)

    monkeypatch.setattr(callback_sites.re, "compile", counting_compile)
    files = {path[len(NAME) + 1:]: text for path, text in load(NAME).items()}
    files.update(NAMING_ONLY)
    project = build(files, SETTINGS, value_flow=False)
    held = project.flow.values("pretrain_gpt.py", "forward_step", ("local", "model"))
    assert {(t[0], t[2]) for t in held} == {("inst", "Float16Module"), ("inst", "GPTModel")}
    assert searched and not any(text in NAMING_ONLY.values() for text in searched)
