"""The project pass's index queries do not grow with the number of files (issue 34), counted,
not timed.

A project laid out like mmdetection 2 (`mmdetx/models/detectors/base.py` with an `@auto_fp16`
forward calling `self.forward_train`, two detectors deriving from it in other files) plus n
unrelated model files, and the same with 4n. Which files may subclass a class was a test of
every file of the project per subclass wave (n per wave); it is now a lookup of the names in
an index of class-base words built once. The lookups' work must be the same for n and 4n,
each file's text must be read once for the index however many waves and queries ask, and the
project pass's answer must not change."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build

BASE = '''import torch.nn as nn
from mmcv.runner import auto_fp16


class BaseDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fp16_enabled = False

    @auto_fp16(apply_to=("img",))
    def forward(self, img, return_loss=True):
        if return_loss:
            return self.forward_train(img)
        return self.simple_test(img)
'''

TWO_STAGE = '''import torch
from .base import BaseDetector


class TwoStageDetector(BaseDetector):
    def forward_train(self, img):
        return torch.log_softmax(img, dim=-1)
'''

CASCADE = '''import torch
from .two_stage import TwoStageDetector


class CascadeRCNN(TwoStageDetector):
    def forward_train(self, img):
        return torch.log_softmax(img, dim=1).sum()
'''

FILLER = '''import torch
import torch.nn as nn


class Neck{i}(nn.Module):
    def forward(self, x):
        return torch.relu(x) + {i}
'''


class _CountingFiles(dict):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.reads = 0

    def __getitem__(self, path):
        self.reads += 1
        return super().__getitem__(path)


def _project(fillers: int):
    files = {
        "mmdetx/models/detectors/base.py": BASE,
        "mmdetx/models/detectors/two_stage.py": TWO_STAGE,
        "mmdetx/models/detectors/cascade_rcnn.py": CASCADE,
    }
    for i in range(fillers):
        files[f"mmdetx/models/necks/neck{i}.py"] = FILLER.format(i=i)
    return build(files, Settings.default())


def _queries(project):
    """Two subclass questions from a fresh index, with the text reads they cause."""
    dispatch = project.dispatch
    dispatch._subclasses.clear()
    dispatch.bases.examined = 0
    first = dispatch.subclasses("mmdetx/models/detectors/base.py", "BaseDetector")
    second = dispatch.subclasses("mmdetx/models/detectors/two_stage.py", "TwoStageDetector")
    return first, second, dispatch.bases.examined


def test_subclass_lookups_do_not_grow_with_the_files():
    small, large = _project(20), _project(80)
    small_answer = _queries(small)
    large_answer = _queries(large)
    assert small_answer[:2] == large_answer[:2]
    assert small_answer[0] == [("mmdetx/models/detectors/two_stage.py", "TwoStageDetector"),
                               ("mmdetx/models/detectors/cascade_rcnn.py", "CascadeRCNN")]
    assert small_answer[2] == large_answer[2] > 0  # the same index entries stepped over


def test_the_index_reads_each_text_once():
    project = _project(40)
    files = _CountingFiles(project.files)
    project.files = files
    project.dispatch.words.clear()
    project.dispatch.bases._files = None
    for _ in range(3):
        _queries(project)
    assert files.reads == len(project.python)


def test_the_dispatched_region_reaches_the_subclasses():
    project = _project(20)
    targets = {entry.target for entry in project.entries_for("mmdetx/models/detectors/two_stage.py")}
    assert "TwoStageDetector.forward_train" in targets
    targets = {entry.target for entry in project.entries_for("mmdetx/models/detectors/cascade_rcnn.py")}
    assert "CascadeRCNN.forward_train" in targets
