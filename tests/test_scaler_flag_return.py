"""AMP121's "the `return` skips `scaler.update()`" is the caller's choice when the return is
under a flag the helper takes (`if not last: return`): a GAN loop whose step helper updates only
after the last optimizer of the iteration (the shape of pytorch-CycleGAN-and-pix2pix's
generator/discriminator steps, with a shared helper) is the protocol (each optimizer steps once,
one update), and torch runs it. A return under a value test (`if not torch.isfinite(norm)`)
still skips the update whenever it fires: still reported."""

from __future__ import annotations

import warnings

import pytest

from amplint.analysis.engine import Settings, lint_source

HELPER = (
    "import torch\n"
    "\n"
    "\n"
    "def scaler_step(scaler, opt, {param}):\n"
    "    scaler.step(opt)\n"
    "    if {test}:\n"
    "        return\n"
    "    scaler.update()\n"
)
LOOP = (
    "\n"
    "\n"
    "def train(model_g, model_d, opt_g, opt_d, loader, scaler):\n"
    "    for x in loader:\n"
    "        with torch.autocast('cuda'):\n"
    "            loss_g = model_g(x).sum()\n"
    "        scaler.scale(loss_g).backward()\n"
    "        scaler_step(scaler, opt_g, {first})\n"
    "        with torch.autocast('cuda'):\n"
    "            loss_d = model_d(x).sum()\n"
    "        scaler.scale(loss_d).backward()\n"
    "        scaler_step(scaler, opt_d, {second})\n"
    "        opt_g.zero_grad()\n"
    "        opt_d.zero_grad()\n"
)


def _amp121(source):
    result = lint_source("train.py", source, Settings(frozenset({"AMP121"})))
    return [d.line for d in result.diagnostics]


def test_a_return_under_the_callers_flag_is_not_reported():
    source = HELPER.format(param="last", test="not last") + LOOP.format(first="last=False", second="last=True")
    assert _amp121(source) == []
    assert _amp121(HELPER.format(param="last", test="not last")) == []  # the helper alone, too


def test_a_return_under_a_value_test_is_still_reported():
    source = HELPER.format(param="grad_norm", test="not torch.isfinite(grad_norm)")
    assert _amp121(source) == [5]


def test_the_flagged_protocol_runs_under_torch():
    torch = pytest.importorskip("torch")
    warnings.simplefilter("ignore")
    source = HELPER.format(param="last", test="not last") + LOOP.format(first="last=False", second="last=True")
    scope: dict = {}
    exec(compile(source.replace("'cuda'", "'cpu'"), "train.py", "exec"), scope)
    model_g, model_d = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    opt_g = torch.optim.SGD(model_g.parameters(), 0.1)
    opt_d = torch.optim.SGD(model_d.parameters(), 0.1)
    scaler = torch.amp.GradScaler("cpu")
    scope["train"](model_g, model_d, opt_g, opt_d, [torch.randn(1, 2) for _ in range(3)], scaler)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        # the same optimizer stepped twice with no update in between: what the rule is about
        scaler.scale(model_g(torch.randn(1, 2)).sum()).backward()
        scope["scaler_step"](scaler, opt_g, False)
        scope["scaler_step"](scaler, opt_g, False)
