"""Check 3 against the dtype's own noise: a two-layer MLP whose BCE-on-sigmoid (AMP102) is fixed
to binary_cross_entropy_with_logits passes in float16 and bfloat16 (its bfloat16 gradients move
by up to ~15 % per element through two matmuls: the fix is not to blame), and wrong fixes fail."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from amplint.runtime import noise  # noqa: E402

FP16, BF16 = torch.float16, torch.bfloat16


def mlp_step(loss_of):
    """A runner: the MLP's step with ``loss_of(logits, y, w)`` as its loss."""

    def run(device, dtype):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
        x = torch.randn(128, 32, device=device)
        y = (torch.rand(128, 1, device=device) > 0.5).float()
        w = torch.rand(128, 1, device=device) + 0.5
        with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
            logits = model(x)
            loss = loss_of(logits, y, w)
        loss.backward()
        return {"loss": loss, "logits": logits,
                **{f"grad.{n}": p.grad for n, p in model.named_parameters()}}

    return run


BEFORE = mlp_step(lambda z, y, w: F.binary_cross_entropy(torch.sigmoid(z), y, weight=w))
RIGHT = mlp_step(lambda z, y, w: F.binary_cross_entropy_with_logits(z, y, weight=w))
WRONG = {
    "double_sigmoid": lambda z, y, w: F.binary_cross_entropy_with_logits(torch.sigmoid(z), y,
                                                                         weight=w),
    "flipped_labels": lambda z, y, w: F.binary_cross_entropy_with_logits(z, 1 - y, weight=w),
    "loss_times_zero": lambda z, y, w: F.binary_cross_entropy_with_logits(z, y, weight=w) * 0,
    "constant_loss": lambda z, y, w: z.sum() * 0 + 0.6931,
    "dropped_weight": lambda z, y, w: F.binary_cross_entropy_with_logits(z, y),
    # a planted round trip: the logits rounded to half precision, then .float()
    "planted_float": lambda z, y, w: F.binary_cross_entropy_with_logits(z.half().float(), y,
                                                                        weight=w),
}


@pytest.mark.parametrize("dtype", [FP16, BF16], ids=["float16", "bfloat16"])
def test_right_fix_passes_against_the_dtypes_noise(dtype):
    result = ar.verify(BEFORE, RIGHT, code="AMP102", dtypes=[dtype], device="cpu")
    assert result.verified, result.summary()
    [r] = result.dtypes
    assert 0 < noise.noise_ratio(r.after_vs_reference) <= 1
    if dtype is BF16:  # what a fixed 5e-3/4e-2 relative tolerance could not tell from a wrong fix
        assert max(c.max_rel for c in r.after_vs_reference) > 0.02


@pytest.mark.parametrize("dtype", [FP16, BF16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("wrong", sorted(WRONG))
def test_wrong_fixes_fail(wrong, dtype):
    result = ar.verify(BEFORE, mlp_step(WRONG[wrong]), code="AMP102", dtypes=[dtype],
                       device="cpu")
    assert result.status == "FAIL", result.summary()
    assert any("float32: the after computes something else" in p for p in result.problems)


@pytest.mark.parametrize("dtype,factor", [(FP16, 1.01), (BF16, 1.05)], ids=["float16", "bfloat16"])
def test_a_change_under_autocast_only_leaves_the_noise_tolerance(dtype, factor):
    """Check 1 cannot see it (the float32 runs agree); the noise bound of check 3 does."""

    def scaled(z, y, w):
        loss = F.binary_cross_entropy_with_logits(z, y, weight=w)
        return loss * factor if torch.is_autocast_enabled(z.device.type) else loss

    result = ar.verify(BEFORE, mlp_step(scaled), code="AMP102", dtypes=[dtype], device="cpu")
    assert result.status == "FAIL", result.summary()
    assert any("leaves the noise tolerance" in p and "loss" in p for p in result.problems)
    assert result.fp32_before_vs_after and all(c.ok for c in result.fp32_before_vs_after)


def test_rounding_noise_keeps_the_programs_random_numbers_and_mutations():
    torch.manual_seed(3)
    a = torch.randn(4, 4)
    buf = torch.zeros(4)
    with noise.RoundingNoise(FP16, seed=0):
        torch.manual_seed(5)
        r = torch.rand(3)
        b = a @ a
        buf.add_(a.sum(0))
    torch.manual_seed(5)
    assert torch.equal(r, torch.rand(3))  # the noise has its own generator
    rel = ((b - a @ a).abs() / (a.abs() @ a.abs())).max()
    assert 0 < rel < 4 * noise.unit_roundoff(FP16)  # rounded, within a few roundings
    # the written buffer is the one the program holds (not a perturbed copy), near its value
    assert ((buf - a.sum(0)).abs() <= 4 * noise.unit_roundoff(FP16) * a.abs().sum(0)).all()
    assert (buf != 0).all()
