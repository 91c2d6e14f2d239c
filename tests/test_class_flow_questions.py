"""The class flow's call-site questions read each mention's text once (issue 34): counted, not
timed.

A project laid out like facebookresearch/fairseq: `fairseq/modules/transformer_layer.py`'s
layer stores two of its constructor's parameters (`self.embed_dim = embed_dim`, `self.p =
dropout`), and the models build it in their own files (`TransformerEncoderLayer(args.dim,
args.dropout)`). A training script turns the model half, so the half spread asks what each
stored parameter may hold: one question per parameter, each over the same files. What the text
of each mention says (its callee, the slots its arguments fill) is the same for both
questions: it is read once, and the callee's check (site_files.py) is made once per question
that needs it, not once per parameter."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project import site_text

SETTINGS = Settings.default()
ROOT = "fairseq/fairseq"

LAYER = """import torch.nn as nn


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim, dropout):
        super().__init__()
        self.embed_dim = embed_dim
        self.p = dropout
        self.fc = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        return nn.functional.dropout(self.fc(x), p=self.p)
"""
MODEL = """import torch.nn as nn

from fairseq.modules.transformer_layer import TransformerEncoderLayer


class {name}Encoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.layers = nn.ModuleList(
            [TransformerEncoderLayer(args.encoder_dim, args.dropout) for _ in range(args.layers)]
        )
        self.last = TransformerEncoderLayer(args.encoder_dim, dropout=args.dropout)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.last(x)
"""
TRAIN = """import torch

from fairseq.models.{lower} import {name}Encoder


def main(args):
    model = {name}Encoder(args)
    model.half()
    return model(torch.zeros(2, args.encoder_dim).cuda())
"""
NAMES = ["Transformer", "Lightconv", "Fconv", "Lstm"]


def _files(models: int):
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/modules/__init__.py": "",
        f"{ROOT}/modules/transformer_layer.py": LAYER,
        f"{ROOT}/models/__init__.py": "",
    }
    for name in NAMES[:models]:
        files[f"{ROOT}/models/{name.lower()}.py"] = MODEL.format(name=name)
    files["fairseq/train.py"] = TRAIN.format(name=NAMES[0], lower=NAMES[0].lower())
    return files


def _count_chains(monkeypatch):
    counted = []
    chain = site_text.CodeText.chain

    def counting(self, position, name):
        counted.append(name)
        return chain(self, position, name)

    monkeypatch.setattr(site_text.CodeText, "chain", counting)
    return counted


def test_each_mention_is_read_once_whatever_the_parameters_asked(monkeypatch):
    counted = _count_chains(monkeypatch)
    files = _files(4)
    project = build(files)
    half = {cls for (_, cls) in project.flow.half_instances()}
    assert half == {"TransformerEncoder", "TransformerEncoderLayer"}
    # two parameters asked (embed_dim, dropout), the same two mentions in each model file
    mentions = sum(files[p].count("TransformerEncoderLayer(") for p in files if "/models/" in p)
    assert mentions == 8
    # each question stops at the first mention that keeps a file (here its first call): that
    # mention is read once, not once per parameter asked
    assert counted.count("TransformerEncoderLayer") == 4
    # the callee (an import) is checked once per file and question: the 4 model files for the
    # layer's constructor (both parameters), train.py for the encoder's
    assert project.flow._site_files.callees_checked == 5


def test_the_half_set_and_the_finding_do_not_depend_on_the_models_asked():
    assert {cls for (_, cls) in build(_files(1)).flow.half_instances()} == \
        {cls for (_, cls) in build(_files(4)).flow.half_instances()}
    found = lint_project(_files(4), SETTINGS)
    codes = sorted((p.rsplit("/", 1)[1], d.code) for p, r in found.items() for d in r.diagnostics if d.code != "AMP130")
    assert all(code != "AMP110" for _, code in codes)  # nothing here is a hazard: no false finding
