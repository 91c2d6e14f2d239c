"""A scaler wrapper object handed to the training function of another file (r17-scaler).

The engine receives `loss_scaler` as a parameter; its caller made it from the project's
`NativeScalerWithGradNormCount` (a plain class holding `self._scaler = GradScaler(...)`). The
engine file never makes it, so by its name and the methods it is sent it was taken for a
GradScaler: `loss_scaler.step(...)` had no `loss_scaler.update()` (false AMP121), a
`loss_scaler.step(loss, optimizer)` passed a closure (false AMP125), and a clip between the
wrapper's `backward(loss)` and `step(optimizer)` was left to the callers, who never saw it
(missed AMP120). Now the protocol summary asks the project (the class flow) what the parameter
holds; where it is one project class whose methods delegate to the scaler it holds, the calls
compose those methods' events (`loss_scaler._scaler`), exactly as for a method of any object.

tests/projects/scaler_convnext_wrapper_clip: facebookresearch/ConvNeXt layout (main.py,
engine.py `train_one_epoch(..., loss_scaler, max_norm, ..., update_freq)`, utils.py
`NativeScalerWithGradNormCount`) in a fork whose wrapper exposes `backward()`/`unscale_()`/
`step()` so the engine can clip itself: it clips before any unscale (AMP120 at the clip).

tests/projects/scaler_mae_wrapper_param: facebookresearch/mae layout (main_pretrain.py,
engine_pretrain.py, util/misc.py), with a second engine loop that calls the wrapper's
`step(loss, optimizer, parameters=...)`, which scales, steps and updates: nothing to report.
"""

from __future__ import annotations

import pytest
from project_files import code_findings, load

CONVNEXT = "scaler_convnext_wrapper_clip"
MAE = "scaler_mae_wrapper_param"
CLIP = ("engine.py", 26, "AMP120")
SCALER_CODES = ("AMP120", "AMP121", "AMP122", "AMP123", "AMP125", "AMP126", "AMP127")


def found(files, codes=SCALER_CODES):
    return sorted(f for code in codes for f in code_findings(files, code)[0])


def test_clip_between_the_wrappers_backward_and_step_is_reported():
    findings, results = code_findings(load(CONVNEXT), "AMP120")
    assert findings == [CLIP]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP120")
    assert "`loss_scaler._scaler.step` at utils.py:27, through the call at line 27" in message
    assert found(load(CONVNEXT)) == [CLIP]  # no AMP121: the wrapper updates


def test_twin_unscale_through_the_wrapper_before_the_clip_is_silent():
    files = load(CONVNEXT, (("            if max_norm:\n",
                             "            if max_norm:\n                loss_scaler.unscale_(optimizer)\n"),))
    assert found(files) == []


def test_twin_the_wrapper_never_updates_is_still_reported_in_it():
    files = load(CONVNEXT, (("        self._scaler.update()\n", ""),))
    assert ("utils.py", 27, "AMP121") in found(files)


def test_wrappers_step_with_the_loss_is_not_a_grad_scalers():
    assert found(load(MAE)) == []


def test_twin_the_caller_passes_a_grad_scaler():
    files = load(MAE, (("    loss_scaler = NativeScaler()\n",
                        "    loss_scaler = torch.amp.GradScaler('cuda')\n"),))
    assert found(files, ("AMP121",)) == [("engine_pretrain.py", 33, "AMP121")]


def test_twin_the_wrapper_never_updates_is_reported_in_it():
    files = load(MAE, (("            self._scaler.update()\n", ""), ("        self._scaler.update()\n", "")))
    assert found(files) == [("util/misc.py", 17, "AMP121"), ("util/misc.py", 24, "AMP121")]


def test_torch_clip_before_the_wrappers_unscale_reads_scaled_gradients():
    """torch 2.13 CPU GradScaler, the wrapper's own calls: after `backward(loss)` the clip sees
    the norm times the loss scale; after `unscale_(optimizer)` the true norm."""
    torch = pytest.importorskip("torch")

    class Wrapper:
        def __init__(self):
            self._scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)

        def backward(self, loss):
            self._scaler.scale(loss).backward()

        def unscale_(self, optimizer):
            self._scaler.unscale_(optimizer)

        def step(self, optimizer):
            self._scaler.step(optimizer)
            self._scaler.update()

    norms = []
    for unscale in (False, True):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        wrapper = Wrapper()
        wrapper.backward(model(torch.randn(8, 4)).pow(2).mean())
        if unscale:
            wrapper.unscale_(opt)
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9)))
        wrapper.step(opt)
    assert norms[0] == pytest.approx(norms[1] * 1024.0, rel=1e-5)


def test_torch_the_wrappers_step_updates_a_grad_scalers_would_raise():
    """The AMP121 premise, on torch 2.13 CPU: a GradScaler stepped twice with no update raises;
    the wrapper's `step(loss, optimizer)` updates, so every iteration runs."""
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")

    def wrapper_step(loss):
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(3):
        opt.zero_grad()
        wrapper_step(model(torch.randn(8, 4)).sum())
    opt.zero_grad()
    scaler.scale(model(torch.randn(8, 4)).sum()).backward()
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)


def test_the_wrapper_class_in_the_engines_own_file():
    """The class flow is asked in the caller's own file too (its call graph reads `x.m()` of a
    parameter by the name alone, so it decides nothing about what the parameter holds)."""
    files = load(CONVNEXT)
    utils = files["scaler_convnext_wrapper_clip/utils.py"]
    wrapper = utils[utils.index("class NativeScalerWithGradNormCount"):]
    files["scaler_convnext_wrapper_clip/utils.py"] = utils[:utils.index("class NativeScalerWithGradNormCount")]
    files["scaler_convnext_wrapper_clip/engine.py"] += "\n\n" + wrapper
    files["scaler_convnext_wrapper_clip/main.py"] = files["scaler_convnext_wrapper_clip/main.py"].replace(
        "from utils import NativeScalerWithGradNormCount", "from engine import NativeScalerWithGradNormCount")
    assert found(files) == [CLIP]
