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
from amplint.analysis.project.first_pass_ast import ast_first_pass, framework_call
from amplint.analysis.project.ast_summary import Refusal, ast_summary
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
    "train = dict(output_dir='out', amp=dict(enabled=True))\n",
    "import lightning as L\ntrainer = L.Trainer(\n    precision  # mixed\n    ='16-mixed')\n",
    "from transformers import TrainingArguments\nargs = TrainingArguments('o', bf16 \\\n    =flag)\n",
    "from accelerate import Accelerator\nacc = Accelerator(mixed_precision =\n    'bf16')\n",
]


@pytest.mark.parametrize("text", SETTINGS)
def test_every_setting_the_libcst_summary_finds_keeps_the_file_on_libcst(text):
    """Sensitivity: each text holds a setting LibCST's summary finds, and the gate sends it
    there."""
    module = parse(text)
    assert portable_summary("m.py", text, module, FileFacts(module)).settings
    # the text gate, or the calls' check after the `ast` walk (`bf16=` alone is not in
    # SETTING_TEXT: not summarised)
    assert not ast_first_pass(text) or isinstance(ast_summary("m.py", text, check=framework_call), Refusal)


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


# lightning/fabric/strategies/ddp.py's shape: `precision=` passed on to a base class, a
# parameter called `enabled`, `bf16` in strings, Lightning's own `Accelerator`: the first
# pass's plain-word gate sent it (and ten files like it on Lightning) to LibCST for a summary
# without a setting
STRATEGY = '''"""Strategy for multi-process single-device training (lightning/fabric/strategies/ddp.py)."""
from contextlib import nullcontext

from torch.nn import Module
from torch.nn.parallel.distributed import DistributedDataParallel

from maskx.accelerators import Accelerator
from maskx.strategies.parallel import ParallelStrategy

_PRECISIONS = ("bf16-true", "bf16-mixed", "32-true")


class DDPStrategy(ParallelStrategy):
    def __init__(self, accelerator: Accelerator = None, precision=None, **kwargs):
        super().__init__(accelerator=accelerator, precision=precision)
        self._ddp_kwargs = kwargs

    def setup_module(self, module: Module) -> DistributedDataParallel:
        return DistributedDataParallel(module=module, **self._ddp_kwargs)

    def no_backward_sync(self, module: Module, enabled: bool):
        if not enabled:
            return nullcontext()
        return module.no_sync()
'''
# the same with a name bound to an import's attribute in a function (transformers'
# utils/import_utils.py patches `torch.gather` so): LibCST's facts resolve it at its calls, and
# so does the `ast` summary (ast_aliases.py); it stayed on LibCST for that before
ALIASED = STRATEGY + '''

def patch_gather():
    import torch

    original_gather = torch.gather

    def patched_gather(input, dim, index):
        return original_gather(input, dim, index)

    torch.gather = patched_gather
'''


def _strategy_project(tmp_path, text):
    root = _project(tmp_path)
    (root / "maskx" / "strategies").mkdir()
    (root / "maskx" / "strategies" / "__init__.py").write_text("")
    (root / "maskx" / "strategies" / "ddp.py").write_text(text)
    return root, str(root / "maskx" / "strategies" / "ddp.py")


def test_the_words_alone_no_longer_send_a_settingless_strategy_to_libcst():
    for text in (STRATEGY, ALIASED):
        assert needs_summary(text) and ast_first_pass(text)
        assert not could_match(text, Settings.default().rules())
        # what the gate tested before: `enabled`, `bf16`, `precision` beside `Accelerator`
        assert "enabled" in text and "bf16" in text and "Accelerator" in text


# the strategy calling its own helper with `precision=` in a file that says `Trainer`
# (lightning/pytorch/strategies/deepspeed.py: `_format_precision_config(..., precision=...)`)
HELPER = STRATEGY + '''

def _format_precision_config(config, precision):
    """The config for the engine's `precision` (see `pl.Trainer`)."""
    if precision in ("16-mixed", "bf16-mixed"):
        config["mode"] = precision
    return config


def setup_config(config, plugin):
    return _format_precision_config(config, precision=plugin.precision)
'''
# the same file holding a setting find_settings finds: it stays on LibCST
SETTING = HELPER + '''

def make_trainer():
    from lightning.pytorch import Trainer as PLTrainer

    return PLTrainer(precision="16-mixed")
'''


