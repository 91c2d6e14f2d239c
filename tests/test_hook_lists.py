"""Hooks registered in a list and run by a trainer's loop over it: the class flow's containers
grow through `insert`/`appendleft` as through `append`, and the GradScaler protocol composes the
one registered hook whose method has events when every other one inherits the base's empty
method.

The project imitates detectron2's engine (facebookresearch/detectron2,
detectron2/engine/train_loop.py: `TrainerBase.register_hooks`, `HookBase`, `AMPTrainer.run_step`;
detectron2/engine/defaults.py: `DefaultTrainer.build_hooks` building the list and inserting
optional hooks into it) as forks like OpenSeeD use it, with the gradient clipping moved into a
hook run between backward and the optimizer step. Our own code, written for this test.
"""

from __future__ import annotations

import pytest

from amplint.analysis.project import build
from amplint.analysis.project.module_defs import loop_variable, noop_function, parse_or_none
from tests.project_files import cli_findings

HOOKS = '''\
import torch


class HookBase:
    trainer = None

    def before_step(self):
        pass

    def after_backward(self):
        """Called after the backward pass, before the optimizer step."""

    def after_step(self):
        pass


class GradientClipHook(HookBase):
    def __init__(self, max_norm):
        self.max_norm = max_norm

    def after_backward(self):
        torch.nn.utils.clip_grad_norm_(self.trainer.model.parameters(), self.max_norm)


class PeriodicWriter(HookBase):
    def __init__(self, period=20):
        self.period = period

    def after_step(self):
        if self.trainer.iter % self.period == 0:
            print(self.trainer.iter)
'''

TRAIN_LOOP = '''\
import weakref

import torch


class TrainerBase:
    def __init__(self):
        self._hooks = []
        self.iter = 0

    def register_hooks(self, hooks):
        hooks = [h for h in hooks if h is not None]
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, max_iter):
        for self.iter in range(max_iter):
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()

    def after_backward(self):
        for h in self._hooks:
            h.after_backward()

    def run_step(self):
        raise NotImplementedError


class AMPTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda"):
            losses = sum(self.model(data).values())
        self.optimizer.zero_grad()
        self.grad_scaler.scale(losses).backward()
        self.after_backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
'''

TRAIN_NET = '''\
import torch

from engine.hooks import GradientClipHook, PeriodicWriter
from engine.train_loop import AMPTrainer


def build_hooks(cfg):
    hooks = [PeriodicWriter(period=20)]
    if cfg["CLIP_GRADIENTS"]:
        hooks.{add}
    return hooks


def main(cfg, model, data_loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    trainer = AMPTrainer(model, data_loader, optimizer)
    trainer.register_hooks(build_hooks(cfg))
    trainer.train(cfg["MAX_ITER"])
'''

INSERT = "insert(0, GradientClipHook(cfg['CLIP_VALUE']))"
UNSCALED = (
    "        self.grad_scaler.scale(losses).backward()\n",
    "        self.grad_scaler.scale(losses).backward()\n"
    "        self.grad_scaler.unscale_(self.optimizer)\n",
)


def _project(tmp_path, add=INSERT, train_loop=TRAIN_LOOP, hooks=HOOKS):
    files = {
        "engine/__init__.py": "",
        "engine/hooks.py": hooks,
        "engine/train_loop.py": train_loop,
        "train_net.py": TRAIN_NET.replace("{add}", add),
    }
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return files


@pytest.mark.parametrize("add", [INSERT, "append(GradientClipHook(cfg['CLIP_VALUE']))"])
def test_a_hook_that_clips_scaled_gradients_is_found_at_the_trainer_call(tmp_path, add):
    _project(tmp_path, add)
    assert cli_findings(tmp_path, "--no-cache") == [("engine/train_loop.py", 47, "AMP120")]


def test_the_message_names_the_clip_in_the_hook_file_and_the_loop_call(tmp_path):
    from tests.project_files import cli_diagnostics

    _project(tmp_path)
    (finding,) = [d for d in cli_diagnostics(tmp_path, "--no-cache") if d["code"] == "AMP120"]
    assert "at engine/hooks.py:22, through this call and the call at line 27" in finding["message"]


def test_twin_unscaled_before_the_hooks_is_silent(tmp_path):
    _project(tmp_path, train_loop=TRAIN_LOOP.replace(*UNSCALED))
    assert cli_findings(tmp_path, "--no-cache") == []


def test_a_second_hook_with_its_own_after_backward_leaves_the_call_unknown(tmp_path):
    # two registered hooks whose `after_backward` both do something: which one's events the
    # call runs is not one function's, and nothing is composed (no finding on a guess)
    logging_hook = HOOKS.replace(
        "    def after_step(self):\n        if self",
        "    def after_backward(self):\n        print('backward done')\n\n"
        "    def after_step(self):\n        if self")
    _project(tmp_path, hooks=logging_hook)
    assert cli_findings(tmp_path, "--no-cache") == []


def test_the_class_flow_holds_what_insert_and_appendleft_add(tmp_path):
    for add in (INSERT, "appendleft(GradientClipHook(cfg['CLIP_VALUE']))"):
        files = _project(tmp_path, add)
        project = build(files)
        classes = sorted(target[3][1] for target in project.flow.call_targets(
            "engine/train_loop.py", "TrainerBase.after_backward", ("local", "h"), "after_backward"))
        assert classes == ["GradientClipHook", "PeriodicWriter"]


@pytest.mark.parametrize("body, empty", [
    ("pass", True), ("'''doc'''", True), ("...", True), ("return", True), ("return None", True),
    ("'''doc'''\n        pass", True), ("return 0", False), ("print(1)", False),
    ("raise NotImplementedError", False),
])
def test_noop_function(body, empty):
    tree = parse_or_none(f"class Hook:\n    def run(self):\n        {body}\n")
    assert noop_function(tree, "Hook.run") is empty
    assert noop_function(tree, "Hook.missing") is False


@pytest.mark.parametrize("body, looped", [
    ("for h in self.hooks:\n        h.run()", True),
    ("for h in self.hooks:\n        h.run()\n    for h in self.more:\n        h.run()", True),
    ("h = self.hooks[0]\n    h.run()", False),
    ("for h in self.hooks:\n        h = h.inner\n        h.run()", False),
    ("for i, h in enumerate(self.hooks):\n        h.run()", False),
])
def test_loop_variable(body, looped):
    tree = parse_or_none(f"def call_hooks(self, g):\n    {body}\n")
    assert loop_variable(tree, "call_hooks", "h") is looped
    assert loop_variable(tree, "call_hooks", "g") is False  # a parameter
