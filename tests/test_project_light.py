"""The cheap class index (`light_index.py`) and the planned seed files (`seed_files.py`,
issue 34): the files a framework's text test picks and their subclasses are summarised only
when a setting whose models are not known reads every summary, not those whose classes no
framework can run; the project pass's answer is the one a summary of every such file gives.

The project is detectron2's `projects/` layout (tests/projects/d2_roi_heads: a train_net.py
and a `@ROI_HEADS_REGISTRY.register()` head) with, as in detectron2's own repository, a unit
test module importing `detectron2.modeling` (`class TestSoftMask(unittest.TestCase)`), a
blocks module whose `nn.Module` classes the heads build on, and a head written as
`modeling.StandardROIHeads` that only the subclass expansion finds (through the block's
name, which the index must still supply)."""

from __future__ import annotations

import importlib

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.light_index import harmless, light_file
from tests.test_project import findings, load

SETTINGS = Settings.default()

UNIT_TEST = '''import unittest

import torch
import torch.nn.functional as F
from detectron2.modeling import build_model


class TestSoftMask(unittest.TestCase):
    def forward(self, logits, gt):
        return F.binary_cross_entropy(logits.sigmoid(), gt)

    def test_build(self):
        self.assertIsNotNone(build_model)
'''

BLOCKS = '''"""Blocks for the custom heads (the mask branch of detectron2.modeling's heads)."""
import torch
import torch.nn as nn


class MaskBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))
'''

EXTRA_HEADS = '''import torch.nn.functional as F
from detectron2 import modeling

from d2_custom.blocks import MaskBlock


class BoundaryHead(MaskBlock, modeling.StandardROIHeads):
    def forward(self, logits, gt):
        return F.binary_cross_entropy(logits.sigmoid(), gt)
'''


PLAIN_TRAIN = """from detectron2.engine import AMPTrainer


def run(model, loader, optimizer):
    AMPTrainer(model, loader, optimizer).train(0, 1000)
"""


def _files(enabled: bool = True):
    # AMPTrainer given a model no config names: every class detectron2 may run is seeded
    files = load("d2_roi_heads", [("ENABLED: True", "ENABLED: False")])
    if enabled:
        files["d2_roi_heads/plain_train.py"] = PLAIN_TRAIN
    files["d2_roi_heads/d2_custom/tests/test_soft_mask.py"] = UNIT_TEST
    files["d2_roi_heads/d2_custom/blocks.py"] = BLOCKS
    files["d2_roi_heads/d2_custom/extra_heads.py"] = EXTRA_HEADS
    return files


def _summarise_up_front(monkeypatch):
    """The old way: every planned file summarised at once, harmless or not."""
    seed_files = importlib.import_module("amplint.analysis.project.seed_files")
    plan = seed_files.SeedFiles.__init__

    def eager(self, project, chosen):
        plan(self, project, chosen)
        self.materialise(None)

    monkeypatch.setattr(seed_files.SeedFiles, "__init__", eager)


UNIT = "d2_roi_heads/d2_custom/tests/test_soft_mask.py"


def test_harmless_files_stay_unparsed_and_the_seeds_do_not_change(monkeypatch):
    files = _files()
    project = build(files, SETTINGS)
    assert UNIT not in project.summaries and project.is_deferred(UNIT)
    # found through MaskBlock's name, which only the index gave (blocks.py, planned unparsed)
    assert project.summaries["d2_roi_heads/d2_custom/extra_heads.py"] is not None
    found = findings(lint_project(files, SETTINGS))
    assert found == [
        ("d2_roi_heads/d2_custom/extra_heads.py", 9, "AMP102"),
        ("d2_roi_heads/d2_custom/roi_heads.py", 8, "AMP102"),
    ]
    # the same with every file the text test picks summarised up front
    _summarise_up_front(monkeypatch)
    full = build(files, SETTINGS)
    assert UNIT in full.summaries
    assert {p: full.entries_for(p) for p in files} == {p: project.entries_for(p) for p in files}
    assert findings(lint_project(files, SETTINGS)) == found


def test_clean_twin_without_mixed_precision_is_silent():
    assert findings(lint_project(_files(enabled=False), SETTINGS)) == []


def test_a_config_that_names_the_model_reads_no_planned_file(monkeypatch):
    """train_net.py's yaml config turns AMP on and names SoftMaskROIHeads: only the config's
    classes are seeded, so the files the text test picks are never summarised for it."""
    files = _files(enabled=False)
    files["d2_roi_heads/configs/mask_rcnn_custom.yaml"] = files[
        "d2_roi_heads/configs/mask_rcnn_custom.yaml"].replace("ENABLED: False", "ENABLED: True")
    project = build(files, SETTINGS)
    for path in (UNIT, "d2_roi_heads/d2_custom/blocks.py", "d2_roi_heads/d2_custom/extra_heads.py"):
        assert path not in project.summaries and project.is_deferred(path)
    found = findings(lint_project(files, SETTINGS))
    assert found == [("d2_roi_heads/d2_custom/roi_heads.py", 8, "AMP102")]
    _summarise_up_front(monkeypatch)
    full = build(files, SETTINGS)
    assert "d2_roi_heads/d2_custom/extra_heads.py" in full.summaries
    assert {p: full.entries_for(p) for p in files} == {p: project.entries_for(p) for p in files}
    assert findings(lint_project(files, SETTINGS)) == found


def test_what_the_index_cannot_vouch_for_is_summarised():
    project = build(_files(), SETTINGS)
    tests = [lambda ref: ref.startswith("detectron2.modeling")]

    def cleared(text: str) -> bool:
        return harmless(project, "d2_roi_heads/d2_custom/x.py", light_file("x.py", text), tests)

    assert cleared(BLOCKS)
    assert not cleared(EXTRA_HEADS)  # a base that may lead into the project
    assert not cleared("from detectron2.modeling import Backbone\nclass B(Backbone):\n    pass\n")
    assert not cleared("from .blocks import MaskBlock\nclass B(MaskBlock):\n    pass\n")  # relative
    assert not cleared("import torch.nn as nn\nclass B(nn.Module):\n    pass\nclass B(nn.Module):\n    pass\n")
    assert not cleared("import contextlib\nwith contextlib.suppress(Exception):\n    class B:\n        pass\n")
    assert not cleared("import torch.nn as nn\nclass B(make_base(nn.Module)):\n    pass\n")
    assert not cleared("from detectron2.modeling import X_REGISTRY as R\n@R.register()\nclass B:\n    pass\n")
    assert not cleared("def f(:\n")  # Python cannot parse it
