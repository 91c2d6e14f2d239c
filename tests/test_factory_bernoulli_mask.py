"""AMP101 and a mask drawn from a factory: `torch.bernoulli(torch.full(shape, p)).bool()` keeps
the factory's float32 through `bernoulli` (torch keeps its input's dtype: checked in
tests/test_dtype_rules.py) and ends it at `.bool()`, so the float32 factory never meets the half
model's data. Shaped like baaivision/EVA's EVA-CLIP text encoder (`hf_model.py`: masked-language
inputs drawn with `torch.bernoulli(torch.full(input_ids.shape, 0.8)).bool()` in a model that the
builder makes half); read on the real tree by r17-realread (4 false AMP101 findings)."""

from __future__ import annotations

import torch

from amplint.analysis.engine import Settings, lint_source

SETTINGS = Settings(frozenset({"AMP101"}))

HEAD = '''import torch
import torch.nn as nn


class HFTextEncoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(n, n)

    def forward(self, x):
        return self.proj(x)

    def mask(self, input_ids, hidden, mask_token_id):
'''

TAIL = '''

def build():
    return HFTextEncoder(8).half()
'''


def _codes(body: str):
    return [d.code for d in lint_source("hf_model.py", HEAD + body + TAIL, SETTINGS).diagnostics]


def test_a_bernoulli_mask_of_a_factory_is_silent():
    assert _codes(
        "        replaced = torch.bernoulli(torch.full(input_ids.shape, 0.8)).bool()\n"
        "        input_ids[replaced] = mask_token_id\n"
        "        return input_ids\n") == []


def test_the_bernoulli_draw_meeting_the_half_hidden_state_is_still_reported():
    assert _codes(
        "        keep = torch.bernoulli(torch.full(hidden.shape, 0.8))\n"
        "        return hidden * keep\n") == ["AMP101"]


def test_the_premises_under_torch():
    draw = torch.bernoulli(torch.full((4,), 0.8))
    assert draw.dtype == torch.float32 and draw.bool().dtype == torch.bool
    hidden = torch.ones(4, dtype=torch.float16)
    assert (hidden * draw).dtype == torch.float32  # the silent upcast AMP101 names
