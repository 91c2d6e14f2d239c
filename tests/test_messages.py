"""Messages that say what they are about: AMP103 names the model it flags, and a loss that
several calls under autocast reach cites one and how many more."""

from __future__ import annotations

import json
import subprocess
import sys

LOSSES = """\
import torch
import torch.nn.functional as F


def focal(logits, target):
    probs = torch.sigmoid(logits)
    return F.binary_cross_entropy(probs, target)
"""
TRAIN = """\
import torch

from losses import focal


def step(model, x, y):
    with torch.autocast("cuda"):
        return focal(model(x), y)


def step_twice(model, x, y):
    with torch.autocast("cuda"):
        a = focal(model(x), y)
        return a + focal(model(x), y)
"""
EVAL = """\
import torch

from losses import focal


def evaluate(model, x, y):
    with torch.autocast("cuda"):
        return focal(model(x), y)
"""
MODEL = """\
import torch


def main(cfg, loader, opt):
    model = build_model(cfg).cuda().half()
    for x in loader:
        with torch.autocast("cuda"):
            out = model(x)
"""


def messages(tmp_path, *args):
    proc = subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "--output-format",
                           "json", *args], cwd=tmp_path, capture_output=True, text=True)
    return {(d["filename"], d["code"]): d["message"] for d in json.loads(proc.stdout)}


def test_amp103_names_the_model(tmp_path):
    (tmp_path / "main.py").write_text(MODEL)
    found = messages(tmp_path, "main.py")
    message = found[("main.py", "AMP103")]
    assert message.startswith("half cast of the model `model` mixed with autocast")
    assert "input" not in message


def test_a_loss_reached_from_several_calls_cites_how_many_more(tmp_path):
    for name, text in {"losses.py": LOSSES, "train.py": TRAIN, "eval.py": EVAL}.items():
        (tmp_path / name).write_text(text)
    message = messages(tmp_path, ".")[("losses.py", "AMP102")]
    assert "(called at eval.py:8 and 3 more under the autocast region at eval.py:7)" in message
    (tmp_path / "eval.py").unlink()
    (tmp_path / "train.py").write_text(TRAIN.split("\n\n\ndef step_twice")[0] + "\n")
    message = messages(tmp_path, ".")[("losses.py", "AMP102")]
    assert "(called at train.py:8 under the autocast region at train.py:7)" in message
