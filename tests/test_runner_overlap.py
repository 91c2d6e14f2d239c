"""The pool lints while the main process runs the project pass (issue 34: the wall time of a
cold run). The files whose lint the pass does not read are submitted to the pool before the
pass starts and collected after it ends; a file the pass then gives entries is linted again
with them, and the report is the one of one process. Instrumented, not timed: the pool's
submissions, the pass's start and end, the progress meter. The tree is several test projects
side by side (laid out like detectron2, fairseq, mmdetection and a registry-built repo), so
that there are enough files for the pool."""

from __future__ import annotations

import functools
import shutil
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import process as futures_process

import pytest

import amplint.run.runner as runner
from amplint.run.first_pass import Need
from amplint.run.parallel import MIN_FILES_PER_WORKER
from project_files import PROJECTS, cli_output

NAMES = ["d2_roi_heads", "half_fairseq_vocoder", "flow_mmdet_multi_apply", "reach_registry",
         "reach_factory", "crossfile_bce", "scaler_hooks_trainer"]


def _tree(tmp_path):
    root = tmp_path / "tree"
    for name in NAMES:
        shutil.copytree(PROJECTS + "/" + name, root / name)
    return root


def _lints(fn, args):
    """The lint items of one submission (a pool's map, and Ahead, submit chunks of them)."""
    if isinstance(fn, functools.partial) and fn.func is futures_process._process_chunk:
        fn, items = fn.args[0], [arguments[0] for arguments in args[0]]
    elif getattr(fn, "__name__", "") == "_each":  # parallel.Ahead's chunks: (func, items)
        fn, items = args[0], list(args[1])
    else:
        items = list(args[:1])
    return items if getattr(fn, "__name__", "") == "process_item" else []


def _instrumented(monkeypatch):
    """events: ("submit", path, entries, plain) for each lint submitted to a pool ("plain": a
    lint whose result the pass does not read), ("collect", path) when the main thread takes
    one's result, ("map", kind, path, entries) for each item of the runner's cached maps,
    ("pass", "start"/"end"), ("meter", done)."""
    events, lock, futures = [], threading.Lock(), {}

    def record(*event):
        with lock:
            events.append(event)

    real_submit, real_result = ProcessPoolExecutor.submit, Future.result

    def submit(self, fn, *args, **kwargs):
        future = real_submit(self, fn, *args, **kwargs)
        for item in _lints(fn, args):
            path, _, _, entries, summarize = item
            plain = isinstance(summarize, Need) and not summarize.first
            record("submit", path, bool(entries), plain)
            futures.setdefault(id(future), []).append(path)
        return future

    def result(self, timeout=None):
        found = real_result(self, timeout)
        if threading.current_thread() is threading.main_thread():
            for path in futures.get(id(self), ()):
                record("collect", path)
        return found

    real_map = runner.cached_map

    def cached_map(cache, kind, items, *args, **kwargs):
        for item in items:
            record("map", kind, item[0], bool(item[3]))
        return real_map(cache, kind, items, *args, **kwargs)

    real_pass = runner.project_entries

    def project_entries(*args, **kwargs):
        record("pass", "start")
        try:
            return real_pass(*args, **kwargs)
        finally:
            record("pass", "end")

    class Meter(runner.Progress):
        def update(self, done):
            record("meter", done)
            super().update(done)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    monkeypatch.setattr(Future, "result", result)
    monkeypatch.setattr(runner, "project_entries", project_entries)
    monkeypatch.setattr(runner, "cached_map", cached_map)
    monkeypatch.setattr(runner, "Progress", Meter)
    return events


