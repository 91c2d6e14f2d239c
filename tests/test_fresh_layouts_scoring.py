"""How benchmarks/fresh_layouts.py scores a blind-set project (issue 26): strict counts a finding
of the label's code at the labelled path:line; chain also counts one whose message cites the
labelled path:line as the other end of its chain ("called at train.py:11", "(at optimizer.py:44,
through this call)", "(line 12, through this call)" in the labelled file), because the labels sit
on either end (imagen-pytorch's on the call in train.py, ParlAI's in the inherited backward).
Every other finding stays a false positive under both."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _scorer():
    spec = importlib.util.spec_from_file_location("fresh_layouts", os.path.join(ROOT, "benchmarks", "fresh_layouts.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


IMAGEN = ("imagen_pytorch/trainer.py", 28, "AMP104",
          ("backward inside autocast (called at train.py:11 under the framework autocast region at train.py:10): "
           "the AMP docs ask for backward after the `with` block (backward ops would run under autocast)",))
SWIN = ("main.py", 37, "AMP127",
        ("`optimizer.step()` (at optimizer.py:44, through this call, which leaves `scaler` at its default `None`) "
         "after `scaler.scale(...).backward()` (line 34) bypasses the scaler",))
SAME_FILE = ("engine.py", 30, "AMP127",
             ("`optimizer.step()` (line 12, through this call) after `scaler.scale(...).backward()` (line 28) "
              "bypasses the scaler",))


def test_a_finding_at_the_other_end_of_its_chain_counts_for_chain_only():
    scorer = _scorer()
    for finding, label in ((IMAGEN, ("train.py", 11, "AMP104")),
                           (SWIN, ("optimizer.py", 44, "AMP127")),
                           (SAME_FILE, ("engine.py", 12, "AMP127"))):
        assert scorer.score([finding], {label}, chain=False) == (0, 1)
        assert scorer.score([finding], {label}, chain=True) == (1, 0)


def test_a_finding_at_the_label_counts_for_both():
    scorer = _scorer()
    label = ("main.py", 37, "AMP127")
    assert scorer.score([SWIN], {label}, chain=False) == (1, 0)
    assert scorer.score([SWIN], {label}, chain=True) == (1, 0)


def test_anything_else_stays_a_false_positive():
    scorer = _scorer()
    cases = [
        (IMAGEN, ("train.py", 11, "AMP105")),  # another code
        (IMAGEN, ("train.py", 10, "AMP104")),  # the autocast region: cited, but not the chain's end
        (SWIN, ("main.py", 34, "AMP127")),  # the backward the message cites, not the chain's end
        (SAME_FILE, ("other.py", 12, "AMP127")),  # "line 12" is a line of the finding's own file
        (IMAGEN, ("imagen_pytorch/train.py", 11, "AMP104")),  # another file of the same name
    ]
    paths = ["train.py", "imagen_pytorch/train.py", "imagen_pytorch/trainer.py", "main.py", "engine.py"]
    for finding, label in cases:
        assert scorer.score([finding], {label}, chain=True, paths=paths) == (0, 1), label
        assert scorer.score([finding], {label}, chain=False, paths=paths) == (0, 1), label
    # the twin has no label: every finding there is false
    assert scorer.score([IMAGEN, SWIN], set(), chain=True) == (0, 2)


PARLAI = ("parlai/core/torch_generator_agent.py", 26, "AMP104",
          ("backward inside autocast (at core/torch_agent.py:43, through this call; autocast at line 24): the AMP "
           "docs ask for backward after the `with` block (backward ops would run under autocast)",))


def test_a_cited_path_is_read_from_the_folder_that_holds_the_project():
    """Every file under parlai/: the message cites parlai/core/torch_agent.py as core/torch_agent.py."""
    scorer = _scorer()
    label = ("parlai/core/torch_agent.py", 43, "AMP104")
    paths = ["parlai/core/torch_agent.py", "parlai/core/torch_generator_agent.py",
             "parlai/agents/transformer/transformer.py"]
    assert scorer.score([PARLAI], {label}, chain=True, paths=paths) == (1, 0)
    assert scorer.score([PARLAI], {label}, chain=False, paths=paths) == (0, 1)
    # two files the cited path may stand for: neither
    both = paths + ["other/core/torch_agent.py"]
    assert scorer.score([PARLAI], {label}, chain=True, paths=both) == (0, 1)


PROJECT = '''# imitates: lucidrains/imagen-pytorch (a trainer whose step runs the backward, under the script's autocast)
# construct: the backward runs in pkg/trainer.py, the region and the call are in train.py
# fix: with torch.autocast("cuda", dtype=torch.float16): => if True:
### pkg/__init__.py
### pkg/trainer.py
class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        self.optimizer.step()
        return loss
### train.py
import torch

from pkg.trainer import Trainer


def main(model, optimizer, loader):
    trainer = Trainer(model, optimizer)
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            trainer.step(batch)  # HAZARD AMP104
'''


def test_the_run_prints_strict_and_chain(tmp_path, monkeypatch, capsys):
    scorer = _scorer()
    (tmp_path / "imagen_like.txt").write_text(PROJECT)
    monkeypatch.setattr("sys.argv", ["fresh_layouts.py", "--data", str(tmp_path)])
    assert scorer.main() == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("imagen_like"))
    assert row.split()[-6:-2] == ["0/1+1fp", "0/1+1fp", "1/1", "1/1"]
    summary = [line for line in out.splitlines() if line.startswith("value-flow")]
    assert len(summary) == 2
    for line in summary:
        assert "recall 0/1 = 0.00, precision 0.00 (1 false positives); chain recall 1/1 = 1.00, " \
               "precision 1.00 (0 false positives), CPU" in line
