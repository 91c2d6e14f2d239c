"""The first pass summarises a file that needs a summary for its text alone (`precision = ...`
in an evaluator, `fp16=` ...) from Python's `ast` when no rule could match it, it opens no
region and it can hold no framework setting (amplint.analysis.project.first_pass_ast;
issue 34). The project is tests/projects/d2_lazy_scope (detectron2's LazyConfig layout) with
an evaluator module shaped like detectron2/evaluation/coco_evaluation.py."""

from __future__ import annotations

import os
import shutil

import libcst
import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.prefilter import could_match
from amplint.analysis.project import needs_summary
from amplint.analysis.project import frameworks as fw
from amplint.analysis.project.first_pass_ast import ast_first_pass
from amplint.analysis.project.summary import CALLER_TEXT, portable_summary
from amplint.run.per_file import RunOptions, process_item
from tests.project_files import PROJECTS, cli_findings

EVALUATOR = '''"""COCO-style box and mask evaluation (detectron2/evaluation/coco_evaluation.py)."""
import itertools

import torch


class COCOEvaluator:
    def __init__(self, dataset_name, max_dets_per_image=100):
        self._dataset_name = dataset_name
        self._max_dets_per_image = max_dets_per_image
        self._predictions = []

    def process(self, inputs, outputs):
        for output in outputs:
            self._predictions.append(output["instances"].to(torch.device("cpu")))

    def evaluate(self, scores, labels, threshold=0.5):
        predicted = scores > threshold
        tp = int((predicted & labels).sum())
        fp = int((predicted & ~labels).sum())
        precision = tp / max(tp + fp, 1)
        per_class = [precision for _ in itertools.repeat(None, 1)]
        return {"AP": 100 * precision, "per_class": per_class}
'''
RCNN = ("maskx/modeling/rcnn.py", 16, "AMP102")


def _project(tmp_path, amp=True):
    root = tmp_path / "d2_lazy_scope"
    shutil.copytree(os.path.join(PROJECTS, "d2_lazy_scope"), root)
    (root / "maskx" / "evaluation").mkdir()
    (root / "maskx" / "evaluation" / "__init__.py").write_text("")
    (root / "maskx" / "evaluation" / "coco_evaluation.py").write_text(EVALUATOR)
    if not amp:
        config = root / "configs" / "mask_rcnn_amp.py"
        config.write_text(config.read_text().replace("enabled = True", "enabled = False"))
    return root


def _first_pass_parses(monkeypatch):
    """text -> LibCST parses of it during the first pass (phase 1 of the runner)."""
    import amplint.run.runner as runner

    counts = {}
    phase = [None]
    real_parse, real_map = libcst.parse_module, runner.cached_map

    def counting_parse(source, *args, **kwargs):
        if phase[0] == "lint":
            counts[source] = counts.get(source, 0) + 1
        return real_parse(source, *args, **kwargs)

    def mapped(cache, kind, *args, **kwargs):
        phase[0] = kind
        try:
            return real_map(cache, kind, *args, **kwargs)
        finally:
            phase[0] = None

    monkeypatch.setattr(libcst, "parse_module", counting_parse)
    monkeypatch.setattr(runner, "cached_map", mapped)
    return counts


def test_the_evaluator_needs_a_summary_but_no_rule_matches_it():
    assert needs_summary(EVALUATOR) and ast_first_pass(EVALUATOR)
    assert not could_match(EVALUATOR, Settings.default().rules())


@pytest.mark.parametrize("amp, findings", [(True, [RCNN]), (False, [])])
def test_the_first_pass_does_not_parse_a_settingless_file_with_libcst(tmp_path, monkeypatch,
                                                                     amp, findings):
    """Cold `-j 1` run: the findings are the project's (the clean twin, AMP off, is silent)
    and the evaluator's text is parsed by LibCST 0 times in the first pass (1 before)."""
    root = _project(tmp_path, amp)
    counts = _first_pass_parses(monkeypatch)
    assert cli_findings(root, "--no-cache", "--jobs", "1") == findings
    assert counts.get(EVALUATOR, 0) == 0
    config = (root / "configs" / "mask_rcnn_amp.py").read_text()
    assert counts.get(config) == 1  # a file with a setting still goes to LibCST