def test_the_pool_lints_the_other_files_while_the_project_pass_runs(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    one = cli_output(root, "--no-cache", "--jobs", "1")
    events = _instrumented(monkeypatch)
    many = cli_output(root, "--no-cache", "--jobs", "2")
    assert many == one
    start, end = events.index(("pass", "start")), events.index(("pass", "end"))
    plain = {e[1] for e in events if e[0] == "submit" and e[3] and not e[2]}
    assert len(plain) >= 2 * MIN_FILES_PER_WORKER  # enough for the pool
    # submitted before the pass starts (the first at least: the others follow as the pool
    # takes them, a few at a time), collected after it ends
    assert any(e[0] == "submit" and e[1] in plain and e[3] for e in events[:start])
    collected = [i for i, e in enumerate(events) if e[0] == "collect" and e[1] in plain]
    assert collected and min(collected) > end
    # the files the pass gave entries: linted again with them (the projects bite)
    again = {e[2] for e in events if e[:2] == ("map", "final") and e[3]}
    assert again & plain
    assert not [e for e in events[end:] if e[:2] == ("map", "lint") and e[2] in plain]
    # the meter: still while the pass runs, never back, at the end every file
    meter = [e[1] for e in events if e[0] == "meter"]
    assert not [e for e in events[start:end] if e[0] == "meter"]
    assert meter == sorted(meter) and meter[-1] == len(list(root.rglob("*.py")))


def test_a_warm_run_after_it_lints_nothing_and_reports_the_same(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    cache = str(tmp_path / "cache")
    cold = cli_output(root, "--cache-dir", cache, "--jobs", "2")
    events = _instrumented(monkeypatch)
    assert cli_output(root, "--cache-dir", cache, "--jobs", "2") == cold
    assert not [e for e in events if e[0] == "submit"]
    assert cold.strip() not in ("", "[]")


@pytest.mark.parametrize("args", [("--diff", "--unsafe-fixes"), ("--add-noqa",)])
def test_fix_paths_report_what_one_process_does(tmp_path, args):
    one = cli_output(_tree(tmp_path / "one"), "--no-cache", "--jobs", "1", *args)
    many = cli_output(_tree(tmp_path / "many"), "--no-cache", "--jobs", "2", *args)
    assert many.replace("/many/", "/one/") == one


def _mark(path, seconds=0.05):
    with open(path, "a") as handle:
        handle.write("x")
    time.sleep(seconds)
    return path


def test_closing_the_workers_stops_what_runs_ahead(tmp_path):
    """Ctrl-C or an error during the pass leaves the `with Workers`: what was not yet handed
    to the pool is not run (at most `ahead` items are in it at a time)."""
    from amplint.run.parallel import Workers

    log = str(tmp_path / "log")
    workers = Workers(2)
    started = workers.start(_mark, [log] * 200, ahead=1)
    assert next(started.results()) == log
    workers.close()
    assert 1 <= len(open(log).read()) < 100  # 200 would be every one (10 s of work)


def test_with_one_job_nothing_runs_ahead(tmp_path):
    from amplint.run.parallel import Workers

    log = str(tmp_path / "log")
    with Workers(1) as workers:
        started = workers.start(_mark, [log] * 3, ahead=1)
        assert not (tmp_path / "log").exists()  # made when asked for, in this process
        assert list(started.results()) == [log] * 3


class _HeldPool:
    """A pool whose submissions run only when the test says so (their futures stay pending)."""

    def __init__(self):
        self.futures = []

    def submit(self, fn, *args):
        future = Future()
        self.futures.append(future)
        return future


def _settled(count, expected):
    """The feeding thread's submissions once it has had time to make them (it blocks when
    it has no room); polled, not timed."""
    deadline = time.monotonic() + 5
    while count() < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    return count()


def test_once_the_pass_is_done_every_worker_takes_what_runs_ahead():
    """During the pass one chunk is in the pool at a time; after it (`widen`) as many as the
    caller allows, so the rest of the files are not left to one worker (timm: a -j 2 run took
    the wall time of -j 1)."""
    from amplint.run.parallel import Ahead

    pool = _HeldPool()
    started = Ahead(pool, str, list(range(10)), ahead=1)
    count = lambda: len(pool.futures)  # noqa: E731
    assert _settled(count, 1) == 1
    started.widen(4)
    assert _settled(count, 4) == 4
    pool.futures[0].set_result(["0"])
    assert _settled(count, 5) == 5
    started.stop()
