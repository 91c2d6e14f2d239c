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
