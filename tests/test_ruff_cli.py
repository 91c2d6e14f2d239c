"""Ruff habits that work: `-` with --stdin-filename (the fixed text on stdout with --fix),
`amplint check PATHS`, a warning when no Python file is found. Through the real binary."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
"""
FACTORY = """\
import torch


def step(x, idx, n):
    with torch.autocast("cuda"):
        h = torch.nn.Linear(8, 8)(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
"""


def amplint(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "amplint", "--no-cache", *args], cwd=cwd,
                          input=stdin, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    (tmp_path / "losses.py").write_text(LOSSES)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def test_stdin_with_a_filename_is_linted_in_its_project(project):
    checked = amplint("-", "--stdin-filename", "losses.py", cwd=project, stdin=LOSSES)
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout.startswith("losses.py:7:12: AMP102 [*] ")
    assert "called at train.py:8" in checked.stdout
    alone = amplint("-", "--isolated-files", "--stdin-filename", "losses.py", cwd=project,
                    stdin=LOSSES)
    assert alone.returncode == 0 and "All checks passed!" in alone.stdout


def test_stdin_fix_writes_the_fixed_text_to_stdout_and_the_report_to_stderr(project):
    fixed = amplint("--fix", "-", "--stdin-filename", "losses.py", cwd=project, stdin=LOSSES)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == LOSSES.replace("binary_cross_entropy(probs, target)",
                                          "binary_cross_entropy_with_logits(logits, target)")
    assert "Found 1 finding (1 fixed, 0 remaining)." in fixed.stderr
    assert (project / "losses.py").read_text() == LOSSES  # nothing written
    clean = amplint("--fix", "-", cwd=project, stdin="x = 1\n")
    assert clean.returncode == 0 and clean.stdout == "x = 1\n"


def test_stdin_without_a_filename_and_in_json(tmp_path):
    found = amplint("--output-format", "json", "-", cwd=tmp_path, stdin=FACTORY)
    assert found.returncode == 1
    assert '"filename": "-"' in found.stdout and '"code": "AMP101"' in found.stdout
    diff = amplint("--diff", "-", "--stdin-filename", "m.py", cwd=tmp_path, stdin=FACTORY)
    assert diff.returncode == 1 and "+        out = h.new_zeros(" in diff.stdout
    broken = amplint("-", cwd=tmp_path, stdin="def f(:\n")
    assert broken.returncode == 1 and "-:1:7: syntax error" in broken.stderr


def test_check_is_an_alias_of_the_default_command(project):
    (project / "f.py").write_text(FACTORY)
    plain = amplint("f.py", cwd=project)
    aliased = amplint("check", "f.py", cwd=project)
    assert aliased.returncode == plain.returncode == 1
    assert aliased.stdout == plain.stdout and aliased.stderr == ""
    assert amplint("check", "--select", "AMP102", cwd=project).returncode == 1  # lints `.`


def test_warns_when_no_python_file_is_found(tmp_path):
    (tmp_path / "README.md").write_text("# nothing to lint\n")
    result = amplint(".", cwd=tmp_path)
    assert result.returncode == 0
    assert "warning: No Python files found under the given path(s)" in result.stderr
    (tmp_path / "a.py").write_text("x = 1\n")
    assert amplint(".", cwd=tmp_path).stderr == ""
