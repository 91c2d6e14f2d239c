"""A builder whose every `return` IS the half cast (`return model.half()`, `return
MLP(...).half()`), read as the model it returns cast, as a builder that casts a local and returns
it already is (issue 26): the same-file summary (facts/returned_casts.py, through
facts/function_returns.py) and the other file's "half" kind (project/return_values.py, delivered
by project/return_kinds.py, read through `FunctionReturns.remote`).

- returned_half_detr (facebookresearch/detr: models/detr.py's MLP box head and DETR, engine.py's
  train_one_epoch, main.py), in a fork whose `build_bbox_head` returns the head `.half()`:
  `DETR.__init__` stores it as `self.bbox_embed`, and `DETR.forward` runs it under the float16
  autocast of engine.py with a GradScaler (torch 2.13, CPU: `unscale_` raises 'ValueError:
  Attempting to unscale FP16 gradients.'). AMP103 at the cast.
- returned_half_wavenet (r9y9/wavenet_vocoder: wavenet_vocoder/wavenet.py WaveNet, train.py
  build_model / train_loop), in a fork whose `build_model` returns the model `.half()`: a plain
  Adam (eps=1e-8, 0 in float16) trains it with no autocast or GradScaler. AMP152.
- returned_half_taming (CompVis/taming-transformers: taming/models/vqgan.py VQModel,
  taming/util.py loader, a latent-statistics script): the loader of another file returns the
  VQGAN `.half()`, and the script sums the squares of its float16 latents (torch 2.13: a float16
  (300 * 300) summed 4096 times is inf). AMP141.
Each twin (the builder returning the float32 model, or a builder whose returns disagree) is silent.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import assert_warm_run_follows_an_edit, code_findings, load


def findings(name, code, replace=()):
    return code_findings(load(name, replace), code, Settings.default())[0]


DETR_CAST = "    return MLP(hidden_dim, hidden_dim, 4, 3).half()\n"


def test_a_head_a_builder_returns_half_stored_in_init_and_run_under_autocast():
    assert findings("returned_half_detr", "AMP103") == [("models/detr.py", 18, "AMP103")]


def test_the_detr_twin_returning_the_float32_head_is_silent():
    assert findings("returned_half_detr", "AMP103",
                    ((DETR_CAST, DETR_CAST.replace(".half()", "")),)) == []


def test_a_builder_whose_returns_disagree_is_not_read():
    mixed = "    if hidden_dim > 512:\n        return MLP(hidden_dim, hidden_dim, 4, 3)\n" + DETR_CAST
    assert findings("returned_half_detr", "AMP103", ((DETR_CAST, mixed),)) == []


WAVENET_CAST = "    return model.half()\n"


def test_a_model_a_builder_returns_half_trained_by_a_plain_optimizer():
    assert findings("returned_half_wavenet", "AMP152") == [("train.py", 12, "AMP152")]


def test_the_wavenet_twin_returning_the_float32_model_is_silent():
    assert findings("returned_half_wavenet", "AMP152", ((WAVENET_CAST, "    return model\n"),)) == []


TAMING_CAST = "    return model.half()\n"


def test_another_files_loader_returning_half_makes_the_latents_float16():
    assert findings("returned_half_taming", "AMP141") == [("scripts/latent_stats.py", 15, "AMP141")]


def test_the_taming_twin_returning_the_float32_model_is_silent():
    assert findings("returned_half_taming", "AMP141", ((TAMING_CAST, "    return model\n"),)) == []


def test_a_warm_run_follows_the_loaders_edit(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, "returned_half_taming", "taming/util.py",
                                    ((TAMING_CAST, "    return model\n"),), "AMP141",
                                    [("scripts/latent_stats.py", 15, "AMP141")])


def test_the_premises_under_torch():
    """torch 2.13, CPU: a half head's gradients make `unscale_` raise; Adam's eps is 0 in
    float16; the float16 sum of squares of latents of 300 is inf."""
    torch = pytest.importorskip("torch")
    nn = torch.nn
    head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)).half()
    optimizer = torch.optim.AdamW(head.parameters())
    scaler = torch.amp.GradScaler("cpu")
    with torch.autocast("cpu", dtype=torch.float16):
        loss = head(torch.randn(2, 4)).float().sum()
    scaler.scale(loss).backward()
    try:
        scaler.unscale_(optimizer)
        raised = None
    except ValueError as error:
        raised = str(error)
    assert raised == "Attempting to unscale FP16 gradients."
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
    h = torch.full((4096,), 300.0, dtype=torch.float16)
    assert torch.isinf((h * h).sum())
