"""The class flow's call-site search scans the project's texts for stores of an attribute
(site_files._stored_anywhere, one read of every file for an attribute stored nowhere) only
where the answer can drop a file, and reads the asking file first (issue 26's cost line):
counted, not timed.

A project laid out like huggingface/transformers: `trainer.py`'s Trainer calls its own
`self._run_epoch(self.model, loader)` and `self.prediction_step(self.model, inputs)`, methods
that no file stores (they are only defined and called); `trainer_seq2seq.py`'s Seq2SeqTrainer
overrides `prediction_step` and calls it the same way. A question about `_run_epoch`'s
parameters finds its one caller file, the file asked about, which is kept whatever its text
says: it scans no file for stores of `_run_epoch` (before, it read every file of the project).
The call sites found, and the files dropped, are the same whatever the order of the questions.
The models (`modeling_*.py`) call their own `self.loss_fn(...)`; the trainer stores
`self.loss_fn = ...`: that store is found in the trainer's text, read first."""

from __future__ import annotations

import pytest

from amplint.analysis.project import build
from amplint.analysis.project import site_files

ROOT = "src/transformers"
TRAINER = """import torch


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def train(self, loader):
        for epoch in range(self.args.num_train_epochs):
            self._run_epoch(self.model, loader)

    def _run_epoch(self, model, loader):
        for inputs, labels in loader:
            self.loss_fn(model(inputs), labels).backward()

    def evaluate(self, loader):
        return [self.prediction_step(self.model, inputs) for inputs in loader]

    def prediction_step(self, model, inputs):
        with torch.no_grad():
            return model(inputs)
"""
SEQ2SEQ = """from transformers.trainer import Trainer


class Seq2SeqTrainer(Trainer):
    def evaluate(self, loader, max_length=None):
        self.max_length = max_length
        return [self.prediction_step(self.model, inputs) for inputs in loader]

    def prediction_step(self, model, inputs):
        return model.generate(inputs, max_length=self.max_length)
"""
MODELING = """import torch.nn as nn


class {name}ForSequenceClassification(nn.Module):
    def __init__(self, hidden, labels):
        super().__init__()
        self.classifier = nn.Linear(hidden, labels)

    def loss_fn(self, logits, labels):
        return nn.functional.cross_entropy(logits, labels)

    def forward(self, x, labels):
        return self.loss_fn(self.classifier(x), labels)
"""
MODELS = ["Bert", "Roberta", "Gpt2"]


def _files():
    files = {f"{ROOT}/__init__.py": "", f"{ROOT}/models/__init__.py": "",
             f"{ROOT}/trainer.py": TRAINER, f"{ROOT}/trainer_seq2seq.py": SEQ2SEQ}
    for name in MODELS:
        files[f"{ROOT}/models/modeling_{name.lower()}.py"] = MODELING.format(name=name)
    return files


def _question(path: str, key: str) -> tuple:
    return ("bind", (f"{ROOT}/{path}", key), False)


def test_a_method_called_in_its_own_file_only_asks_no_scan_for_stores():
    flow = build(_files()).flow
    sites = flow._call_sites("_run_epoch", _question("trainer.py", "Trainer._run_epoch"))
    assert [(path, key, callee) for path, key, callee, _, _ in sites] == \
        [(f"{ROOT}/trainer.py", "Trainer.train", ("self", "_run_epoch"))]
    assert "_run_epoch" not in flow.site_files._stored  # no file read for its stores


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_the_call_sites_do_not_depend_on_the_order_of_the_questions(order):
    """Each file's answer is kept per (name, file), read only where it can drop the file: a
    question about the subclass's method drops the trainer's file (Trainer derives from nothing
    in the project, so its `self.prediction_step` holds its own method), one about Trainer's
    keeps the subclass's file, whatever the order."""
    questions = [_question("trainer.py", "Trainer.prediction_step"),
                 _question("trainer_seq2seq.py", "Seq2SeqTrainer.prediction_step")]
    # Seq2SeqTrainer derives from Trainer but its body defines `prediction_step` itself: its
    # `self.prediction_step(...)` holds its own override (site_text.in_class_defining), so its
    # file is dropped for Trainer's question too (round 49 kept it: `self.m` may hold a
    # base's method; the class flow then read the call as the override's)
    expected = [[(f"{ROOT}/trainer.py", "Trainer.evaluate")],
                [(f"{ROOT}/trainer_seq2seq.py", "Seq2SeqTrainer.evaluate")]]
    flow = build(_files()).flow
    for index in order:
        sites = flow._call_sites("prediction_step", questions[index])
        assert [(path, key) for path, key, _, _, _ in sites] == expected[index]
    assert flow.site_files._stored == {"prediction_step": False}


def test_the_store_is_looked_for_in_the_asking_file_first(monkeypatch):
    files = _files()
    project = build(files)
    trainer = f"{ROOT}/trainer.py"
    # the model files, each calling `self.loss_fn(...)`, come before the trainer
    before = project.python[:project.python.index(trainer)]
    assert sum("self.loss_fn(" in files[path] for path in before) == len(MODELS)
    read = []
    word_uses = site_files._word_uses

    def counting(text, word):
        read.append(word)
        return word_uses(text, word)

    monkeypatch.setattr(site_files, "_word_uses", counting)
    sites = project.flow.site_files
    # the trainer's `self.loss_fn(...)` may call what its `self.loss_fn = ...` stores (asked
    # for a function `loss_fn` of another file, which no `self.loss_fn` inherits)
    assert sites.may_reach(trainer, "loss_fn", ("bind", (f"{ROOT}/losses.py", "loss_fn"), False), False) is True
    assert sites._stored == {"loss_fn": True}
    assert read.count("loss_fn") == 1  # the trainer's text only, not the models' before it
