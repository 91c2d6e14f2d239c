"""A method call whose name no project class has is answered without evaluating its receiver
(issue 34): counted (files summarised, questions answered by the text), not timed.

A project laid out like facebookresearch/detectron2: `detector_postprocess` (modeling/
postprocessing.py) runs under the fp16 autocast region `inference_on_image` opens
(engine/defaults.py) and converts its `image` with `image.astype(np.float32)`. Which functions a
call under a region runs is asked for every call on a held value (`call_targets`), so the
class flow asked what `image` may hold: a parameter, bound by `inference_on_image`'s own
`image`, bound in turn by every script that calls it (demo/, tools/), each one summarised for
it. A call `x.astype(...)` runs the `astype` of a project instance `x` holds (its
method, or a module stored under that name), and no file of the project defines or stores an
`astype`: the receiver's values cannot matter, and the scripts are not summarised for it. The
finding (AMP110, `-1e9` filled in float16 under the region) is the same; the clean twin
(`torch.finfo(scores.dtype).min`) is silent."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.site_files import SiteFiles

SETTINGS = Settings.default()

POSTPROCESSING = """import numpy as np
import torch


def detector_postprocess(scores, mask, image):
    image = image.astype(np.float32) / 255.0
    return scores.masked_fill(mask, -1e9).softmax(-1), image
"""
DEFAULTS = """import torch

from detectron2.modeling.postprocessing import detector_postprocess


def inference_on_image(scores, mask, image):
    with torch.autocast("cuda", dtype=torch.float16):
        return detector_postprocess(scores, mask, image)
"""
SCRIPT = """import numpy as np
import torch

from detectron2.engine.defaults import inference_on_image
from detectron2.data.detection_utils import read_image


def {name}(path, scores, mask):
    image = read_image(path)
    return inference_on_image(scores, mask, image)
"""
DETECTION_UTILS = """import numpy as np


def read_image(path):
    return np.load(path)
"""
SCRIPTS = ["demo/demo.py", "demo/predictor.py", "tools/visualize_data.py", "tools/lazyconfig_train_net.py"]


def _files(scripts: int = len(SCRIPTS), astype: str = "", finfo: bool = False):
    post = POSTPROCESSING.replace("-1e9", "torch.finfo(scores.dtype).min") if finfo else POSTPROCESSING
    files = {
        "detectron2/detectron2/__init__.py": "",
        "detectron2/detectron2/modeling/__init__.py": "",
        "detectron2/detectron2/modeling/postprocessing.py": post,
        "detectron2/detectron2/engine/__init__.py": "",
        "detectron2/detectron2/engine/defaults.py": DEFAULTS,
        "detectron2/detectron2/data/__init__.py": "",
        "detectron2/detectron2/data/detection_utils.py": DETECTION_UTILS + astype,
    }
    for path in SCRIPTS[:scripts]:
        name = path.rsplit("/", 1)[1][:-3]
        files[f"detectron2/{path}"] = SCRIPT.format(name=name)
    return files


def _scripts(paths):
    return sorted(p for p in paths if p.startswith(("detectron2/demo/", "detectron2/tools/")))


def test_the_receiver_of_a_method_no_class_has_is_not_evaluated():
    files = _files()
    project = build(files)
    assert [t for t in project.flow.call_targets(
        "detectron2/detectron2/modeling/postprocessing.py", "detector_postprocess", ("local", "image"), "astype",
    )] == []
    assert _scripts(files) and _scripts(project.parsed) == []
    assert project.flow.memberless >= 1
    # what the question costs does not grow with the scripts that call the predictor
    assert len(build(_files(1)).parsed) == len(project.parsed)


@pytest.mark.parametrize("astype", [
    "\n\nclass Image:\n    def astype(self, dtype):\n        return self\n",  # a method of that name
    "\n\nclass Holder:\n    def __init__(self, fn):\n        self.astype = fn\n",  # a stored attribute
])
def test_a_class_with_such_a_member_keeps_the_question(astype):
    """With a method or a stored attribute of that name anywhere, `image` may hold an instance
    whose `astype` is project code: the receiver is evaluated (and its callers summarised)."""
    files = _files(astype=astype)
    project = build(files)
    assert _scripts(project.parsed) == _scripts(files)


def test_the_finding_is_the_same_and_the_clean_twin_is_silent():
    found = lint_project(_files(), SETTINGS)
    codes = [(p.rsplit("/", 1)[1], d.code) for p, r in found.items() for d in r.diagnostics if d.code != "AMP130"]
    assert codes == [("postprocessing.py", "AMP110")]
    clean = lint_project(_files(finfo=True), SETTINGS)
    assert not [d.code for r in clean.values() for d in r.diagnostics if d.code != "AMP130"]


class _Project:
    def __init__(self, texts):
        self.files = {f"m{i}.py": text for i, text in enumerate(texts)}
        self.python = sorted(self.files)


class _Flow:
    def __init__(self, texts):
        self.p = _Project(texts)


@pytest.mark.parametrize("text, member", [
    ("y = x.m(1)\nz = obj.m (\n    2)\n", False),
    ("def mm(x):\n    pass\nm_ = 1\n", False),
    ("class A:\n    def m(self):\n        pass\n", True),
    ("class A:\n    async def m(self):\n        pass\n", True),
    ("class A:\n    def  m (self):\n        pass\n", True),
    ("self.m = fn\n", True),
    ("class A:\n    m = staticmethod(fn)\n", True),
    ("# def m is elsewhere\n", True),  # comments and strings count: conservative
])
def test_what_counts_as_a_member(text, member):
    assert SiteFiles(_Flow([text]), None).member_anywhere("m") is member
