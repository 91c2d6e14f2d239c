"""A closure a factory returns, then called (torchtune's recipes build the optimizer step once:
`optimizer_step = make_optimizer_step(optimizer, scaler, params)`, then call `optimizer_step()`
each iteration). The closure's free names that are the factory's parameters stand for what the
factory call passed; exact or nothing."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

SETTINGS = Settings(frozenset({"AMP123"}))

FACTORY = """import torch

def make_optimizer_step(opt, grad_scaler, params, max_norm=1.0):
    params = list(params)
    def optimizer_step():
        grad_scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        grad_scaler.step(opt)
        grad_scaler.update()
    return optimizer_step
"""

RECIPE = """
def train(model, optimizer, other, loader):
    scaler = torch.amp.GradScaler("cuda")
    step_fn = make_optimizer_step({args})
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        step_fn()
"""


def codes(source: str) -> list:
    result = lint_source("recipe.py", source, SETTINGS)
    assert not result.errors
    return [(d.code, d.line) for d in result.diagnostics]


@pytest.mark.parametrize("args", [
    "optimizer, scaler, model.parameters()",
    "grad_scaler=scaler, opt=optimizer, params=model.parameters()",
])
def test_returned_closure_unscales_the_factory_arguments_again(args):
    assert codes(FACTORY + RECIPE.format(args=args)) == [("AMP123", 20)]


def test_a_factory_returning_the_closure_on_every_branch():
    factory = FACTORY.replace(
        "    return optimizer_step\n",
        "    if max_norm is None:\n        return optimizer_step\n    return optimizer_step\n",
    )
    assert codes(factory + RECIPE.format(args="optimizer, scaler, model.parameters()")) == [("AMP123", 22)]


@pytest.mark.parametrize("factory,args", [
    # the clean twin: the closure unscales another optimizer than the loop did
    (FACTORY, "other, scaler, model.parameters()"),
    # the factory's parameter is rebound before the closure reads it: not the caller's optimizer
    (FACTORY.replace("    params = list(params)\n", "    params = list(params)\n    opt = opt.inner\n"),
     "optimizer, scaler, model.parameters()"),
    # the factory returns one of two closures
    (FACTORY.replace("    return optimizer_step\n",
                     "    def noop():\n        pass\n    if max_norm:\n        return optimizer_step\n    return noop\n"),
     "optimizer, scaler, model.parameters()"),
    # a generator: calling it runs nothing
    (FACTORY.replace("    return optimizer_step\n", "    yield 1\n    return optimizer_step\n"),
     "optimizer, scaler, model.parameters()"),
    # `*args` binds nothing known
    (FACTORY, "*[optimizer, scaler, model.parameters()]"),
])
def test_unknown_or_other_closure_stays_silent(factory, args):
    assert codes(factory + RECIPE.format(args=args)) == []


def test_the_called_name_bound_twice_is_unknown():
    recipe = RECIPE.replace("    for batch", "    if other is None:\n        step_fn = lambda: None\n    for batch")
    assert codes(FACTORY + recipe.format(args="optimizer, scaler, model.parameters()")) == []


HELD = """
class Recipe:
    def setup(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.step_fn = make_optimizer_step({args})

    def train(self, loader):
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(batch).mean()
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            self.step_fn()
"""


def test_a_closure_held_on_self_by_another_method():
    held = HELD.format(args="self.optimizer, self.scaler, self.model.parameters()")
    assert codes(FACTORY + held) == [("AMP123", 24)]


@pytest.mark.parametrize("args,edit", [
    # `optimizer` is a local of `setup`: in `train` it names nothing
    ("optimizer, self.scaler, model.parameters()", ("", "")),
    # the attribute is written again elsewhere: which closure runs is not known
    ("self.optimizer, self.scaler, self.model.parameters()",
     ("    def train(self, loader):\n", "    def reset(self):\n        self.step_fn = print\n\n"
                                         "    def train(self, loader):\n")),
    # the attribute is handed on as a value: another holder may call it or replace it
    ("self.optimizer, self.scaler, self.model.parameters()",
     ("    def train(self, loader):\n", "    def hooks(self):\n        return [self.step_fn]\n\n"
                                         "    def train(self, loader):\n")),
])
def test_a_held_closure_not_known_exactly_stays_silent(args, edit):
    assert codes(FACTORY + HELD.format(args=args).replace(*edit)) == []
