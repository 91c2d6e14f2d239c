"""A function a region reaches through a call, and that the file also runs outside any region,
is read along that call (facts/dtype_paths.py): its parameters hold what the call passes under
the region, its code surely runs under the region on that path, and a hazard there is reported
citing the call. On main its parameters joined both calls (unknown), so it stayed silent.

tests/projects/deit_path_entropy: facebookresearch/deit layout (main.py, engine.py's
`train_one_epoch` under autocast and `evaluate` under `torch.no_grad()`, models.py), in a fork
that adds a prototype-entropy regulariser `prototype_entropy(scores, eps=1e-8)` to engine.py,
called on the float16 prototype scores (`features @ prototypes.t()`) inside the float16 autocast
region, and again by `evaluate` outside any region. Under torch 2.13 (CPU float16 autocast, and
`.half()`) sigmoid(-20) is 0 in float16, `0 + 1e-8` is 0, the log is -inf and the entropy NaN;
in float32, and under a bfloat16 region (bfloat16 holds 2e-9), it is finite.
Clean twins: the region's call passes `scores.float()`; the helper called only by `evaluate`;
a bfloat16 region.
"""

from __future__ import annotations

import importlib.util
import math
import os

import torch

from project_files import PROJECTS, code_findings, load

NAME = "deit_path_entropy"
CALL = "loss = criterion(scores, targets) + 0.1 * prototype_entropy(scores)"
FINDING = ("engine.py", 6, "AMP140")


def _amp140(replace=()):
    return code_findings(load(NAME, replace), "AMP140")[0]


def _engine():
    path = os.path.join(PROJECTS, NAME, "engine.py")
    spec = importlib.util.spec_from_file_location("deit_path_entropy_engine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_helper_is_read_along_the_region_s_call():
    assert CALL in load(NAME)[f"{NAME}/engine.py"]
    assert _amp140() == [FINDING]


def test_the_finding_cites_the_call_and_the_region():
    _, results = code_findings(load(NAME), "AMP140")
    found = [d for d in results[f"{NAME}/engine.py"].diagnostics if d.code == "AMP140"]
    assert len(found) == 1
    assert "autocast region at line 14, called at line 17" in found[0].message


def test_clean_twin_the_region_s_call_passes_float32():
    fixed = CALL.replace("prototype_entropy(scores)", "prototype_entropy(scores.float())")
    assert _amp140(((CALL, fixed),)) == []


def test_clean_twin_called_only_outside_the_region():
    assert _amp140(((CALL, "loss = criterion(scores, targets)"),)) == []


def test_clean_twin_a_bfloat16_region():
    region = 'with torch.autocast("cuda", dtype=torch.float16):'
    assert _amp140(((region, region.replace("float16", "bfloat16")),)) == []


def test_an_unknown_argument_stays_unknown():
    # the model's own output (a parameter's call): not certainly float16, nothing read
    assert _amp140(((CALL, CALL.replace("prototype_entropy(scores)",
                                        "prototype_entropy(features)")),)) == []


def test_torch_float16_entropy_is_nan_float32_and_bfloat16_finite():
    engine = _engine()
    scores = torch.full((2, 4), -20.0)
    features, prototypes = torch.full((2, 4), -5.0), torch.ones(4, 4)
    with torch.autocast("cpu", dtype=torch.float16):
        under = engine.prototype_entropy(features @ prototypes.t())
    assert math.isnan(under.item())
    assert math.isnan(engine.prototype_entropy(scores.half()).item())
    assert math.isfinite(engine.prototype_entropy(scores).item())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        bf16 = engine.prototype_entropy(features @ prototypes.t())
    assert math.isfinite(bf16.item())


# -- a chain of calls under a region of another file -------------------------------------------
# tests/projects/vae_path_chain: pytorch/examples vae layout (main.py's module-level `model =
# VAE().to(device)` and `train()` under a float16 autocast; model.py's VAE), in a fork whose
# encoder standardises its hidden layer with a hand-written `Standardize` module:
# `centered / (centered.var(-1, keepdim=True) + 1e-8).sqrt()`. The project pass runs
# `VAE.forward` under main.py's region; read along that path, `encode` (a public method, its
# calls not bound) runs under it, `self.fc1(x)` is float16 there, and `Standardize.forward`
# gets it. Under torch 2.13 CPU float16 autocast (and `.half()`) a constant hidden row has
# variance 0, `0 + 1e-8` is 0 and the row is NaN; float32 and a bfloat16 region give 0.
CHAIN = "vae_path_chain"
HIDDEN = "h1 = self.standardize(self.fc1(x))"
REGION = 'with torch.autocast("cuda", dtype=torch.float16):'


def _chain(replace=()):
    return code_findings(load(CHAIN, replace), "AMP140")[0]


def test_a_chain_of_calls_under_another_file_s_region():
    assert _chain() == [("model.py", 9, "AMP140")]


def test_chain_twin_float32_hidden_layer():
    assert _chain(((HIDDEN, "h1 = self.standardize(self.fc1(x).float())"),)) == []


def test_chain_twin_bfloat16_or_maybe_enabled_region():
    assert _chain(((REGION, REGION.replace("float16", "bfloat16")),)) == []
    assert _chain(((REGION, REGION.replace("):", ", enabled=args.epochs > 1):")),)) == []


def test_chain_twin_no_region():
    assert _chain(((REGION, "if True:"),)) == []


def test_torch_constant_hidden_row_is_nan_in_float16_only():
    path = os.path.join(PROJECTS, CHAIN, "model.py")
    spec = importlib.util.spec_from_file_location("vae_path_chain_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vae = module.VAE()
    with torch.no_grad():
        vae.fc1.weight.zero_()
        vae.fc1.bias.fill_(0.5)
    x = torch.rand(4, 784)
    with torch.autocast("cpu", dtype=torch.float16):
        assert vae.standardize(vae.fc1(x)).isnan().all().item()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not vae.standardize(vae.fc1(x)).isnan().any().item()
    assert not vae.standardize(vae.fc1(x)).isnan().any().item()
    assert module.Standardize()(torch.full((2, 8), 0.5).half()).isnan().all().item()
