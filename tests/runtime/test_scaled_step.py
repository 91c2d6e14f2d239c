"""AMP127's runtime twin: an optimizer stepped directly on gradients of a scaled backward that
were never unscaled is reported at the user's `optimizer.step()` line; the recipe, an explicit
`unscale_`, a disabled scaler and fused/foreach paths through `scaler.step` stay silent, and
`GradScaler.scale` is restored when the monitor exits (CPU autocast, GradScaler("cpu"))."""

import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from rt_helpers import line_of, where  # noqa: E402

HERE = os.path.basename(__file__)
FP16 = torch.float16


def setup(lr=0.1):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x, y = torch.randn(16, 8), torch.randn(16, 4)
    return model, torch.optim.SGD(model.parameters(), lr=lr), x, y


def loss_of(model, x, y):
    with torch.autocast("cpu", dtype=FP16):
        return F.mse_loss(model(x).float(), y)


def test_direct_step_after_scaled_backward_is_reported_and_too_large():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    start = model[0].weight.detach().clone()
    moved = None
    with ar.monitor() as m:
        for _ in range(2):
            opt.zero_grad()
            scaler.scale(loss_of(model, x, y)).backward()
            # no scaler.update(): after a direct step it raises "No inf checks were recorded"
            opt.step()  # amp127-direct
            if moved is None:
                moved = (model[0].weight.detach() - start).abs().max()
    assert where(m.findings, "AMP127") == [(HERE, line_of("amp127-direct"))]
    assert m.findings[0].extra["count"] == 2
    assert m.findings[0].extra["scale"] == 65536.0
    assert "65536" in m.findings[0].message
    # the finding is real: the first step moved the weights ~65536x as far as scaler.step does
    model2, opt2, x, y = setup()
    scaler2 = torch.amp.GradScaler("cpu")
    scaler2.scale(loss_of(model2, x, y)).backward()
    scaler2.step(opt2)
    right = (model2[0].weight.detach() - start).abs().max()
    assert 30000 * right < moved < 100000 * right


def test_recipe_unscale_and_disabled_scaler_are_silent():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    off = torch.amp.GradScaler("cpu", enabled=False)
    with ar.monitor() as m:
        for _ in range(2):
            opt.zero_grad()
            scaler.scale(loss_of(model, x, y)).backward()
            scaler.step(opt)
            scaler.update()
        opt.zero_grad()
        scaler.scale(loss_of(model, x, y)).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()  # unscaled first: right size (AMP127's static rule still reports it)
        scaler.update()
        opt.zero_grad()
        off.scale(loss_of(model, x, y)).backward()
        opt.step()
    assert m.findings == []


def test_plain_backward_and_other_optimizer_are_silent():
    """A GAN-like pair: the scaled backward reaches only D's parameters; G steps on its own
    plain gradients."""
    torch.manual_seed(0)
    gen, disc = nn.Linear(8, 8), nn.Linear(8, 1)
    opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.randn(4, 8)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            d_loss = disc(gen(x).detach()).float().mean()
        scaler.scale(d_loss).backward()
        gen(x).pow(2).mean().backward()
        opt_g.step()
        scaler.step(opt_d)
        scaler.update()
    assert m.findings == []


def test_scale_is_restored_and_raise_mode():
    original = torch.amp.GradScaler.scale
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    with pytest.raises(ar.AmpHazardError) as info:
        with ar.monitor(mode="raise"):
            scaler.scale(loss_of(model, x, y)).backward()
            opt.step()
    assert info.value.finding.code == "AMP127"
    assert torch.amp.GradScaler.scale is original
    # outside the monitor nothing is watched
    opt.zero_grad()
    scaler.scale(loss_of(model, x, y)).backward()
    opt.step()


def test_check_can_be_left_out():
    model, opt, x, y = setup()
    scaler = torch.amp.GradScaler("cpu")
    with ar.monitor(checks={"AMP104"}) as m:
        scaler.scale(loss_of(model, x, y)).backward()
        opt.step()
    assert m.findings == []


def test_fixture_before_moves_the_weights_scale_times_too_far():
    """fixtures/AMP127/direct_step_unsafe: the before's float16 update is ~65536x the fp32
    reference's, the after's matches it (what the pair's runner returns as `update`)."""
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "fixtures" / "AMP127"

    def run(name, dtype):
        spec = importlib.util.spec_from_file_location(f"amp127_{name}", folder / name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.amplint_run("cpu", dtype)["update"].abs().max()

    reference = run("direct_step_unsafe.py", None)
    assert torch.isclose(run("direct_step_unsafe.fixed.py", None), reference)
    assert torch.isclose(run("direct_step_unsafe.fixed.py", FP16), reference, rtol=0.01)
    ratio = run("direct_step_unsafe.py", FP16) / reference
    assert 1e4 < ratio < 1e5, ratio
