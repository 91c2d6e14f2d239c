"""A name that says "scaler" and is sent `step(optimizer)`, but also `scale()` with no argument
and `unscale()`: calls a torch GradScaler cannot take (`scale(outputs)` needs the outputs; the
GradScaler method is `unscale_`). It holds another object; its `step` is not a GradScaler's, so
no "step without update" (AMP121) and no "backward of an unscaled loss" (AMP122).

tests/projects/scaler_fairscale_layerwise: facebookresearch/fairscale layout
(fairscale/optim/layerwise_gradient_scaler.py `LayerwiseGradientScaler`: `scale()` registers
backward hooks, `unscale()` divides the gradients, `step(optimizer)`; tests/optim/
test_layerwise_gradient_scaler.py `train_linear_model`), the class imported from another file.

Twins: the same loop with a torch GradScaler bound to the name is reported (AMP121, AMP122); a
one-file copy (the class defined beside the loop) stays silent; `layer_scaler.scale(loss)` with
an argument is read as a GradScaler's again, as before.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_fairscale_layerwise"
LOOP = "tests/optim/test_layerwise_gradient_scaler.py"
CODES = ("AMP120", "AMP121", "AMP122", "AMP123", "AMP125")


def found(files):
    return sorted((f[0], f[1], f[2]) for code in CODES for f in code_findings(files, code)[0])


def test_layerwise_scaler_imported_from_the_package_is_not_a_grad_scaler():
    assert found(load(NAME)) == []


def test_one_file_variation_is_silent():
    files = load(NAME)
    cls = files.pop(f"{NAME}/fairscale/optim/layerwise_gradient_scaler.py")
    path = f"{NAME}/{LOOP}"
    files[path] = cls + "\n\n" + files[path].replace(
        "from fairscale.optim.layerwise_gradient_scaler import LayerwiseGradientScaler\n", "")
    assert found(files) == []


def test_twin_a_grad_scaler_bound_to_the_name_is_reported():
    files = load(NAME, (("LayerwiseGradientScaler(model, layers_to_scale)", 'torch.amp.GradScaler("cuda")'),))
    assert found(files) == [(LOOP, 19, "AMP122"), (LOOP, 21, "AMP121")]


def test_twin_scale_with_the_loss_is_a_grad_scaler_use():
    files = load(NAME, (("        layer_scaler.scale()\n", ""),
                        ("        loss.backward()\n", "        layer_scaler.scale(loss).backward()\n"),
                        ("        layer_scaler.unscale()\n", "")))
    assert (LOOP, 19, "AMP121") in found(files)
