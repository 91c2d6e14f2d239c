"""Each file is linted once (issue 34): the runner's phase 1 lints only the files the project
pass reads from a lint (those that can open a region or hold a framework setting, and the
callers of the GradScaler protocol); every other file is linted after the pass, once, with the
entries it got. Counted, not timed: the calls of the per-file unit of work, on test projects
laid out like detectron2, fairseq, mmdetection and timm (tests/projects/)."""

from __future__ import annotations

import shutil

import pytest

import amplint.run.per_file as per_file
from project_files import PROJECTS, cli_diagnostics, cli_output

# files that get entries without the pass reading their lint (EntryRegion, EntryHalf, ...)
ONCE = ["d2_roi_heads", "half_fairseq_vocoder", "crossfile_bce", "flow_mmdet_multi_apply"]
# the entries of a GradScaler caller (read by the pass: linted twice, as before)
PROJECTS_WITH_ENTRIES = ONCE + ["scaler_hooks_trainer"]


def _counting(monkeypatch):
    """path -> [(entries, what the lint gave the project pass)] for every lint of the run."""
    calls = {}
    real = per_file.process

    def process(path, settings, options, diffs=None, entries=(), summarize=False):
        result = real(path, settings, options, diffs, entries=entries, summarize=summarize)
        gave = summarize and (result.summary is not False or result.scaler not in (None, False))
        calls.setdefault(path, []).append((tuple(entries), bool(gave)))
        return result

    monkeypatch.setattr(per_file, "process", process)
    return calls


def _copy(tmp_path, name):
    root = tmp_path / name
    shutil.copytree(PROJECTS + "/" + name, root)
    return root


@pytest.mark.parametrize("name", PROJECTS_WITH_ENTRIES)
def test_each_file_is_linted_once_unless_the_project_pass_read_its_lint(tmp_path, monkeypatch, name):
    root = _copy(tmp_path, name)
    calls = _counting(monkeypatch)
    cli_diagnostics(root, "--no-cache", "--jobs", "1")
    python = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    assert sorted(calls) == python  # every file linted
    for path, made in calls.items():
        if len(made) == 1:
            continue
        # twice only: first for the project pass (it read a summary from that lint), then
        # with the entries the pass gave it
        assert len(made) == 2 and made[0][1] and not made[0][0] and made[1][0], (path, made)
    # the projects bite: a file the pass gave entries without reading its lint, linted once
    once = [path for path, made in calls.items() if len(made) == 1 and made[0][0]]
    assert bool(once) is (name in ONCE), calls
    assert any(len(made) == 2 for made in calls.values()) is (name not in ONCE), calls


@pytest.mark.parametrize("name", ["d2_roi_heads", "half_fairseq_vocoder"])
def test_a_warm_run_lints_nothing_and_reports_the_same(tmp_path, monkeypatch, name):
    root = _copy(tmp_path, name)
    cache = str(tmp_path / "cache")
    cold = cli_diagnostics(root, "--cache-dir", cache, "--jobs", "1")
    calls = _counting(monkeypatch)
    assert cli_diagnostics(root, "--cache-dir", cache, "--jobs", "1") == cold
    assert calls == {}
    assert cold  # the projects have findings, some from the project pass's entries




def _everything_first(monkeypatch):
    """The runner as it was: every file linted in phase 1, and again with its entries."""
    from amplint.run import first_pass

    monkeypatch.setattr(first_pass.Need, "first", property(lambda self: True))


@pytest.mark.parametrize("name", PROJECTS_WITH_ENTRIES)
@pytest.mark.parametrize("args", [(), ("--diff", "--unsafe-fixes")])
def test_the_report_is_the_one_of_linting_every_file_first(tmp_path, monkeypatch, name, args):
    root = _copy(tmp_path, name)
    now = cli_output(root, "--no-cache", "--jobs", "1", *args)
    with monkeypatch.context() as patch:
        _everything_first(patch)
        calls = _counting(patch)
        before = cli_output(root, "--no-cache", "--jobs", "1", *args)
    assert any(len(made) == 2 for made in calls.values())  # the old order did lint twice
    assert now == before
    if name != "flow_mmdet_multi_apply":  # (its entries change no default rule's finding)
        assert now.strip() not in ("", "[]")
