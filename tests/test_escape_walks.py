"""The project pass walks a region file's escapes (facts/escape.py) only where a value can
escape: a `with` of an active region (issue 26, its cost). Counted (walks made), not timed.

A project laid out like open-mmlab/mmdetection: mmdet/models/necks/fpn.py's `FPN.forward` runs
under mmcv's `@auto_fp16()` (a region by decorator, no `with`) and returns its outputs;
tools/train.py and mmdet/apis/train.py call it. No value leaves a decorator region by a `with`
ending, so no escaped value can be returned or passed from the neck: the pass does not walk it
(mmdet: 12 of the 19 walks of the mixed tree). There the module-output search
(module_outputs.py, which walks the files it reads) stops at its cap of calls before the heads
and necks, here after mmdet/apis/train.py's `model(data)` (a cap of 0). Its twin, the same neck with the region written
`with torch.autocast("cuda"):` around the lateral convs, is walked, and its return reaches the
caller in another file (escape_returns.py) as before."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

NECK = '''import torch
import torch.nn as nn
from mmcv.runner import BaseModule, auto_fp16


class FPN(BaseModule):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lateral = nn.Conv2d(in_channels, out_channels, 1)
        self.fp16_enabled = False

    @auto_fp16()
    def forward(self, inputs):
        laterals = self.lateral(inputs)
        return laterals

    def extract(self, inputs):
        outs = self.forward(inputs)
        return outs
'''
NECK_WITH = NECK.replace('''    @auto_fp16()
    def forward(self, inputs):
        laterals = self.lateral(inputs)
''', '''    def forward(self, inputs):
        with torch.autocast("cuda"):
            laterals = self.lateral(inputs)
''')
TRAIN = '''import torch
from mmdet.models.necks.fpn import FPN


def main(images):
    neck = FPN(3, 8)
    feats = neck.forward(images)
    bank = torch.zeros(8, 8)
    return torch.mm(feats.flatten(1), bank)
'''
APIS = '''import torch


def train_step(model, data, optimizer):
    with torch.autocast("cuda"):
        losses = model(data)
    losses.backward()
    optimizer.step()
'''
NECK_PATH = "mmdet/models/necks/fpn.py"
APIS_PATH = "mmdet/apis/train.py"


def _files(neck):
    return {APIS_PATH: APIS, NECK_PATH: neck, "tools/train.py": TRAIN}


def _walked(project):
    """The files whose escape walk the pass made."""
    parsed = project.__dict__.get("_entry_facts", {})
    return sorted(path for path, found in parsed.items() if found is not None and "escape" in found[1].__dict__)


@pytest.fixture
def capped(monkeypatch):
    import amplint.analysis.project.module_outputs as module_outputs

    monkeypatch.setattr(module_outputs, "_MAX_CALLS", 0)


def test_a_neck_with_decorator_regions_only_is_not_walked(capped):
    project = build(_files(NECK))
    project.entries_for("tools/train.py")
    assert NECK_PATH in project.__dict__.get("_entry_facts", {})  # read: it opens a region
    assert _walked(project) == [APIS_PATH]
    assert not project.__dict__.get("escape_returns")


def test_its_with_twin_is_walked_and_its_return_reaches_the_caller(capped):
    project = build(_files(NECK_WITH))
    project.entries_for("tools/train.py")
    assert _walked(project) == [APIS_PATH, NECK_PATH]
    assert set(project.__dict__.get("escape_returns", {})) == {"tools/train.py"}


def test_findings_are_those_of_the_walk():
    """The decorator neck: no AMP105 in the caller; the `with` twin: the caller's `torch.mm`."""
    def amp105(files):
        results = lint_project(files, Settings.default())
        return sorted((path, d.line) for path, r in results.items() for d in r.diagnostics if d.code == "AMP105")

    assert amp105(_files(NECK)) == []
    assert amp105(_files(NECK_WITH)) == [("tools/train.py", 9)]
