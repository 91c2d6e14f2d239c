"""What a warm run does not do again. With the whole project pass in the cache it reads none of the
per-file summaries the pass would read (amplint.run.result_cache.cached_results' `later`): their
blobs are unpickled only when the pass runs again. It checks each file's status once, though it keys
each file several times (its result, its Need, the pass: Cache's `one_run`). The findings stay those
of a cold run, after an edit and with an unreadable blob.

The project is test_cached_need's, shaped like karpathy/nanoGPT: train.py opens the region and calls
model.py's module (both files have a project summary, kept in a blob beside their cached result)."""

from __future__ import annotations

import glob
import os
import pickle

import amplint.workspace.cache as cache_module
from project_files import cli_findings
from test_cached_need import FILES, _project  # the nanoGPT-shaped project

EXPECTED = [("train.py", 8, "AMP101")]


def _counted_loads(monkeypatch):
    """Paths of the pickles amplint's cache reads."""
    read = []
    real = pickle.load

    def counted(handle, *args, **kwargs):
        read.append(handle.name)
        return real(handle, *args, **kwargs)

    monkeypatch.setattr(cache_module.pickle, "load", counted)
    return read


def _summary_blobs(cache):
    """The blobs beside per-file results (the project pass's own result is kept in one too)."""
    return [p for p in glob.glob(os.path.join(cache, "*", "*", "*.pkl"))
            if not isinstance(pickle.load(open(p, "rb")), dict)]


def test_a_warm_run_with_the_pass_cached_reads_no_summary(tmp_path, monkeypatch):
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    assert len(_summary_blobs(cache)) >= 2  # train.py's and model.py's
    read = _counted_loads(monkeypatch)
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    assert len(read) == 1  # the pass's entries only


def test_an_edit_reads_the_summaries_again(tmp_path, monkeypatch):
    """An edit of configurator.py runs the pass again: it reads the other files' summaries from
    their blobs, and finds what the cold run found."""
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    blobs = set(_summary_blobs(cache))
    read = _counted_loads(monkeypatch)
    (root / "configurator.py").write_text(FILES["configurator.py"] + "dropout = 0.0\n")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    assert blobs <= set(read)


def test_an_unreadable_blob_is_linted_again(tmp_path):
    """Torn blobs (a crash, a disk filled up) are read only when the pass runs: the file is then
    linted again, as a miss would be, and nothing is lost."""
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    for blob in _summary_blobs(cache):
        with open(blob, "wb") as handle:
            handle.write(b"\x80\x04torn")
    (root / "configurator.py").write_text(FILES["configurator.py"] + "dropout = 0.0\n")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "2") == EXPECTED


def test_each_file_is_checked_once_per_run(tmp_path, monkeypatch):
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    checked = []
    real = cache_module.Cache._digest

    def counted(self, path):
        checked.append(path)
        return real(self, path)

    monkeypatch.setattr(cache_module.Cache, "_digest", counted)
    for run in ("cold", "warm"):
        checked.clear()
        assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == EXPECTED
        named = [os.path.relpath(p, root) if os.path.isabs(p) else os.path.normpath(p) for p in checked]
        assert sorted(named) == sorted(FILES), run
