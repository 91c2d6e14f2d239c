"""The class flow's call-site search (issue 14): only files whose text can hold a call site
that binds a parameter are parsed for it, and every such site is still found."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.flowindex import _binding_call

SETTINGS = Settings.default()


@pytest.mark.parametrize("text, kept", [
    ("out = model.forward(x)\n", True),
    ("y = forward(x, mask=m)\n", True),
    ("y = forward(\n    x)\n", True),
    ("run = partial(forward, scale=2)\n", True),
    ("def forward(self, x):\n    return x\n", False),
    ("async def forward(self, x):\n    return x\n", False),
    ("y = super().forward(x)\n", False),
    ("y = super(Net, self).forward(x)\n", False),
    ("y = model.forward()\n", False),  # no argument: binds nothing
    ("y = preforward(x)\n", False),
    # a file that binds `super` itself: its `super().forward(x)` is a call site like any
    ("from helpers import super\ny = super().forward(x)\n", True),
])
def test_which_texts_can_hold_a_call_site(text, kept):
    assert _binding_call("forward", text) is kept


NET = """import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return F.binary_cross_entropy(torch.sigmoid(x), x)
"""
ENGINE = """import torch


def fit(model, x):
    with torch.autocast("cuda"):
        return model(x)
"""
MAIN = """from engine import fit
from net import Net


def main(x):
    return fit(Net(), x)
"""
OTHER = """class Loop:
    def fit(self, data):
        return data

    def run(self):
        return self.fit()
"""


def test_the_search_parses_no_file_that_only_defines_the_name():
    files = {"proj/net.py": NET, "proj/engine.py": ENGINE, "proj/main.py": MAIN}
    alone = [d.code for d in lint_project(dict(files), SETTINGS)["proj/net.py"].diagnostics]
    assert alone == ["AMP102"]  # `model` of fit() holds a Net: its forward runs under the region
    for index in range(20):
        files[f"proj/loops/loop_{index}.py"] = OTHER
    assert [d.code for d in lint_project(dict(files), SETTINGS)["proj/net.py"].diagnostics] == alone
    project = build(files)
    assert "proj/main.py" in project.parsed
    assert not [path for path in project.parsed if "/loops/" in path]
