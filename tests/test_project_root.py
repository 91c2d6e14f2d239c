"""Files given on the command line are linted in their project's context: the root is the
folder of the nearest pyproject.toml with [tool.amplint], else the git work tree, else the
common parent; findings are reported only for the files given."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from amplint.workspace.project_root import project_root

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


def amplint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "amplint", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True)


def _write(root, **files):
    for name, text in files.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_root_is_the_amplint_pyproject_then_git_then_common_parent(tmp_path):
    _write(tmp_path, **{"pkg__a.py": "", "pkg__sub__b.py": "", "other__c.py": ""})
    assert project_root([str(tmp_path / "pkg" / "a.py"), str(tmp_path / "pkg" / "sub" / "b.py")]) \
        == str(tmp_path / "pkg")
    (tmp_path / ".git").mkdir()
    assert project_root([str(tmp_path / "pkg" / "a.py")]) == str(tmp_path)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no table
    assert project_root([str(tmp_path / "pkg" / "a.py")]) == str(tmp_path)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[tool.amplint]\n")
    assert project_root([str(tmp_path / "pkg" / "sub" / "b.py")]) == str(tmp_path / "pkg")


def test_a_file_given_alone_gets_the_regions_of_its_project(tmp_path):
    _write(tmp_path, **{"losses.py": LOSSES, "train.py": TRAIN, "clean.py": "x = 1\n"})
    whole = amplint("--output-format", "json", ".", cwd=tmp_path)
    alone = amplint("--output-format", "json", "losses.py", cwd=tmp_path)
    assert whole.returncode == alone.returncode == 1, alone.stderr
    assert json.loads(alone.stdout) == json.loads(whole.stdout)
    assert [d["code"] for d in json.loads(alone.stdout)] == ["AMP102"]
    # only the files given are reported (train.py has no finding of its own here anyway)
    other = amplint("--output-format", "json", "clean.py", cwd=tmp_path)
    assert other.returncode == 0 and json.loads(other.stdout) == []
    isolated = amplint("--isolated-files", "losses.py", cwd=tmp_path)
    assert isolated.returncode == 0 and "All checks passed!" in isolated.stdout


def test_fix_on_a_file_given_alone_changes_only_that_file(tmp_path):
    _write(tmp_path, **{"losses.py": LOSSES, "train.py": TRAIN})
    fixed = amplint("--fix", os.path.join(str(tmp_path), "losses.py"), cwd=tmp_path.parent)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "binary_cross_entropy_with_logits(logits, target)" in (tmp_path / "losses.py").read_text()
    assert (tmp_path / "train.py").read_text() == TRAIN


def test_excluded_project_files_are_not_read_for_context(tmp_path):
    _write(tmp_path, **{"pyproject.toml": "[tool.amplint]\nextend-exclude = ['scripts']\n",
                        "losses.py": LOSSES, "scripts__train.py": TRAIN})
    alone = amplint("losses.py", cwd=tmp_path)
    assert alone.returncode == 0, alone.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    included = amplint("losses.py", cwd=tmp_path)
    assert included.returncode == 1 and "AMP102" in included.stdout, included.stdout


def test_a_file_in_a_broad_folder_without_a_project_marker_is_linted_alone(tmp_path, monkeypatch):
    from amplint.workspace import project_root as module
    from amplint.workspace.files import Excludes

    _write(tmp_path, **{"losses.py": LOSSES, "train.py": TRAIN})
    monkeypatch.setattr(module.tempfile, "gettempdir", lambda: str(tmp_path))
    root, extra = module.context_files([str(tmp_path / "losses.py")], [str(tmp_path / "losses.py")],
                                       Excludes([], str(tmp_path), True, True))
    assert (root, extra) == (None, [])


def test_an_editor_file_without_a_marker_belongs_to_the_workspace(tmp_path):
    """The language server: a file in a sub-folder of a workspace that has no pyproject.toml
    with [tool.amplint] and no .git belongs to the workspace's project (what `amplint .` run
    there sees), not to a project of its own folder; a marker below the workspace wins; a file
    outside the workspace keeps its own root."""
    from amplint.workspace.project_root import project_root_in

    workspace = tmp_path / "ws"
    deep = workspace / "models" / "ops"
    deep.mkdir(parents=True)
    (deep / "attn.py").write_text("x = 1\n")
    path = str(deep / "attn.py")
    assert project_root_in([path], None) == str(deep)
    assert project_root_in([path], str(workspace)) == os.path.realpath(str(workspace))

    (workspace / "models" / "pyproject.toml").write_text("[tool.amplint]\n")
    assert project_root_in([path], str(workspace)) == str(workspace / "models")

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.py").write_text("x = 1\n")
    assert project_root_in([str(outside / "a.py")], str(workspace)) == str(outside)
