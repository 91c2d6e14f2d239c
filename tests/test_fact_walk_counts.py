"""What the per-file facts walk, counted (issue 26's cost line): the dtype fact's `self.<attr>(x)`
reads (facts/instance_forwards.py) ask for the file-wide count of `.attr` stores only when the
attribute holds an instance of a module class of the file, not for every `self.<attr>(...)`
call; that count walks the whole module once (facts/param_defaults.py).

The layer is shaped like fairseq's TransformerEncoderLayer (fairseq/modules/transformer_layer.py):
`self.activation_fn = utils.get_activation_fn(...)` and `self.dropout_module = FairseqDropout(...)`,
both called in `forward`, neither a class of the file. Under torch 2.13 CPU autocast (bfloat16
or float16) `fc2`'s output is half, so `masked_fill(mask, -1e9)` overflows float16 (AMP110) on
both sides.
"""

from __future__ import annotations

import pytest

import amplint.analysis.facts.param_defaults as param_defaults
from amplint.analysis.engine import Settings, lint_source

LAYER = '''import torch
from torch import nn

from fairseq_like import utils
from fairseq_like.modules import FairseqDropout


class TransformerEncoderLayer(nn.Module):
    def __init__(self, dim, activation="relu"):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.activation_fn = utils.get_activation_fn(activation)
        self.dropout_module = FairseqDropout(0.1)

    def forward(self, x, mask):
        with torch.autocast("cuda"):
            h = self.dropout_module(self.activation_fn(self.fc1(x)))
            scores = self.fc2(h)
            scores = scores.masked_fill(mask, -1e9)
        return scores.softmax(-1)
'''

# the same layer with a head class of the file, moved and held on `self`, then called: its
# forward is read (instance_forwards.held)
HEAD = '''

class ScoreHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class HeadedLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.head = ScoreHead(dim).cuda()

    def forward(self, x, mask):
        with torch.autocast("cuda"):
            scores = self.head(x)
            scores = scores.masked_fill(mask, -1e9)
        return scores
'''


@pytest.fixture
def walks(monkeypatch):
    """The whole-module walks of ParamDefaults (one per file at most: memoised)."""
    made = []
    inner = param_defaults.ParamDefaults._mentions

    def counted(self, name):
        if self._names is None:
            made.append(1)
        return inner(self, name)

    monkeypatch.setattr(param_defaults.ParamDefaults, "_mentions", counted)
    return made


def _findings(source):
    result = lint_source("transformer_layer.py", source, Settings.default())
    return sorted((d.line, d.code) for d in result.diagnostics if d.code == "AMP110")


def test_calls_of_attributes_holding_no_class_of_the_file_walk_nothing(walks):
    assert _findings(LAYER) == [(20, "AMP110")]
    assert walks == []


def test_an_attribute_holding_a_module_class_of_the_file_is_still_counted(walks):
    assert _findings(LAYER + HEAD) == [(20, "AMP110"), (41, "AMP110")]
    assert walks == [1]


def test_a_second_store_of_the_attribute_leaves_the_instance_unknown(walks):
    # a head ending in `.float()` is read as float32 (silent); with `.head` stored a second
    # time in the file the instance is unknown and `scores` half as before
    floated = (LAYER + HEAD).replace("return self.proj(x)", "return self.proj(x).float()")
    assert _findings(floated) == [(20, "AMP110")]
    restored = floated + "\n\ndef rebuild(layer, dim):\n    layer.head = nn.Linear(dim, dim)\n"
    assert _findings(restored) == [(20, "AMP110"), (41, "AMP110")]
    assert walks == [1, 1]
