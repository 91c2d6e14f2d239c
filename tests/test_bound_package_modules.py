"""The project's points-to solve (project/bound_flow.py) takes the module that DEFINES what a
region's file imports, also when the import names a package: Vchitect/Latte keeps `get_models`
in models/__init__.py, and train.py's `from models import get_models` named only that package's
`__init__.py`, which the solve left out, so the half cast there never reached the region.

tests/projects/bound_latte_get_models: Vchitect/Latte layout (train.py main(args) with its
GradScaler and clip_max_norm, models/__init__.py get_models(args) over Latte_models,
models/latte.py Latte/Latte_S_2/Latte_XL_2, diffusion/__init__.py create_diffusion,
diffusion/gaussian_diffusion.py GaussianDiffusion.training_losses). get_models returns
`model.half()`; train.py moves it `.to(device)` and hands it to `diffusion.training_losses`
under a float16 autocast with a GradScaler: `scaler.unscale_` raises 'Attempting to unscale
FP16 gradients.' (checked under torch below). The clean twin returns the fp32 model.
"""

from __future__ import annotations

import pytest
import torch

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "bound_latte_get_models"
TWIN = (("return model.half()", "return model"),)
INIT = f"{NAME}/models/__init__.py"


def test_a_factory_in_the_package_init_reaches_the_region():
    found, results = code_findings(load(NAME), "AMP103")
    assert found == [("models/__init__.py", 9, "AMP103")]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP103")
    assert "reaches `model` at train.py:20, read under the autocast region at train.py:19" in message
    assert code_findings(load(NAME, TWIN), "AMP103")[0] == []  # the clean twin trains the fp32 model
    _premise_under_torch()


def test_a_factory_the_package_re_exports_from_its_own_module():
    files = load(NAME)
    factory = files[INIT].split("\n\n\n", 1)[1]
    files[f"{NAME}/models/builder.py"] = "from .latte import Latte_models\n\n\n" + factory
    files[INIT] = "from .builder import get_models\nfrom .latte import Latte_models\n"
    assert code_findings(files, "AMP103")[0] == [("models/builder.py", 9, "AMP103")]


@pytest.mark.parametrize("imported, call", [
    ("import models", "models.get_models(args)"),
    ("from models import get_models as build", "build(args)"),
])
def test_every_import_form_of_the_package(imported, call):
    files = load(NAME, (("from models import get_models", imported), ("get_models(args).to", call + ".to")))
    assert code_findings(files, "AMP103")[0] == [("models/__init__.py", 9, "AMP103")]


def test_a_warm_run_follows_an_edit_of_the_region_file(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "train.py", [("loss = diffusion.training_losses(model, x, t)", "loss = x.sum()")],
        "AMP103", [("models/__init__.py", 9, "AMP103")])


def _premise_under_torch():
    model = torch.nn.Linear(4, 4).half()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(model(torch.ones(2, 4, dtype=torch.half)).float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.unscale_(opt)
