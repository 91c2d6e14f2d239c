"""AMP103 across files through a factory chain (amplint/analysis/project/half_inplace.py, read by
half_returns.py): a helper that halves its parameter in place, a factory that returns the model
in a tuple, and a float32 cast back only on some paths.

tests/projects/half_clip_convert: openai/CLIP layout (clip/clip.py `load()` returns `(model,
preprocess)` from `build_model()` of clip/model.py, which calls `convert_weights(model)`, whose
body runs `model.half()`; `load` floats it back only for `str(device) == "cpu"`), with a
fine-tuning script of the kind CLIP's users write: `model, preprocess = clip.load(...)`, then
autocast + GradScaler. Proven on CPU: the loaded model's weights are float16 unless the device
is exactly "cpu", and the GradScaler's `unscale_` then raises. Twins: the float32 cast back on
every path; a caller passing `device="cpu"` (or leaving a "cpu" default), which `load` floats
back; `build_model` not converting; a helper that halves a copy, not its parameter."""

from __future__ import annotations

import os
import sys
import types

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load

NAME = "half_clip_convert"
SETTINGS = Settings.default()
FINDING = (f"{NAME}/clip/model.py", 44, "AMP103")
ALWAYS_FLOAT = ('    if str(device) == "cpu":\n        model.float()\n', "    model.float()\n")
NOT_CONVERTED = ("    convert_weights(model)\n", "")
CPU_CALLER = ("clip.load(args.model, device=device)", 'clip.load(args.model, device="cpu")')
CPU_DEFAULT = (("clip.load(args.model, device=device)", "clip.load(args.model)"),
               ('device: Union[str, torch.device] = "cuda"', 'device: Union[str, torch.device] = "cpu"'))
HALVES_A_COPY = ("    model.half()\n", "    model = copy.deepcopy(model)\n    model.half()\n    return model\n")


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics)


def test_a_model_a_helper_halves_in_place_and_a_caller_trains_under_autocast():
    results = lint_project(load(NAME), SETTINGS)
    found = [(path, d) for path, r in results.items() for d in r.diagnostics]
    assert sorted((path, d.line, d.code) for path, d in found) == [FINDING]
    message = found[0][1].message
    assert "`convert_weights` halves in place the model `build_model` hands it" in message
    assert "comes back from `clip.load(args.model, device=device) at finetune.py:11`" in message
    assert "autocast region at finetune.py:18" in message


@pytest.mark.parametrize("edits", [(ALWAYS_FLOAT,), (NOT_CONVERTED,), (HALVES_A_COPY,), (CPU_CALLER,), CPU_DEFAULT],
                         ids=["float-on-every-path", "not-converted", "halves-a-copy", "cpu-caller", "cpu-default"])
def test_twins_are_silent(edits):
    files = load(NAME, edits)
    assert files != load(NAME)
    assert findings(files) == []


def test_the_default_left_on_a_cuda_device_keeps_the_model_half():
    files = load(NAME, (("clip.load(args.model, device=device)", "clip.load(args.model)"),))
    assert findings(files) == [FINDING]


def _finetune(device: str):
    torch = pytest.importorskip("torch")
    root = os.path.join(PROJECTS, NAME)
    sys.path.insert(0, root)
    try:
        import finetune

        args = types.SimpleNamespace(model="tiny", device=device, lr=1e-3)
        batch = (torch.rand(2, 3, 8, 8), torch.randint(0, 32, (2, 5)))
        loaded, _ = finetune.clip.load("tiny", device=torch.device(device))
        dtypes = {p.dtype for p in loaded.parameters()}
        try:
            finetune.main(args, [batch])
            error = None
        except ValueError as caught:
            error = str(caught)
        return dtypes, error
    finally:
        sys.path.remove(root)
        for name in [m for m in sys.modules if m in ("clip", "finetune") or m.startswith("clip.")]:
            del sys.modules[name]


@pytest.mark.torch
def test_execution_the_loaded_model_is_half_and_unscale_raises():
    torch = pytest.importorskip("torch")
    # "cpu:0" is not the string "cpu": `load` keeps the model as convert_weights left it
    dtypes, error = _finetune("cpu:0")
    assert dtypes == {torch.float16}
    assert error == "Attempting to unscale FP16 gradients."
    dtypes, error = _finetune("cpu")
    assert dtypes == {torch.float32}
    assert error is None
