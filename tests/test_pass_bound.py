"""The class flow's bound on one project pass (issue 34): peft's layers, whose cycles keep the
flow's answers from settling, asked over 4.8M values (400 s wall); the real trees
benchmarked ask at most ~9,000. Past `classmemo.PASS_BUDGET` every answer is empty: the pass
finds fewer targets, so cross-file findings may be missed but none is added, and the run says
so in a warning line (from the cache too).

tests/projects/d2_project_registry (detectron2-style registry) stands for a project whose
cross-file finding needs the class flow; the bound is lowered to 0 to reach it."""

from __future__ import annotations

import os

from click.testing import CliRunner

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.cli.main import cli

from project_files import PROJECTS, load, project_findings

NAME = "d2_project_registry"


def _bound(monkeypatch, value):
    import amplint.analysis.project.classvalues as classvalues
    import amplint.run.project_inputs as project_inputs

    monkeypatch.setattr(classvalues, "PASS_BUDGET", value)
    monkeypatch.setattr(project_inputs, "PASS_BUDGET", value)


def _cli(*args):
    old = os.getcwd()
    os.chdir(os.path.join(PROJECTS, NAME))
    try:
        return CliRunner().invoke(cli, ["--output-format", "json", *args, "."])
    finally:
        os.chdir(old)


def test_the_bound_drops_findings_never_adds_them(monkeypatch):
    files = load(NAME)
    full = project_findings(lint_project(files, Settings.default()))
    assert full  # the cross-file finding the class flow gives
    _bound(monkeypatch, 0)
    bounded = project_findings(lint_project(files, Settings.default()))
    assert set(bounded) < set(full)


def test_a_real_sized_question_count_stays_under_the_bound():
    from amplint.analysis.project.classmemo import PASS_BUDGET

    project = build(load(NAME), Settings.default())
    project.entries_for(sorted(load(NAME))[0])
    assert 0 < project.flow.asked < PASS_BUDGET / 100


def test_the_run_says_when_it_reached_the_bound(monkeypatch, tmp_path):
    result = _cli("--no-cache", "--jobs", "1")
    assert "reached its bound" not in result.stderr
    _bound(monkeypatch, 0)
    cache = str(tmp_path / "cache")
    for args in (("--no-cache",), ("--cache-dir", cache), ("--cache-dir", cache)):
        result = _cli(*args, "--jobs", "1")
        warned = [line for line in result.stderr.splitlines() if "reached its bound" in line]
        assert len(warned) == 1 and warned[0].startswith("warning: ."), result.stderr


def test_the_editor_is_warned_once_when_its_pass_reached_the_bound(monkeypatch, tmp_path):
    """The language server's pass is the CLI's: past the bound it says so too (a warning
    message, once per session, on disk texts and with a buffer in place of its file)."""
    import shutil

    import pytest

    pytest.importorskip("pygls")
    from amplint.cli.server.analysis import ProjectState
    from amplint.workspace.config import Config

    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    monkeypatch.chdir(root)
    state = ProjectState(str(root), Config(), Settings.default(), None, jobs=1)
    state.first_pass({})
    assert state.notes == [] and state.unseen_notes() == []
    _bound(monkeypatch, 0)
    state.refresh({})
    (warned,) = state.notes
    assert "reached its bound" in warned
    assert state.unseen_notes() == [warned]
    path = next(str(p) for p in root.rglob("*.py"))
    state.refresh({path: open(path, encoding="utf-8").read() + "\nX = 1\n"})
    assert state.notes == [warned] and state.unseen_notes() == []
