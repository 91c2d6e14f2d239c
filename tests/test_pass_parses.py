"""Python parses each file of a project run once (issue 34): the project pass summarises the
files a region reaches from `ast` on demand, and the lint after the pass read them again, with
a second `ast.parse` (the prefilter of a file with entries) or Python's syntax check
(`symtable`, a file without). The tree the pass made is held for the lint of a file the pass
gives entries (amplint.analysis.parsing.holding_trees), and a text Python accepted once is not
checked again (parsing.parsed_before).

The project is shaped like detectron2: a trainer (engine/train_loop.py) runs the model under
autocast; the model (modeling/meta_arch/rcnn.py) calls a box head of another file, whose loss
(layers/losses.py) takes the sigmoid's output: AMP102 there. The clean twin's loss uses the
with-logits loss and stays silent. The structures and the config module are summarised on
demand too, but get no entries. A real tree parses far more than the few trees python_tree
keeps between the pass and the lint: the test keeps one."""

from __future__ import annotations

import ast
import collections
import symtable

import pytest

from amplint.analysis import parsing, tree_cache
from project_files import cli_findings

TRAIN_LOOP = '''"""Training loops (detectron2/engine/train_loop.py)."""
import torch

from d2x.config import get_cfg
from d2x.modeling.meta_arch.rcnn import GeneralizedRCNN


class AMPTrainer:
    def __init__(self):
        self.model = GeneralizedRCNN(get_cfg())

    def run_step(self, data):
        with torch.autocast("cuda", dtype=torch.float16):
            losses = self.model(data)
        return losses
'''
CONFIG = '''"""Config defaults (detectron2/config/defaults.py)."""


def get_cfg():
    return {"num_classes": 80, "box_weight": 1.0}
'''
RCNN = '''"""Two-stage detector (detectron2/modeling/meta_arch/rcnn.py)."""
import torch
from torch import nn

from d2x.modeling.box_head import FastRCNNOutputs
from d2x.structures.boxes import Boxes


class GeneralizedRCNN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.head = FastRCNNOutputs(cfg["num_classes"])
        self.weight = cfg["box_weight"]

    def forward(self, batched_inputs):
        boxes = Boxes(batched_inputs["boxes"])
        scores = self.head.predict(batched_inputs["features"])
        return self.head.losses(scores, batched_inputs["labels"]) * self.weight + boxes.area().sum() * 0
'''
BOX_HEAD = '''"""Box head outputs (detectron2/modeling/roi_heads/fast_rcnn.py)."""
import torch
from torch import nn

from d2x.layers.losses import objectness_loss


class FastRCNNOutputs(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.cls_score = nn.Linear(256, num_classes)

    def predict(self, features):
        return self.cls_score(features)

    def losses(self, scores, labels):
        return objectness_loss(scores, labels)
'''
LOSSES = '''"""Losses (detectron2/layers/losses.py)."""
import torch
import torch.nn.functional as F


def objectness_loss(logits, labels):
    return F.binary_cross_entropy(torch.sigmoid(logits), labels.float())
'''
CLEAN_LOSSES = LOSSES.replace("F.binary_cross_entropy(torch.sigmoid(logits), labels.float())",
                              "F.binary_cross_entropy_with_logits(logits, labels.float())")
BOXES = '''"""Box structures (detectron2/structures/boxes.py)."""
import torch


class Boxes:
    def __init__(self, tensor):
        self.tensor = tensor

    def area(self):
        box = self.tensor
        return (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
'''


def _files(losses):
    return {
        "d2x/__init__.py": "", "d2x/config.py": CONFIG, "d2x/engine/__init__.py": "",
        "d2x/engine/train_loop.py": TRAIN_LOOP, "d2x/modeling/__init__.py": "",
        "d2x/modeling/meta_arch/__init__.py": "", "d2x/modeling/meta_arch/rcnn.py": RCNN,
        "d2x/modeling/box_head.py": BOX_HEAD, "d2x/layers/__init__.py": "",
        "d2x/layers/losses.py": losses, "d2x/structures/__init__.py": "",
        "d2x/structures/boxes.py": BOXES,
    }


