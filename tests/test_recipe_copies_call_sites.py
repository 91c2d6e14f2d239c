"""The class flow's call-site questions on many near-identical recipe folders (issue 34): counted,
not timed.

A project laid out like k2-fsa/icefall: `egs/<corpus>/ASR/<recipe>/train.py`, one per recipe,
each defining and calling the same model class and helpers (`Transducer`, `get_model`,
`compute_loss`, `run`). A recipe turns
its model half and passes it to its own `compute_loss`, so the half spread asks, per recipe, what
`compute_loss`'s parameters hold: a call-site search of `compute_loss`, whose text is in every
recipe. In every other recipe the name calls that recipe's own `def compute_loss`, which is no
call site of the function asked about whatever the question: each file is read for that once
per name, not once per question (icefall, 1,468 files: 222,815 file checks on the base code).
A recipe that imports another recipe's helper is still read for every question."""

from __future__ import annotations

import collections

from amplint.analysis.project import build
from amplint.analysis.project import site_files

TRAIN = """import torch
import torch.nn as nn


class Transducer(nn.Module):
    def __init__(self, encoder, decoder, vocab_size):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.out = nn.Linear(vocab_size, vocab_size)

    def forward(self, x):
        return self.out(self.decoder(self.encoder(x)))


def get_model(params):
    encoder = nn.Linear(params.dim, params.dim)
    decoder = nn.Linear(params.dim, params.dim)
    return Transducer(encoder=encoder, decoder=decoder, vocab_size=params.dim)


def compute_loss(params, model, batch):
    with torch.cuda.amp.autocast(enabled=params.use_fp16):
        out = model(batch)
    return out.sum()


def run(params, batch):
    model = get_model(params)
    model.half()
    loss = compute_loss(params, model, batch)
    loss.backward()
"""
# egs/<corpus>/ASR/<recipe>/finetune.py of a recipe: the helpers of its train.py, imported
FINETUNE = """from train import compute_loss, get_model


def finetune(params, batch):
    model = get_model(params)
    model.half()
    return compute_loss(params, model, batch)
"""


def _files(recipes: int, finetune: bool = False):
    files = {}
    for i in range(recipes):
        folder = f"egs/corpus{i // 4}/ASR/recipe{i % 4}"
        files[f"{folder}/train.py"] = TRAIN
    if finetune:
        files["egs/corpus0/ASR/recipe0/finetune.py"] = FINETUNE
    return files


def _checks(monkeypatch, files):
    """(file, name) -> how many questions read that file's mentions of the name."""
    counted = collections.Counter()
    may_reach = site_files.SiteFiles.may_reach

    def counting(self, path, name, question, plain):
        counted[(path, name)] += 1
        return may_reach(self, path, name, question, plain)

    monkeypatch.setattr(site_files.SiteFiles, "may_reach", counting)
    project = build(files)
    half = project.flow.half_instances()
    return counted, project, half


def test_each_recipe_is_read_once_per_name_not_once_per_question(monkeypatch):
    for recipes in (8, 32):
        counted, _, _ = _checks(monkeypatch, _files(recipes))
        checks = sum(n for (_, name), n in counted.items() if name == "compute_loss")
        # base: every question (2 per recipe) read every other recipe: 2 * recipes ** 2
        assert 0 < checks <= 2 * recipes, (recipes, checks)


def test_a_recipe_importing_another_recipes_helper_is_still_read(monkeypatch):
    counted, project, _ = _checks(monkeypatch, _files(8, finetune=True))
    asked = project.flow._calls
    finetune = "egs/corpus0/ASR/recipe0/finetune.py"
    assert counted[(finetune, "compute_loss")] >= 1
    # its call site of recipe0's compute_loss is found
    sites = [site for memo, found in asked.items() if isinstance(memo, tuple) and memo[0] == "compute_loss"
             for site in found if site[0] == finetune]
    assert sites


def test_the_answers_do_not_depend_on_the_recipes_beside_it(monkeypatch):
    _, _, one = _checks(monkeypatch, _files(1))
    _, _, many = _checks(monkeypatch, _files(16))
    assert one and len(many) == 16 * len(one)
