"""AMP141's backward-root exemption, checked against torch and against the rule.

The rule leaves a float16 `sum` alone when its value is only ever a backward root, on the claim
that `SumBackward` never reads the forward value. The first tests run torch to hold the claim
(an overflowing half sum, plain and through GradScaler); the last ones check where the
exemption stops (a sum that is also read, a `std` whose backward divides by its forward value).
"""

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")


def _grads(reduce_in_half, scale):
    w = torch.nn.Parameter(torch.ones(64, 64))
    y = torch.full((512, 64), 4.0).half() @ w.half()  # 256 per element
    loss = y.sum() if reduce_in_half else y.float().sum()
    optimizer = torch.optim.SGD([w], lr=0.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    return loss, w.grad


def test_overflowing_half_sum_still_gives_the_float32_gradients():
    w = torch.nn.Parameter(torch.ones(64, 64))
    loss = (torch.full((512, 64), 4.0).half() @ w.half()).sum()
    assert torch.isinf(loss)  # 512 * 64 * 256 > 65504
    loss.backward()
    reference = torch.nn.Parameter(torch.ones(64, 64))
    (torch.full((512, 64), 4.0) @ reference).sum().backward()
    assert torch.isfinite(w.grad).all()
    assert torch.equal(w.grad, reference.grad)


@pytest.mark.parametrize("scale", [2.0 ** 16, 2.0 ** 10, 1.0, 0.25])
def test_through_grad_scaler_the_grads_equal_those_of_a_float32_sum(scale):
    half_loss, half_grad = _grads(True, scale)
    full_loss, full_grad = _grads(False, scale)
    assert torch.isinf(half_loss) and torch.isfinite(full_loss)
    # identical, inf where the scaled backward itself overflows (the scaler then skips the step)
    assert torch.equal(half_grad.nan_to_num(posinf=1.0), full_grad.nan_to_num(posinf=1.0))


def _codes(source):
    result = lint_source("train.py", source, Settings(frozenset({"AMP141"})))
    assert not result.errors
    return [(d.line, d.code) for d in result.diagnostics]


HALF = "import torch\ndef step(model, x, opt, log):\n    y = model.half()(x.half())\n"


@pytest.mark.parametrize("use", [
    "    loss.backward()\n",
    "    opt.backward(loss)\n",
    "    scaler.scale(loss).backward()\n",
    "    self.manual_backward(loss)\n",
])
def test_backward_root_only_is_not_reported(use):
    assert _codes(HALF + "    loss = y.sum()\n" + use.replace("scaler", "opt").replace("self", "opt")) == []


@pytest.mark.parametrize("read", [
    "    log(loss)\n", "    return loss\n", "    print(loss.item())\n", "    total = loss + 1\n",
    "    if loss > 0:\n        pass\n",
])
def test_any_other_read_keeps_the_finding(read):
    assert _codes(HALF + "    loss = y.sum()\n    loss.backward()\n" + read) == [(4, "AMP141")]


def test_rebinding_or_other_reductions_keep_the_finding():
    rebound = HALF + "    loss = y.sum()\n    loss.backward()\n    loss = y.sum()\n    log(loss)\n"
    assert _codes(rebound) == [(4, "AMP141"), (6, "AMP141")]
    spread = HALF + "    loss = y.std()\n    loss.backward()\n"  # StdBackward divides by it
    assert _codes(spread) == [(4, "AMP141")]


def test_std_backward_reads_its_forward_value():
    w = torch.nn.Parameter(torch.tensor([0.0, 70000.0]))
    w.half().std().backward()  # 70000 is inf in float16: the forward is NaN, so are the grads
    assert not torch.isfinite(w.grad).any()