def _texts(losses):
    return set(_files(losses).values())


def _project(tmp_path, losses):
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in _files(losses).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _counted_run(tmp_path, monkeypatch, losses):
    """The findings of a cold `-j 1` run, and the texts `ast.parse` and `symtable` read."""
    root = _project(tmp_path, losses)
    monkeypatch.setattr(tree_cache, "_TREES", collections.OrderedDict())
    monkeypatch.setattr(tree_cache, "_kept_chars", 0)
    monkeypatch.setattr(tree_cache, "_MAX_TREES", 1)  # a real tree: the pass's trees are gone by the lint
    for name in ("_HELD", "_HELD_PATHS"):  # (base has none of these)
        monkeypatch.setattr(tree_cache, name, {}, raising=False)
    monkeypatch.setattr(tree_cache, "_ACCEPTED", set(), raising=False)
    parses, checks = collections.Counter(), collections.Counter()
    real_parse, real_table = ast.parse, symtable.symtable

    def parse(source, *args, **kwargs):
        parses[source] += 1
        return real_parse(source, *args, **kwargs)

    def table(source, *args, **kwargs):
        checks[source] += 1
        return real_table(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", parse)
    monkeypatch.setattr(symtable, "symtable", table)
    return cli_findings(root, "--no-cache", "--jobs", "1"), parses, checks


@pytest.mark.parametrize("losses, findings", [
    (LOSSES, [("d2x/layers/losses.py", 7, "AMP102")]),
    (CLEAN_LOSSES, []),
])
def test_a_file_the_pass_summarised_and_gave_entries_is_parsed_once(tmp_path, monkeypatch, losses, findings):
    """The loss file and the box head: summarised on demand from `ast`, then linted with
    their entries. Base: `ast.parse` twice each (the summary, the lint's prefilter)."""
    found, parses, _ = _counted_run(tmp_path, monkeypatch, losses)
    assert found == findings
    assert parses[losses] == 1
    assert parses[BOX_HEAD] == 1
    assert max(parses[text] for text in _texts(losses)) == 1


def test_a_text_python_parsed_is_not_checked_again(tmp_path, monkeypatch):
    """The structures file is summarised on demand and then linted without entries; the empty
    `__init__.py` files are one text. Base: a `symtable` check of each after the pass (and
    of the empty text once per file)."""
    found, parses, checks = _counted_run(tmp_path, monkeypatch, LOSSES)
    assert found == [("d2x/layers/losses.py", 7, "AMP102")]
    assert parses[BOXES] == 1 and checks[BOXES] == 0
    assert not set(parses) & set(checks)  # no text both parsed and checked
    assert max(checks[text] for text in _texts(LOSSES)) == 1


def test_a_held_tree_is_taken_once_and_the_rest_are_dropped(monkeypatch):
    """What the pass holds: within `holding_trees` every new tree; after `keep_held(paths)`
    only the tagged trees of those files, each given to its first reader only; `drop_held`
    leaves nothing."""
    for name in ("_HELD", "_HELD_PATHS"):
        monkeypatch.setattr(tree_cache, name, {})
    monkeypatch.setattr(tree_cache, "_held_chars", 0)
    monkeypatch.setattr(tree_cache, "_TREES", collections.OrderedDict())
    monkeypatch.setattr(tree_cache, "_MAX_TREES", 0)
    kept, dropped = "x = 1\n", "y = 2\n"
    with parsing.holding_trees():
        tree = parsing.python_tree(kept)
        parsing.python_tree(dropped)
        parsing.tag_held("a.py", kept)
        parsing.tag_held("b.py", dropped)
    parsing.python_tree("z = 3\n")  # made after the pass: not held
    assert set(tree_cache._HELD) == {kept, dropped}
    parsing.keep_held(["a.py"])
    assert set(tree_cache._HELD) == {kept} and tree_cache._held_chars == len(kept)
    assert parsing.python_tree(kept) is tree
    assert parsing.python_tree(kept) is not tree  # taken: a fresh parse
    assert tree_cache._HELD == {} and tree_cache._HELD_PATHS == {} and tree_cache._held_chars == 0
    with parsing.holding_trees():
        parsing.python_tree(dropped)
    parsing.drop_held()
    assert tree_cache._HELD == {} and tree_cache._held_chars == 0


def test_a_broken_text_is_still_reported(monkeypatch):
    """Only accepted texts are remembered: a broken one is checked, and reported, each time."""
    monkeypatch.setattr(tree_cache, "_ACCEPTED", set())
    broken = "def f(:\n    pass\n"
    with pytest.raises(SyntaxError):
        parsing.python_tree(broken)
    assert "syntax error" in parsing.syntax_error(broken)
    assert "syntax error" in parsing.syntax_error(broken)
    assert parsing.syntax_error("x = 1\n") is None and parsing.parsed_before("x = 1\n")


TRAINER = '''"""A trainer with hooks (detectron2/engine/defaults.py)."""
import torch

from d2x.engine.hooks import EvalHook, LRScheduler, PeriodicCheckpointer


class DefaultTrainer:
    def __init__(self, cfg, model, optimizer, data_loader):
        self.cfg = cfg
        self.model = model
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.register_hooks(self.build_hooks())

    def build_hooks(self):
        cfg = self.cfg
        ret = [
            LRScheduler(self.optimizer),
            PeriodicCheckpointer(self.checkpointer, cfg["period"]),
        ]
        ret.append(EvalHook(cfg["eval_period"], lambda: self.test(cfg, self.model)))
        ret.append(EvalHook(cfg["eval_period"], lambda: self.after_test(self.model)))
        return ret

    def run_step(self):
        data = next(self.data_loader)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(data)
            self.log(loss.detach())
            self.storage.put(loss)
            self.storage.put(self.model.norm(data))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def after_step(self):
        for hook in self.hooks_of(self.cfg):
            hook.after_step()
        if self.should_eval(self.cfg):
            self.storage.put(self.test(self.cfg, self.model))
        while self.pending(self.cfg):
            self.flush(self.cfg)
'''


def _old_in_lambda(site) -> bool:
    """summary._in_lambda as base had it: a walk of the call's statement per call."""
    import libcst as cst

    from amplint.analysis.facts.tree import iter_nodes

    stmt = site.line_stmt if site.line_stmt is not None else site.top_stmt
    for node in iter_nodes(stmt) if stmt is not None else ():
        if isinstance(node, cst.Lambda) and any(inner is site.node for inner in iter_nodes(node.body)):
            return True
    return False


def test_the_summary_walks_each_statement_once_for_its_lambdas(monkeypatch):
    """The first pass's LibCST summary asks, for each call a region may reach, whether it sits
    in a lambda's body: one walk of each statement, not one per call (base: the class
    statement walked once per call in it that the class flow cannot resolve, 9 times here).
    The answers are base's, call by call."""
    import libcst as cst

    from amplint.analysis.facts import FileFacts
    from amplint.analysis.parsing import parse
    from amplint.analysis.project import summary as summary_module

    walks = []
    real = summary_module.iter_nodes
    monkeypatch.setattr(summary_module, "iter_nodes", lambda node: walks.append(node) or real(node))
    module = parse(TRAINER)
    made = summary_module.portable_summary("d2x/engine/defaults.py", TRAINER, module, FileFacts(module))
    assert made is not None and "DefaultTrainer.run_step" in made.functions
    statements = [id(node) for node in walks if isinstance(node, cst.BaseStatement)]
    assert len(statements) == len(set(statements))  # base: the class, once per call in a header
    monkeypatch.setattr(summary_module, "iter_nodes", real)
    sites = list(FileFacts(module).tree.calls)
    memo: dict = {}
    answers = [summary_module._in_lambda(site, memo) for site in sites]
    assert answers == [_old_in_lambda(site) for site in sites]
    assert answers.count(True) == 2  # self.test(...) and self.after_test(...)


def test_a_text_without_lambda_walks_no_statement_for_one(monkeypatch):
    """A file whose text holds no `lambda` has no lambda in its tree: no statement is walked
    for one (transformers: 37 of its 44 first-pass files; base walked each statement). The
    summary is the one base's walk per call makes."""
    from amplint.analysis.facts import FileFacts
    from amplint.analysis.parsing import parse
    from amplint.analysis.project import summary as summary_module

    text = TRAINER.replace("lambda: self.test(cfg, self.model)", "self.test").replace(
        "lambda: self.after_test(self.model)", "self.after_test")
    assert "lambda" not in text
    module = parse(text)
    monkeypatch.setattr(summary_module, "_in_lambda", lambda site, inside: _old_in_lambda(site))
    walked = summary_module.portable_summary("d2x/engine/defaults.py", text, module, FileFacts(module))
    monkeypatch.undo()
    walks = []
    real = summary_module.iter_nodes
    monkeypatch.setattr(summary_module, "iter_nodes", lambda node: walks.append(node) or real(node))
    made = summary_module.portable_summary("d2x/engine/defaults.py", text, module, FileFacts(module))
    assert walks == []
    assert made is not None and "DefaultTrainer.run_step" in made.functions
    assert repr(made) == repr(walked)


HEADS = '''"""Dense heads (mmdet/models/dense_heads/retina_head.py)."""
import torch.nn as nn

from mmdet.registry import MODELS


@MODELS.register_module()
class RetinaHead(nn.Module):
    def __init__(self, num_classes, in_channels, loss_cls=dict(type="FocalLoss")):
        super().__init__()
        self.cls_convs = nn.ModuleList([nn.Conv2d(in_channels, in_channels, 3) for _ in range(4)])
        self.retina_cls = nn.Conv2d(in_channels, num_classes, 3)

    def forward(self, x):
        for conv in self.cls_convs:
            x = conv(x)
        return self.retina_cls(x)
'''


def test_a_text_the_registry_search_parsed_is_not_checked_again(tmp_path, monkeypatch):
    """mmdetection's registry search reads the registrations of every file that registers a
    class (its own `ast` parse, which it changes); the lint after the pass then checked each
    such file with `symtable` (mmdet: 92 files)."""
    from amplint.run import project_inputs

    monkeypatch.setattr(tree_cache, "_ACCEPTED", set(), raising=False)
    path = tmp_path / "retina_head.py"
    path.write_text(HEADS)
    found = project_inputs.registrations_file(str(path))
    assert [name for _, name in found] == ["RetinaHead"]
    checks = []
    real = symtable.symtable
    monkeypatch.setattr(symtable, "symtable", lambda *a, **k: checks.append(1) or real(*a, **k))
    assert parsing.syntax_error(HEADS) is None
    assert checks == []


def test_accepted_texts_are_remembered_without_keeping_the_texts(monkeypatch):
    """The record of accepted texts holds keys, not the texts: keeping the texts held up to 32M
    characters alive (transformers: +80 MB peak); a text the record knows is not checked again."""
    import sys

    monkeypatch.setattr(tree_cache, "_ACCEPTED", set())
    text = "x = 1\n" + "# padding\n" * 1000
    parsing.python_tree(text)
    assert parsing.parsed_before(text) and not parsing.parsed_before(text + "\n")
    assert all(not isinstance(part, str) for key in tree_cache._ACCEPTED for part in key)
    assert sys.getsizeof(tree_cache._ACCEPTED) < len(text)
