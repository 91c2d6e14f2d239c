"""A function held on `self` from a constructor argument and called later (gpt-neox's attention
keeps its mask function this way: `ParallelSelfAttention(..., mask_func)` stores it and calls
`self.mask_func(scores, mask)` in forward). Exact or nothing: the stored function is known only
when every construction of the file passes the same module-level def and nothing else writes
the attribute."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

SETTINGS = Settings(frozenset({"AMP110"}))

HEAD = """import torch
import torch.nn as nn

def gpt2_mask(scores, mask):
    scores.masked_fill_(mask, -10000.0 * 10)
    return scores

def safe_mask(scores, mask):
    scores.masked_fill_(mask, torch.finfo(scores.dtype).min)
    return scores

class SelfAttention(nn.Module):
    def __init__(self, hidden, mask_func, dropout=0.0):
        super().__init__()
        self.query_key_value = nn.Linear(hidden, 3 * hidden)
        self.mask_func = mask_func
    def forward(self, x, mask):
        q, k, v = self.query_key_value(x).chunk(3, dim=-1)
        scores = torch.bmm(q, k.transpose(1, 2))
        scores = self.mask_func(scores, mask)
        return torch.bmm(scores.softmax(-1), v)
"""

RUN = """
def train_step(x, mask):
    layer = {ctor}.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        return layer(x, mask)
"""


def codes(extra: str, ctor: str = "SelfAttention(64, gpt2_mask)") -> list:
    result = lint_source("transformer.py", HEAD + extra + RUN.format(ctor=ctor), SETTINGS)
    assert not result.errors
    return [(d.code, d.line) for d in result.diagnostics]


@pytest.mark.parametrize("ctor", [
    "SelfAttention(64, gpt2_mask)",
    "SelfAttention(64, mask_func=gpt2_mask)",
    "SelfAttention(hidden=64, dropout=0.1, mask_func=gpt2_mask)",
])
def test_constructor_function_stored_on_self_is_called_under_autocast(ctor):
    assert codes("", ctor) == [("AMP110", 5)]


def test_every_construction_passing_the_same_function_keeps_it_known():
    extra = "\ndef build_eval():\n    return SelfAttention(32, gpt2_mask)\n"
    assert codes(extra) == [("AMP110", 5)]


@pytest.mark.parametrize("ctor,extra", [
    ("SelfAttention(64, safe_mask)", ""),  # the clean twin: the safe function
    # another construction passes another function: which one `layer` holds is not known here
    ("SelfAttention(64, gpt2_mask)", "\ndef build_eval():\n    return SelfAttention(32, safe_mask)\n"),
    # the attribute is written again after construction
    ("SelfAttention(64, gpt2_mask)", "\ndef patch(m):\n    m.mask_func = safe_mask\n"),
    # a subclass may construct it with anything
    ("SelfAttention(64, gpt2_mask)", "\nclass Cross(SelfAttention):\n    pass\n"),
    # the class passed on as a value: built elsewhere with unknown arguments
    ("SelfAttention(64, gpt2_mask)", "\nLAYERS = {'attn': SelfAttention}\n"),
    # the function name bound twice in the module
    ("SelfAttention(64, gpt2_mask)", "\ngpt2_mask = safe_mask\n"),
])
def test_unknown_or_safe_stored_function_stays_silent(ctor, extra):
    assert codes(extra, ctor) == []


def test_a_parameter_of_the_constructing_function_is_not_the_module_def():
    source = HEAD + """
def train_step(x, mask, gpt2_mask=safe_mask):
    layer = SelfAttention(64, gpt2_mask).cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        return layer(x, mask)
"""
    assert [d.code for d in lint_source("t.py", source, SETTINGS).diagnostics] == []


def test_the_parameter_rebound_in_the_constructor_is_unknown():
    source = HEAD.replace(
        "        self.mask_func = mask_func\n",
        "        mask_func = mask_func or safe_mask\n        self.mask_func = mask_func\n",
    ) + RUN.format(ctor="SelfAttention(64, gpt2_mask)")
    assert [d.code for d in lint_source("t.py", source, SETTINGS).diagnostics] == []


# Stability-AI/generative-models (sgm): the discriminator loss picks its function by name in
# `__init__` and stores it, `self.disc_loss = hinge_d_loss`, then calls `self.disc_loss(...)`.
SGM = """import torch
import torch.nn.functional as F

def vanilla_d_loss(logits_real, logits_fake):
    probs = torch.sigmoid(torch.cat([logits_real, logits_fake]))
    targets = torch.cat([torch.ones_like(logits_real), torch.zeros_like(logits_fake)])
    return F.binary_cross_entropy(probs, targets)

def logits_d_loss(logits_real, logits_fake):
    logits = torch.cat([logits_real, logits_fake])
    targets = torch.cat([torch.ones_like(logits_real), torch.zeros_like(logits_fake)])
    return F.binary_cross_entropy_with_logits(logits, targets)

class GeneralLPIPSWithDiscriminator(torch.nn.Module):
    def __init__(self, disc_loss="vanilla"):
        super().__init__()
        self.discriminator = torch.nn.Linear(4, 1)
{store}
    def forward(self, real, fake):
        return self.disc_loss(self.discriminator(real), self.discriminator(fake))

def train_step(real, fake):
    loss_fn = GeneralLPIPSWithDiscriminator()
    with torch.autocast("cuda"):
        return loss_fn(real, fake)
"""


def sgm_codes(store: str) -> list:
    result = lint_source("losses.py", SGM.format(store=store), Settings(frozenset({"AMP102"})))
    assert not result.errors
    return [(d.code, d.line) for d in result.diagnostics]


def test_module_function_stored_on_self_is_called_under_autocast():
    assert sgm_codes("        self.disc_loss = vanilla_d_loss") == [("AMP102", 7)]


@pytest.mark.parametrize("store", [
    "        self.disc_loss = logits_d_loss",  # the clean twin: the with-logits form
    # two stores: which one runs is not known here
    "        if disc_loss == 'vanilla':\n            self.disc_loss = vanilla_d_loss\n"
    "        else:\n            self.disc_loss = logits_d_loss",
    # a local of the constructor of the same name
    "        vanilla_d_loss = logits_d_loss\n        self.disc_loss = vanilla_d_loss",
])
def test_other_or_unknown_module_function_stays_silent(store):
    assert sgm_codes(store) == []
