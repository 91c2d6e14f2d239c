"""AMP120 when the only `unscale_` before a clip is another optimizer's, already stepped (issue 26).

tests/projects/scaler_dac_gan_clip is laid out like descriptinc/descript-audio-codec
(scripts/train.py `train_loop` over a state of generator/discriminator and their optimizers,
dac/model.py, dac/losses.py) in a fork that replaced audiotools' Accelerator by one GradScaler:
the discriminator's update unscales `optimizer_d`, clips and steps; the generator's then clips
through a same-file helper `grad_norm(generator, 1e3)` with no `unscale_(optimizer_g)`. GradScaler
unscales per optimizer: `unscale_(optimizer_d)` divided only the discriminator's gradients, so the
generator's clip reads gradients still multiplied by the scale. Twins: the generator's own
`unscale_` added (silent); the clip written inline (reported at the clip itself).
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "scaler_dac_gan_clip"
TRAIN = f"{NAME}/scripts/train.py"
GEN_CLIP = '    output["other/grad_norm"] = grad_norm(generator, 1e3)\n'


def _findings(files):
    return sorted(((path, d.line, d.code), d) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics if d.code.startswith("AMP12"))


def test_the_generators_clip_after_the_discriminators_unscale_is_reported():
    found = _findings(load(NAME))
    assert [key for key, _ in found] == [(TRAIN, 39, "AMP120")]
    assert found[0][1].message.startswith(
        "gradient clipping (line 13, through this call) of scaled gradients: `scaler.step` at line 40")


def test_twin_unscaling_the_generators_optimizer_too_is_silent():
    files = load(NAME, ((GEN_CLIP, "    scaler.unscale_(optimizer_g)\n" + GEN_CLIP),))
    assert "scaler.unscale_(optimizer_g)" in files[TRAIN]
    assert _findings(files) == []


def test_twin_clipping_inline_is_reported_at_the_clip():
    files = load(NAME, ((GEN_CLIP, '    output["other/grad_norm"] = torch.nn.utils.clip_grad_norm_('
                                   'generator.parameters(), 1e3)\n'),))
    found = _findings(files)
    assert [key for key, _ in found] == [(TRAIN, 39, "AMP120")]
    assert found[0][1].message.startswith("gradient clipping of scaled gradients: `scaler.step` at line 40")


def test_another_optimizers_unscale_leaves_these_gradients_scaled():
    """On torch's CPU GradScaler: after `unscale_(opt_d)` and `step(opt_d)`, the generator's
    clip reads its total norm times the scale."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    gen, disc = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
    opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    x = torch.randn(8, 4)
    scaler.scale(disc(x).sum()).backward()
    scaler.unscale_(opt_d)
    scaler.step(opt_d)
    scaler.scale(gen(x).sum()).backward()
    seen = float(torch.nn.utils.clip_grad_norm_(gen.parameters(), 1e9))
    scaler.unscale_(opt_g)
    true = float(torch.nn.utils.clip_grad_norm_(gen.parameters(), 1e9))
    assert seen == pytest.approx(true * 1024.0, rel=1e-5)
