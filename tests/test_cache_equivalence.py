"""Issue 14: the cache and the pool never change the answer, and a warm run parses nothing.

One tree mixes several layouts and frameworks (a registry-built model under a hand-written
autocast loop, a Lightning project, an mmdet custom loss, a detectron2 ROI head), so that the
project pass expands framework classes and follows the class flow across files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import libcst
import pytest

import amplint.run.parallel as parallel
from project_files import cli_diagnostics

PROJECTS = Path(__file__).parent / "projects"
LAYOUTS = ["reach_registry", "lightning_seg", "mmdet_custom_loss", "d2_roi_heads"]
TRAIN = "reach_registry/tools/train.py"
REGION = 'with torch.autocast("cuda", dtype=torch.float16):'


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "mono"
    for name in LAYOUTS:
        shutil.copytree(PROJECTS / name, root / name)
    assert len(list(root.rglob("*.py"))) >= 16  # enough files for -j2 to use two processes
    return root


def lint(root: Path, *args):
    return [(d["filename"], d["line"], d["code"], d["message"]) for d in cli_diagnostics(root, *args)]


def test_cache_and_pool_give_the_same_findings(tree, tmp_path, monkeypatch):
    cache = str(tmp_path / "cache")
    reference = lint(tree, "--no-cache", "--jobs", "1")
    codes = {(f.split("/")[0], code) for f, _, code, _ in reference}
    assert {("reach_registry", "AMP101"), ("reach_registry", "AMP110"),
            ("reach_registry", "AMP102"), ("lightning_seg", "AMP102")} <= codes
    assert lint(tree, "--no-cache", "--jobs", "2") == reference
    assert lint(tree, "--cache-dir", cache, "--jobs", "2") == reference  # fills the cache

    def no_parsing(*args, **kwargs):
        raise AssertionError("a warm run parsed a file")

    monkeypatch.setattr(libcst, "parse_module", no_parsing)
    assert lint(tree, "--cache-dir", cache, "--jobs", "1") == reference


def test_editing_a_dependency_invalidates_cached_results(tree, tmp_path):
    cache = str(tmp_path / "cache")
    before = lint(tree, "--cache-dir", cache)
    assert any(f == "reach_registry/seg/models/net.py" for f, _, _, _ in before)
    train = tree / TRAIN
    text = train.read_text()
    assert REGION in text
    train.write_text(text.replace(REGION, "if True:"))  # the region that reached the model goes
    after = lint(tree, "--cache-dir", cache)
    assert not any(f.startswith("reach_registry/seg/") for f, _, _, _ in after)
    assert [d for d in after if d[0].startswith("lightning_seg/")] == \
        [d for d in before if d[0].startswith("lightning_seg/")]
    train.write_text(text)
    assert lint(tree, "--cache-dir", cache) == before


def test_huge_files_are_analysed_in_a_process_of_their_own(tree, monkeypatch):
    reference = lint(tree, "--no-cache", "--jobs", "1")
    isolated = []
    real = parallel._with_isolated

    def spy(func, items, heavy, run_light):
        isolated.extend(heavy)
        return real(func, items, heavy, run_light)

    monkeypatch.setattr(parallel, "HUGE_BYTES", 200)  # every non-trivial file is "huge"
    monkeypatch.setattr(parallel, "_with_isolated", spy)
    assert lint(tree, "--no-cache", "--jobs", "1") == reference
    assert len(isolated) >= 10


def test_the_code_fingerprint_ignores_the_language_server_and_runtime(tmp_path):
    """An edit of amplint's analysis invalidates the cache; an edit of the language server's
    modules (or the runtime monitor's), which compute no cached result, keeps it: a server
    edited between `amplint .` and its first pass still reads the CLI's entries."""
    from amplint.workspace.cache import _code_fingerprint

    package = tmp_path / "amplint"
    for name in ("engine.py", "rules/amp102.py", "server/app.py", "runtime/monitor.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("x = 1\n")
    before = _code_fingerprint(str(package))
    for name in ("server/app.py", "runtime/monitor.py"):
        (package / name).write_text("x = 2  # edited\n")
    assert _code_fingerprint(str(package)) == before
    (package / "rules/amp102.py").write_text("x = 2  # edited\n")
    assert _code_fingerprint(str(package)) != before


def test_the_code_fingerprint_covers_every_layer_but_the_runtime(tmp_path, monkeypatch):
    """The installed package's own fingerprint (no folder given): it changes when any static
    module changes, wherever in the package it lies (a rule deep in analysis/, the CLI's
    main.py), and not when only the runtime companion or the language server does."""
    import shutil

    import amplint
    from amplint.workspace import cache

    copy = tmp_path / "amplint"
    shutil.copytree(os.path.dirname(amplint.__file__), copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(amplint, "__file__", str(copy / "__init__.py"))
    before = cache._code_fingerprint()
    for relative in ("analysis/rules/amp101_factory_default_dtype.py", "cli/main.py"):
        (copy / relative).write_text((copy / relative).read_text() + "\n# edited\n")
        after = cache._code_fingerprint()
        assert after != before, relative
        before = after
    for untracked in (next((copy / "runtime").glob("*.py")), copy / "cli" / "server" / "app.py"):
        untracked.write_text(untracked.read_text() + "\n# edited\n")
        assert cache._code_fingerprint() == before, untracked


def test_file_digests_persist_and_a_rewrite_that_keeps_size_and_mtime_is_seen(tmp_path, monkeypatch):
    """The content digests are kept in the cache between runs: a second run reads no unchanged
    file to key it (only its status). An edit that keeps the size and puts the modification
    time back still changes the change time, so it is read again."""
    import builtins

    from amplint.workspace.cache import Cache

    source = tmp_path / "train.py"
    source.write_text("x = 1\n")
    first = Cache(str(tmp_path / "cache"))
    digest = first.content_digest(str(source))
    first.save_index()

    opened = []
    real_open = builtins.open

    def counting_open(path, *args, **kwargs):
        opened.append(os.path.abspath(str(path)))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    second = Cache(str(tmp_path / "cache"))
    assert second.content_digest(str(source)) == digest
    assert str(source) not in opened

    stat = os.stat(source)
    source.write_text("x = 2\n")  # same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    third = Cache(str(tmp_path / "cache"))
    changed = third.content_digest(str(source))
    assert str(source) in opened and changed != digest


def test_a_warm_run_after_a_same_size_edit_reports_the_new_content(tree, tmp_path):
    """Through the CLI: the hazard removed by an edit of the same size, modification time put
    back, is no longer reported from the cache."""
    cache = str(tmp_path / "cache")
    train = tree / TRAIN
    text = train.read_text()
    before = lint(tree, "--cache-dir", cache)
    assert any(f == "reach_registry/seg/models/net.py" for f, _, _, _ in before)
    same_size = text.replace(REGION, "if True:".ljust(len(REGION)))
    assert len(same_size) == len(text)
    stat = os.stat(train)
    train.write_text(same_size)
    os.utime(train, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = lint(tree, "--cache-dir", cache)
    assert not any(f.startswith("reach_registry/seg/") for f, _, _, _ in after)


def test_small_entries_live_in_the_index_and_large_ones_in_files(tmp_path):
    """Most files' results are small (no finding, no summary): they are kept in the cache's one
    index file, so a warm run opens one file, not one per linted file. Values with a blob, or
    too large, keep a file of their own."""
    from amplint.workspace.cache import Cache

    root = str(tmp_path / "cache")
    cache = Cache(root)
    cache.put("a" * 64, {"diagnostics": [], "errors": []})
    cache.put("b" * 64, {"text": "x" * 5000})
    cache.put("c" * 64, {"summarised": True}, blob={"summary": 1})
    files = {name for _, _, names in os.walk(root) for name in names}
    assert "a" * 64 + ".json" not in files
    assert {"b" * 64 + ".json", "c" * 64 + ".json", "c" * 64 + ".pkl"} <= files
    assert Cache(root).get("a" * 64) is None  # not saved yet: only recomputed, never wrong
    cache.save_index()
    again = Cache(root)
    assert again.get("a" * 64) == {"diagnostics": [], "errors": []}
    assert again.get("a" * 64, with_blob=True) == ({"diagnostics": [], "errors": []}, None)
    assert again.get("b" * 64)["text"] == "x" * 5000
    assert again.get("c" * 64, with_blob=True)[1] == {"summary": 1}
