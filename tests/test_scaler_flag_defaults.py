"""A helper's `if flag:` arm decided by the flag's literal DEFAULT (or a literal argument), the
same file or another (r18-defaults; set K's codeformer_two_optim_update: `amp_step(self,
optimizer, update=True)` whose `if update: self.scaler.update()` ran at both calls, yet the
composed update kept the helper's `if` around it and AMP126 counts no update behind a test of
the helper's own).

tests/projects/scaler_taming_flag_defaults: CompVis/taming-transformers layout (main.py,
taming/models/vqgan.py VQModel with its autoencoder and discriminator optimizers,
taming/models/cond_transformer.py Net2NetTransformer) with AMP added through a mixin in
taming/modules/amp.py: `VQModel.training_step` steps both optimizers through
`self.optimizer_step(opt)`, whose `update_scale=True` default updates the scale between them.
Now an arm a call's literal (passed, or left at its default) always runs is no condition of
the composed event (facts/scaler_arms.py `decided_ctx`), and a callee of another file carries
its flag-tested `if`s and literal defaults (EntryScaler.flags). Twins stay silent: the first
call passes `update_scale=False`; the default is not a literal; `step_optimizer(..., last=True)`
only at the last call.
"""

from __future__ import annotations

import pytest
from project_files import code_findings, load

NAME = "scaler_taming_flag_defaults"
FIRST = "        self.optimizer_step(self.opt_ae)\n"
LAST_ONLY = "        step_optimizer(self.scaler, self.opt_emb)\n"


def amp126(files):
    return code_findings(files, "AMP126")[0]


def test_default_true_updates_between_the_two_optimizers_of_another_file():
    assert amp126(load(NAME)) == [("taming/models/vqgan.py", 39, "AMP126")]


def test_twin_first_call_overrides_the_default():
    files = load(NAME, ((FIRST, FIRST.replace("opt_ae)", "opt_ae, update_scale=False)")),))
    assert amp126(files) == []


def test_twin_a_default_that_is_no_literal_decides_nothing():
    files = load(NAME, (("update_scale=True):", "update_scale=UPDATE):"),
                        ("import torch\n", "import torch\n\nUPDATE = torch.cuda.device_count() > 1\n")))
    assert amp126(files) == []


def test_keyword_only_default_false_decides_the_other_calls_update_out():
    files = load(NAME, ((LAST_ONLY, LAST_ONLY.replace("opt_emb)", "opt_emb, last=True)")),))
    assert amp126(files) == [("taming/models/cond_transformer.py", 21, "AMP126"),
                             ("taming/models/vqgan.py", 39, "AMP126")]


_METHOD = '''import torch


class Model:
    def __init__(self, net, fuse):
        self.net, self.fuse = net, fuse
        self.opt_g = torch.optim.AdamW(net.parameters())
        self.opt_f = torch.optim.AdamW(fuse.parameters())
        self.scaler = torch.amp.GradScaler("cuda")

    def amp_step(self, optimizer, update=True):
        self.scaler.step(optimizer)
        if update:
            self.scaler.update()

    def optimize(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.fuse(self.net(x)).sum()
        self.scaler.scale(loss).backward()
        self.amp_step(self.opt_g)
        self.amp_step(self.opt_f)
'''

_FUNCTION = '''import torch


def scaler_step(scaler, optimizer, update=False):
    scaler.step(optimizer)
    if update:
        scaler.update()


def train(net, head, x):
    opt_a = torch.optim.AdamW(net.parameters())
    opt_b = torch.optim.AdamW(head.parameters())
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = head(net(x)).sum()
    scaler.scale(loss).backward()
    scaler_step(scaler, opt_a, update=True)
    scaler_step(scaler, opt_b, True)
'''

_NEGATED = '''import torch


class Trainer:
    def __init__(self, net, head):
        self.opt_a = torch.optim.AdamW(net.parameters())
        self.opt_b = torch.optim.AdamW(head.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
        self.net, self.head = net, head

    def _step(self, optimizer, *, skip_update=False):
        self.scaler.step(optimizer)
        if not skip_update:
            self.scaler.update()

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.head(self.net(x)).sum()
        self.scaler.scale(loss).backward()
        self._step(self.opt_a)
        self._step(self.opt_b)
'''


@pytest.mark.parametrize("source, line", [
    (_METHOD, 20),  # a method's default, through self
    (_FUNCTION, 17),  # a function's default False overridden by both calls, keyword and positional
    (_NEGATED, 20),  # `if not skip_update:` with a keyword-only default False
])
def test_one_file_forms_of_the_flag(source, line):
    assert amp126({"probe/train.py": source}) == [("train.py", line, "AMP126")]


@pytest.mark.parametrize("source, old, new", [
    (_METHOD, "self.amp_step(self.opt_g)", "self.amp_step(self.opt_g, update=False)"),
    (_METHOD, "        if update:\n", "        update = update and self.scaler.is_enabled()\n        if update:\n"),
    (_FUNCTION, "scaler_step(scaler, opt_a, update=True)", "scaler_step(scaler, opt_a)"),
    (_FUNCTION, "scaler_step(scaler, opt_a, update=True)", "scaler_step(scaler, opt_a, *flags)"),
    (_NEGATED, "self._step(self.opt_a)", "self._step(self.opt_a, skip_update=True)"),
])
def test_one_file_twins_stay_silent(source, old, new):
    assert old in source
    assert amp126({"probe/train.py": source.replace(old, new)}) == []


def test_torch_update_between_steps_changes_the_scale_the_second_step_unscales_by():
    """torch 2.13 CPU: after an inf step, `update()` halves the scale, so the second
    optimizer's gradients (scaled by 65536) are unscaled by 32768: twice too large."""
    torch = pytest.importorskip("torch")
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt_a, opt_b = torch.optim.SGD([a], lr=1.0), torch.optim.SGD([b], lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0)
    loss = (a * float("inf")).sum() + b.sum()
    scaler.scale(loss).backward()
    scaler.step(opt_a)
    scaler.update()
    assert scaler.get_scale() == 32768.0
    scaler.step(opt_b)
    assert b.item() == pytest.approx(1.0 - 2.0)  # lr 1, true gradient 1, applied as 2
