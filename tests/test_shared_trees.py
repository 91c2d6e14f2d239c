"""The readers that parse a file with Python's `ast` one after another share its tree
(amplint.analysis.parsing.python_tree; issue 34): the lint's prefilter, the summary's statement
starts, the project pass's seeds and readers. The project is shaped like Lightning's mixed
precision plugin (lightning/fabric/plugins/precision/amp.py) calling a loss helper of another
file under its autocast region; its clean twin uses the with-logits loss and stays silent."""

from __future__ import annotations

import ast
import collections

import pytest

from amplint.analysis import parsing, tree_cache
from project_files import cli_findings

PLUGIN = '''"""Mixed precision plugin (lightning/fabric/plugins/precision/amp.py)."""
import torch

from litx.losses import bce_loss


class MixedPrecision:
    def __init__(self, device="cuda"):
        self.device = device

    def training_step(self, model, batch, target):
        with torch.autocast(self.device, dtype=torch.float16):
            out = model(batch)
            return bce_loss(out, target)
'''
LOSSES = '''"""Losses of the example task."""
import torch
import torch.nn.functional as F


def bce_loss(pred, target):
    return F.binary_cross_entropy(torch.sigmoid(pred), target)
'''
CLEAN_LOSSES = LOSSES.replace("F.binary_cross_entropy(torch.sigmoid(pred), target)",
                              "F.binary_cross_entropy_with_logits(pred, target)")


def _project(tmp_path, losses):
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "litx"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "precision.py").write_text(PLUGIN)
    (package / "losses.py").write_text(losses)
    return tmp_path


@pytest.mark.parametrize("losses, findings", [
    (LOSSES, [("litx/losses.py", 7, "AMP102")]),
    (CLEAN_LOSSES, []),
])
def test_each_file_is_parsed_by_ast_once(tmp_path, monkeypatch, losses, findings):
    """Cold `-j 1` run: the cross-file finding (and the twin's silence) as before, and each
    file's text parsed by `ast` once in the whole run (main: the loss file three times, by the
    prefilter, the summary's statement starts and the project pass's readers)."""
    root = _project(tmp_path, losses)
    monkeypatch.setattr(tree_cache, "_TREES", collections.OrderedDict(), raising=False)  # none kept
    counts = collections.Counter()
    real = ast.parse

    def counting(source, *args, **kwargs):
        counts[source] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    assert cli_findings(root, "--no-cache", "--jobs", "1") == findings
    assert counts[losses] == 1
    assert counts[PLUGIN] == 1


def test_a_shared_tree_is_the_same_tree_and_a_bad_text_still_raises():
    text = "import torch\nx = torch.zeros(3)\n"
    assert parsing.python_tree(text) is parsing.python_tree(text)
    assert ast.dump(parsing.python_tree(text)) == ast.dump(ast.parse(text))
    with pytest.raises(SyntaxError):
        parsing.python_tree("def f(:\n")


def test_the_kept_trees_are_bounded(monkeypatch):
    monkeypatch.setattr(tree_cache, "_TREES", collections.OrderedDict())
    monkeypatch.setattr(tree_cache, "_kept_chars", 0)
    for i in range(tree_cache._MAX_TREES * 2):
        parsing.python_tree(f"x = {i}\n")
    assert len(tree_cache._TREES) == tree_cache._MAX_TREES
    big = "x = 1\n" * (tree_cache._MAX_TREE_CHARS // 4 // 6 + 1)  # over a quarter of the bound
    parsing.python_tree(big)
    assert big not in tree_cache._TREES