@pytest.mark.parametrize("text, parses", [(HELPER, 0), (SETTING, 1)])
def test_a_helper_called_with_precision_is_summarised_from_ast(tmp_path, monkeypatch, text, parses):
    """Cold `-j 1` run: the project's finding stays; the strategy calling its own helper with
    `precision=` is parsed by LibCST 0 times in the first pass (main: 1, for the words
    `Trainer` and `precision=`), the one that makes a Trainer with a precision once; the
    first pass's summary equals LibCST's in both (the setting's included)."""
    root, path = _strategy_project(tmp_path, text)
    counts = _first_pass_parses(monkeypatch)
    assert cli_findings(root, "--no-cache", "--jobs", "1") == [RCNN]
    assert counts.get(text, 0) == parses
    result = process_item((path, Settings.default(), RunOptions(), (), True))
    module = parse(text)
    assert result.summary == portable_summary(path, text, module, FileFacts(module))
    assert bool(result.summary.settings) == bool(parses)


@pytest.mark.parametrize("text", [STRATEGY, ALIASED])
def test_the_first_pass_parses_no_settingless_strategy_with_libcst(tmp_path, monkeypatch, text):
    """Cold `-j 1` run: the project's finding stays; the strategy's text is parsed by LibCST
    0 times in the first pass, the one with an alias too (main: 1, its summary from LibCST),
    and the first pass's summary equals LibCST's in both."""
    root, path = _strategy_project(tmp_path, text)
    counts = _first_pass_parses(monkeypatch)
    assert cli_findings(root, "--no-cache", "--jobs", "1") == [RCNN]
    assert counts.get(text, 0) == 0
    result = process_item((path, Settings.default(), RunOptions(), (), True))
    module = parse(text)
    assert result.summary == portable_summary(path, text, module, FileFacts(module))
    assert result.summary.classes and not result.diagnostics


@pytest.mark.parametrize("text", [
    ALIASED,
    "import torch.nn.functional as F\nloss = F.binary_cross_entropy\ndef f(x):\n    return loss(x)\n",
    "import torch\ntry:\n    pass\nfinally:\n    def f(x):\n        g = torch.gather\n        return g(x)\n",
    "from functools import partial as P\nimport torch\nclip = P(torch.nn.utils.clip_grad_norm_, max_norm=1)\n"
    "def step(m):\n    clip(m.parameters())\n",
    "class A:\n    def f(self, x):\n        import torch\n        g = torch.gather\n        return g(x)\n",
])
def test_the_ast_summary_resolves_the_alias_as_libcst_does(text):
    """The `ast` summary names what an alias names (`torch.gather`, not a local
    `original_gather`), as LibCST's facts do: main's on-demand summaries named a local."""
    from amplint.analysis.project.ast_summary import ast_summary

    module = parse(text)
    fast = ast_summary("m.py", text)
    assert not isinstance(fast, Refusal)
    assert fast == portable_summary("m.py", text, module, FileFacts(module))


@pytest.mark.parametrize("text", [
    "from m import Accelerator\nclass S:\n    def __init__(self, mixed_precision):\n        self.mixed_precision = mixed_precision\n",
    "from m import Trainer\nclass S:\n    def f(self):\n        self.precision = 'bf16-mixed'\n",
    "from m import Fabric\nMODES = {'bf16': 16, 'fp16': 16}\n",
])
def test_no_keyword_no_libcst(text):
    """An attribute or a string named like a keyword holds no setting: the gate lets the
    summary come from `ast`, which equals LibCST's."""
    module = parse(text)
    summary = portable_summary("m.py", text, module, FileFacts(module))
    assert not summary.settings and ast_first_pass(text)
