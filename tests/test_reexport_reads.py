"""A package's `__init__.py` that only re-exports a name is read from its imports, not
summarised (issue 34, round 36): `from d2lite.engine import clip_and_step` resolves through
engine/__init__.py and engine/amp/__init__.py to engine/amp/clip.py, and once no loop over
every summary made is ahead (here: the scaler pass after the project pass), neither `__init__`
is summarised. Everything else is what the summaries give: the same findings, entries and
parse-budget counts; `__init__` files resolved before that point (the class flow's seeds) are
summarised as before.

The project is shaped like detectron2: `d2lite/modeling/__init__.py` re-exports
`meta_arch/__init__.py` and `roi_heads/__init__.py` (with an absolute `from d2lite.layers
import ShapeSpec` and a computed `__all__`), and `tools/train_net.py` steps a GradScaler through
a helper re-exported by `engine/__init__.py` and `engine/amp/__init__.py` that clips before it
unscales (AMP120); its clean twin unscales first and uses the logits loss."""

from __future__ import annotations

import ast

import pytest

import amplint.analysis.engine as engine
import amplint.analysis.project as project_module
from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project, resolve
from amplint.analysis.project.reexports import reexport
from amplint.analysis.project.summary import summarize
from tests.project_files import load
from tests.test_project import findings

SETTINGS = Settings.default()
ENGINE_INITS = {"reexport_d2/d2lite/engine/__init__.py", "reexport_d2/d2lite/engine/amp/__init__.py"}
# AMP120 at train_net.py's call only: `clip_and_step`'s scaler is its parameter and it scales
# nothing, so the missing unscale is the caller's (r16b-scalerfp; clip.py:5 was the same hazard)
FOUND = [
    ("reexport_d2/d2lite/modeling/meta_arch/rcnn.py", 15, "AMP102"),
    ("reexport_d2/d2lite/modeling/roi_heads/mask_head.py", 8, "AMP102"),
    ("reexport_d2/tools/train_net.py", 16, "AMP120"),
]
CLEAN = (
    ("    torch.nn.utils.clip_grad_norm_", "    scaler.unscale_(optimizer)\n    torch.nn.utils.clip_grad_norm_"),
    ("F.binary_cross_entropy(probs, gt_classes)", "F.binary_cross_entropy_with_logits(logits, gt_classes)"),
    ("F.binary_cross_entropy(mask_probs,", "F.binary_cross_entropy_with_logits(pred_mask_logits,"),
)


def _run(monkeypatch, files, light: bool = True):
    """(the project object of a lint_project run, its findings, LibCST parses of summaries)."""
    made, parses = [], []
    init = project_module.ProjectFacts.__init__
    parse = project_module.parse_or_none

    def capture(self, *args, **kwargs):
        made.append(self)
        init(self, *args, **kwargs)

    def counted(text):
        parses.append(text)
        return parse(text)

    monkeypatch.setattr(project_module.ProjectFacts, "__init__", capture)
    monkeypatch.setattr(project_module, "parse_or_none", counted)
    # train_net.py's AMP120 at the call (the clip of clip.py, reached through both inits) is the
    # evidence the helper was resolved; a plain run drops it as the duplicate of clip.py's
    monkeypatch.setattr(engine, "chain_duplicates", lambda results: set())
    if not light:
        monkeypatch.setattr(resolve, "reexport", lambda path, text, name: None)
    found = findings(lint_project(files, SETTINGS))
    monkeypatch.undo()
    return made[-1], found, parses


def test_re_exports_through_two_inits_are_read_without_summaries(monkeypatch):
    files = load("reexport_d2")
    project, found, parses = _run(monkeypatch, files)
    assert found == FOUND
    assert not ENGINE_INITS & set(project.summaries)
    assert not any(files[path] in parses for path in ENGINE_INITS)
    # modeling's inits were resolved by the class flow's seeds, before the last loop over
    # every summary: summarised as before
    assert "reexport_d2/d2lite/modeling/__init__.py" in project.summaries
    base, base_found, base_parses = _run(monkeypatch, files, light=False)
    assert ENGINE_INITS <= set(base.summaries)
    assert len(base.summaries) - len(project.summaries) == 2
    assert len(base_parses) - len(parses) == 2
    assert base_found == found
    assert {p: base.entries_for(p) for p in files} == {p: project.entries_for(p) for p in files}
    assert base.flow._parses == project.flow._parses
    assert base.resolve_ref("reexport_d2/tools/train_net.py", "d2lite.engine.clip_and_step") == (
        "reexport_d2/d2lite/engine/amp/clip.py", ("clip_and_step",))


def test_clean_twin_is_silent():
    assert findings(lint_project(load("reexport_d2", replace=CLEAN), SETTINGS)) == []


FLAT = '''"""Doc."""
from d2lite.layers import ShapeSpec
from .meta_arch import GeneralizedRCNN, build_model
from .meta_arch import build_model as make
from .roi_heads import *
import d2lite.utils.env
import numpy as np
setup = d2lite.utils.env.setup_environment()
_EXCLUDE = {"ShapeSpec"}
__all__ = [k for k in globals().keys() if k not in _EXCLUDE]
'''
NOT_FLAT = [
    "try:\n    from .fast import nms\nexcept ImportError:\n    from .slow import nms\n",
    "from .a import f\nif True:\n    g = 1\n",
    "from .a import f\ndel f\n",
    "from .a import f\nclass f:\n    pass\n",
]


def _summary_answer(text: str, name: str):
    """What resolve.py reads of `name` in a summary of `text` (the base's reading)."""
    summary = summarize("pkg/__init__.py", text)
    if name in summary.classes or name in summary.functions or (
            summary.flow is not None and name in summary.flow.globals and name not in summary.imports):
        return ("defined", "")
    if name in summary.imports:
        return ("import", summary.imports[name])
    return ("absent", "")


@pytest.mark.parametrize("name", ["ShapeSpec", "GeneralizedRCNN", "build_model", "make", "np",
                                  "mask_rcnn_loss", "nothing"])
def test_a_flat_init_answers_as_its_summary(name):
    assert reexport("pkg/__init__.py", FLAT, name) == _summary_answer(FLAT, name)


@pytest.mark.parametrize("name", ["setup", "_EXCLUDE", "__all__", "k", "globals", "d2lite"])
def test_a_name_a_flat_init_mentions_otherwise_asks_the_summary(name):
    assert reexport("pkg/__init__.py", FLAT, name) is None


@pytest.mark.parametrize("text", NOT_FLAT)
def test_an_init_that_is_not_flat_asks_the_summary(text):
    ast.parse(text)
    assert reexport("pkg/__init__.py", text, "nms" if "nms" in text else "f") is None