def test_the_summary_from_ast_equals_the_one_from_libcst(tmp_path):
    root = _project(tmp_path)
    path = str(root / "maskx" / "evaluation" / "coco_evaluation.py")
    result = process_item((path, Settings.default(), RunOptions(), (), True))
    module = parse(EVALUATOR)
    assert result.summary == portable_summary(path, EVALUATOR, module, FileFacts(module))
    assert result.summary.classes and not result.diagnostics and not result.errors
    assert result.scaler is False


SETTINGS = [
    "import lightning as L\ntrainer = L.Trainer(precision='16-mixed')\n",
    "from lightning.fabric import Fabric as F\nfabric = F(precision='bf16-mixed')\n",
    "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='fp16')\n",
    "from transformers import Seq2SeqTrainingArguments\nargs = Seq2SeqTrainingArguments('o', fp16=True)\n",
    "from transformers import TrainingArguments\nargs = TrainingArguments('o', bf16=flag)\n",
    "from mmengine.optim import AmpOptimWrapper\nw = AmpOptimWrapper(optimizer=o)\n",
    "optim_wrapper = dict(type='AmpOptimWrapper', optimizer=dict(type='SGD'))\n",
    "from detectron2.engine import AMPTrainer as T\ntrainer = T(model, loader, optim)\n",
    "from detectron2.engine import AMPTrainer\nclass Trainer(AMPTrainer):\n    pass\n",
    "cfg.SOLVER.AMP.ENABLED = True\n",
    "train.amp.enabled = True\n",
]


@pytest.mark.parametrize("text", SETTINGS)
def test_every_setting_the_libcst_summary_finds_keeps_the_file_on_libcst(text):
    """Sensitivity: each text holds a setting LibCST's summary finds, and the gate sends it
    there."""
    module = parse(text)
    assert portable_summary("m.py", text, module, FileFacts(module)).settings
    assert not ast_first_pass(text)  # (`bf16=` alone is not in SETTING_TEXT: not summarised)


@pytest.mark.parametrize("text", [
    "precision = tp / (tp + fp)\n",
    "parser.add_argument('--fp16', action='store_true')\n",
    "with torch.autocast('cuda'):\n    y = m(x)\n",
    "x = 1  # optim_context auto_fp16 AMP.ENABLED amp.enabled AmpOptimWrapper AMPTrainer bp16 = 1\n",
    "a = 'nothing here'\n",
    "bf16=1\nfp16 =2\n",
])
def test_the_plain_word_tests_agree_with_the_regexes(text):
    assert needs_summary(text) == bool(CALLER_TEXT.search(text) or fw.SETTING_TEXT.search(text))


def test_the_plain_word_tests_agree_with_the_regexes_on_torch():
    import torch

    root = os.path.dirname(torch.__file__)
    seen = 0
    for folder in ("nn", "optim", "amp", "cuda", "utils"):
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith(".py"):
                    with open(os.path.join(directory, name), encoding="utf-8") as handle:
                        text = handle.read()
                    assert needs_summary(text) == bool(
                        CALLER_TEXT.search(text) or fw.SETTING_TEXT.search(text)), name
                    seen += 1
    assert seen > 100


def test_warm_runs_follow_an_edit_of_another_file(tmp_path, monkeypatch):
    """The evaluator's first-pass result (its summary from `ast`) comes from the cache; an
    edit of the config alone turns the finding off and on again."""
    root = _project(tmp_path)
    cache = str(tmp_path / "cache")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == [RCNN]
    config = root / "configs" / "mask_rcnn_amp.py"
    text = config.read_text()
    config.write_text(text.replace("enabled = True", "enabled = False"))
    counts = _first_pass_parses(monkeypatch)
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == []
    assert counts.get(EVALUATOR, 0) == 0 and counts.get(config.read_text()) == 1
    config.write_text(text)
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == [RCNN]
