"""The class flow's call-site search reads each file's recorded calls once, whatever the number
of names it is asked about (issue 34): counted (calls read), not timed.

A project laid out like facebookresearch/fairseq: `fairseq_cli/train.py` and
`fairseq_cli/validate.py` build a TransformerModel and hand it to the module-level steps of
`fairseq/trainer.py` (`trainer.train_step(sample, model, ...)`, `trainer.valid_step(...)`);
`train_step` runs the model under autocast, and the model's forward calls
`F.binary_cross_entropy` (AMP102), reached through the call sites' binding of `model`. The
search asks about `train_step`, `valid_step`, `build_model`, ...: before, every file that calls
one of them had all its recorded calls read again for each name (fairseq: 89,705 calls read,
7,319 now). The finding is the same; the clean twin (no autocast in `train_step`) is silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

SETTINGS = Settings.default()

MODEL = """import torch
import torch.nn as nn
import torch.nn.functional as F


class TransformerModel(nn.Module):
    def forward(self, x):
        return F.binary_cross_entropy(torch.sigmoid(x), x)


def build_model(cfg):
    return TransformerModel()
"""
TRAINER = """import torch


def train_step(sample, model, criterion=None, update_num=0):
    model.train()
    with torch.autocast("cuda"):
        loss = model(sample)
    return loss


def valid_step(sample, model, criterion=None):
    model.eval()
    return model(sample)
"""
TRAINER_CLEAN = TRAINER.replace('    with torch.autocast("cuda"):\n        loss = model(sample)\n',
                                "    loss = model(sample)\n")
TRAIN = """from fairseq import trainer
from fairseq.models.transformer import build_model


def main(cfg):
    model = build_model(cfg.model)
    for i, sample in enumerate(cfg.data):
        trainer.train_step(sample, model, criterion=cfg.criterion, update_num=i)
        if i % cfg.validate_interval == 0:
            trainer.valid_step(sample, model, criterion=cfg.criterion)
    return model
"""
VALIDATE = """from fairseq import trainer
from fairseq.models.transformer import build_model


def main(cfg, override_args=None):
    model = build_model(cfg.model)
    losses = [trainer.valid_step(sample, model) for sample in cfg.data]
    return losses


def cli_main(cfg):
    return main(cfg, override_args=cfg)
"""


def _files(trainer: str = TRAINER):
    return {
        "fairseq/__init__.py": "",
        "fairseq/models/__init__.py": "",
        "fairseq/models/transformer.py": MODEL,
        "fairseq/trainer.py": trainer,
        "fairseq_cli/train.py": TRAIN,
        "fairseq_cli/validate.py": VALIDATE,
    }


class _CountedCalls(list):
    """A function's recorded calls, counting the loops over them."""

    reads = 0

    def __iter__(self):
        _CountedCalls.reads += 1
        return super().__iter__()


def _brute_force(flow, name):
    found = []
    for path in flow._files_calling(name):
        facts = flow._flow(path)
        for key in sorted(facts.functions):
            found += [(path, key, callee, args, line)
                      for last, callee, args, line in facts.functions[key].calls if last == name]
    return found


def test_each_file_s_calls_are_read_once_for_all_names():
    flow = build(_files()).flow
    names = ["train_step", "valid_step", "build_model", "main"]
    wanted = {name: _brute_force(flow, name) for name in names}
    assert wanted["train_step"] and wanted["valid_step"] and wanted["build_model"]
    for path in flow.p.python:  # the recorded calls, counted from here on
        facts = flow._flow(path)
        for function in (facts.functions.values() if facts is not None else ()):
            function.calls = _CountedCalls(function.calls)
    flow._calls.clear()
    flow.__dict__.get("_by_name", {}).clear()
    _CountedCalls.reads = 0
    for name in names:
        assert flow._call_sites(name) == wanted[name]
    files = {path for name in names for path in flow._files_calling(name)}
    functions = sum(len(flow._flow(path).functions) for path in files)
    assert _CountedCalls.reads == functions  # once each (before: once per name asked)
    for name in names:  # asked again: the memo answers
        assert flow._call_sites(name) == wanted[name]
    assert _CountedCalls.reads == functions


def test_the_finding_through_the_call_sites_is_kept():
    found = lint_project(_files(), SETTINGS)
    assert [d.code for d in found["fairseq/models/transformer.py"].diagnostics] == ["AMP102"]


def test_clean_twin_is_silent():
    found = lint_project(_files(TRAINER_CLEAN), SETTINGS)
    assert not [d.code for result in found.values() for d in result.diagnostics if d.code != "AMP130"]
