"""A subclass's `super().__init__(...)` is a call site of its base's constructor only with the
arguments it passes (issue 34): counted (files summarised), not timed.

A project laid out like facebookresearch/detectron2: `AMPTrainer.run_step` (engine/train_loop.py)
runs the RPN under an fp16 autocast region; `RPN.forward` (modeling/proposal_generator/rpn.py)
calls `self.anchor_generator(features)`, a module `RPN.__init__` stores from its keyword-only
parameter `anchor_generator`. What that parameter may hold is what the constructor's call sites
pass, and a file defining a subclass of RPN whose `__init__` calls `super().__init__(...)` was
summarised as one, whatever it passes: rrpn.py's `super().__init__(*args, **kwargs)` (flowfacts
records no argument after a starred one) and TridentNet's `super(TridentRPN, self).__init__(cfg,
input_shape)` (positions 0 and 1, never the keyword-only `anchor_generator`) bind nothing asked,
and are no longer summarised for it. A subclass passing `anchor_generator=` still is. The
finding (AMP110, `-1e9` filled in float16 in the anchor generator the region reaches) is the
same; the clean twin (`torch.finfo(scores.dtype).min`) is silent."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.site_text import CodeText

SETTINGS = Settings.default()
ROOT = "detectron2/detectron2"

RPN = """import torch
from torch import nn


class RPN(nn.Module):
    def __init__(self, cfg=None, input_shape=None, *, head=None, anchor_generator=None):
        super().__init__()
        self.rpn_head = head
        self.anchor_generator = anchor_generator

    def forward(self, features, mask):
        anchors = self.anchor_generator(features, mask)
        return self.rpn_head(features), anchors
"""
RRPN = """from detectron2.modeling.proposal_generator.rpn import RPN


class RRPN(RPN):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
"""
TRIDENT_RPN = """from detectron2.modeling.proposal_generator.rpn import RPN


class TridentRPN(RPN):
    def __init__(self, cfg, input_shape):
        super(TridentRPN, self).__init__(cfg, input_shape)
        self.num_branch = cfg.num_branch
"""
# a subclass that does pass the parameter asked about (the guard)
PASSING_RPN = """from detectron2.modeling.proposal_generator.rpn import RPN


class PassingRPN(RPN):
    def __init__(self, generator):
        super().__init__(anchor_generator=generator)
"""
ANCHOR_GENERATOR = """import torch
from torch import nn


class DefaultAnchorGenerator(nn.Module):
    def forward(self, scores, mask):
        return scores.masked_fill(mask, -1e9).softmax(-1)
"""
RPN_HEAD = """from torch import nn


class StandardRPNHead(nn.Module):
    def forward(self, features):
        return features
"""
TRAIN_LOOP = """import torch

from detectron2.modeling.anchor_generator import DefaultAnchorGenerator
from detectron2.modeling.proposal_generator.rpn import RPN
from detectron2.modeling.proposal_generator.rpn_head import StandardRPNHead


class AMPTrainer:
    def __init__(self):
        self.rpn = RPN(head=StandardRPNHead(), anchor_generator=DefaultAnchorGenerator())

    def run_step(self, features, mask):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.rpn(features, mask)
"""
SUBCLASSES = {
    f"{ROOT}/modeling/proposal_generator/rrpn.py": RRPN,
    "detectron2/projects/TridentNet/tridentnet/trident_rpn.py": TRIDENT_RPN,
}


def _files(passing: bool = False, finfo: bool = False):
    generator = ANCHOR_GENERATOR.replace("-1e9", "torch.finfo(scores.dtype).min") if finfo else ANCHOR_GENERATOR
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/engine/__init__.py": "",
        f"{ROOT}/engine/train_loop.py": TRAIN_LOOP,
        f"{ROOT}/modeling/__init__.py": "",
        f"{ROOT}/modeling/anchor_generator.py": generator,
        f"{ROOT}/modeling/proposal_generator/__init__.py": "",
        f"{ROOT}/modeling/proposal_generator/rpn.py": RPN,
        f"{ROOT}/modeling/proposal_generator/rpn_head.py": RPN_HEAD,
    }
    for path, text in SUBCLASSES.items():
        files[path] = text
    if passing:
        files[f"{ROOT}/modeling/proposal_generator/passing_rpn.py"] = PASSING_RPN
    return files


def _subclass_files(paths):
    return sorted(p for p in paths if p.endswith(("rrpn.py", "trident_rpn.py", "passing_rpn.py")))


def test_the_region_reaches_the_anchor_generator_through_the_stored_parameter():
    project = build(_files())
    targets = project.flow.call_targets(f"{ROOT}/modeling/proposal_generator/rpn.py", "RPN.forward",
                                        ("self", "anchor_generator"), "")
    assert [(t[0][0].rsplit("/", 1)[1], t[0][1]) for t in targets] == [
        ("anchor_generator.py", "DefaultAnchorGenerator.forward")]


def test_subclasses_whose_super_init_passes_nothing_asked_are_not_summarised():
    files = _files()
    project = build(files)
    project.flow.call_targets(f"{ROOT}/modeling/proposal_generator/rpn.py", "RPN.forward",
                              ("self", "anchor_generator"), "")
    assert _subclass_files(files) and _subclass_files(project.parsed) == []
    assert project.flow.site_files.supers_spared >= 2


def test_a_subclass_passing_the_parameter_is_still_a_call_site():
    files = _files(passing=True)
    project = build(files)
    project.flow.call_targets(f"{ROOT}/modeling/proposal_generator/rpn.py", "RPN.forward",
                              ("self", "anchor_generator"), "")
    assert _subclass_files(project.parsed) == [f"{ROOT}/modeling/proposal_generator/passing_rpn.py"]


def test_the_finding_is_the_same_and_the_clean_twin_is_silent():
    found = lint_project(_files(), SETTINGS)
    codes = [(p.rsplit("/", 1)[1], d.code) for p, r in found.items() for d in r.diagnostics if d.code != "AMP130"]
    assert codes == [("anchor_generator.py", "AMP110")]
    clean = lint_project(_files(finfo=True), SETTINGS)
    assert not [d.code for r in clean.values() for d in r.diagnostics if d.code != "AMP130"]


@pytest.mark.parametrize("text, found", [
    (RRPN, ["*args, **kwargs"]),
    (TRIDENT_RPN, ["cfg, input_shape"]),
    ("class A(B):\n    def __init__(self):\n        super().__init__()\n", [""]),
    ("class A(B):\n    def __init__(self):\n        super (A, self) . __init__ (x=1)\n", ["x=1"]),
    # comments and strings are not code; `my_super().__init__` is another function's
    ("# super().__init__(model)\ns = 'super().__init__(model)'\nmy_super().__init__(model)\n", []),
])
def test_super_init_arguments_are_read_from_the_code(text, found):
    assert CodeText(text).super_init_args() == found
