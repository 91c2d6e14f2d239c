"""What the project pass reads: Python texts on demand and the YAML settings files under the linted folders."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Dict, List, Optional

from amplint.workspace.cache import Cache
from amplint.workspace.config import Config
from amplint.analysis import large_files
from amplint.analysis.engine import Settings
from amplint.workspace.files import ReadError, read_source
from amplint.analysis.facts import FileFacts
from amplint.run.parallel import Workers, cached_imap, cycles_collected_after, is_huge
from amplint.analysis.parsing import holding_trees, keep_held, keep_modules, parse, tag_held
from amplint.analysis.project import build, needs_summary
from amplint.analysis.project.ast_registrations import ast_registrations
from amplint.analysis.project.ast_summary import Refusal, ast_summary
from amplint.analysis.project.classmemo import PASS_BUDGET
from amplint.analysis.project.imported import imported_entries
from amplint.analysis.project.scaler_resolution import scaler_entries
from amplint.analysis.project.summary import portable_summary
from amplint.run.project_cache import PROJECT_CONFIG_SUFFIXES, cached_pass, pass_files
from amplint.run.scaler_inputs import disk_may_hold, protocol_keys_of, scaler_summaries_of, with_first_pass

MAX_CONFIG_BYTES = 1 << 20


class _LazyTexts(dict):
    """path -> source text, read from disk on first use (the project pass reads only the
    files a region or a framework setting reaches)."""

    def __missing__(self, path: str) -> str:
        if path.endswith(PROJECT_CONFIG_SUFFIXES):
            text = _read_small(path) or ""
        else:
            try:
                text = read_source(path).text
            except ReadError:
                text = ""
        self[path] = text
        return text


def project_entries(paths, files, settings: Settings, config: Config, summaries,
                    cache: Optional[Cache] = None, jobs: Optional[int] = None, stats=None,
                    scalers=None, notes: Optional[list] = None, known=None):
    """path -> the regions other files and framework settings put around its functions.
    Summaries the pass asks for beyond the first pass's (subclasses, framework classes) come
    from the cache, else from the process pool: the main process parses nothing.
    `summaries`: path -> summary, or a callable giving that mapping (called only when the
    whole pass is not in the cache). The pass's result is cached under the content of every
    file it may read: any edit, anywhere, makes it run again. `stats`: a dict told whether
    the pass came from the cache ("project_cached"). `scalers`: path -> the GradScaler
    protocol summary the first pass made (amplint.run.scaler_inputs.first_pass_scalers), or a
    callable giving that mapping, as `summaries`; the pass makes the others it needs. `jobs`: a number of processes, or Workers the caller
    keeps (and closes). `notes`: receives a line for each bound the pass reached (what it
    then leaves unresolved), from the cache too. `known`: (pass_files, key) of the caller's own
    lookup of the pass in the cache (project_cache.cached_pass), which missed."""
    if known is not None:
        keys, key = known
    else:
        keys = pass_files(paths, files)
        key, cached = cached_pass(cache, keys, settings, config, stats, notes)
        if cached is not None:
            return cached
    if stats is not None:
        stats["project_cached"] = False
    if callable(summaries):
        summaries = summaries()
    if callable(scalers):
        scalers = scalers()
    view = _KeyedLazy(keys, _LazyTexts())
    own = not isinstance(jobs, Workers)
    with Workers(jobs) if own else contextlib.nullcontext(jobs) as workers, holding_trees():
        project = build(view, settings, config, summaries=summaries,
                        summarize_many=lambda wanted: summaries_of(wanted, cache, workers),
                        registrations_many=lambda wanted: registrations_of(wanted, cache, workers))
        with cycles_collected_after():  # its `ast` parses: no cycles, freed as they are dropped
            remote = scaler_entries(project, keys, with_first_pass(
                scalers or {}, lambda wanted, force: scaler_summaries_of(wanted, force, cache, workers)),
                may_hold=disk_may_hold(), keys_of=lambda wanted: protocol_keys_of(wanted, cache, workers))
        functions = imported_entries(project, keys, remote)
    entries = {path: project.entries_for(path) for path in keys if project.entries_for(path)}
    reached = bound_notes(project, paths)
    for more in (remote, functions):  # scaler callees, classes of other files
        for path, found in more.items():
            entries[path] = tuple(entries.get(path, ())) + found
    keep_held(entries)  # the trees of the files the lint reads next with their entries
    # the LibCST trees of the files linted after the pass: with entries, or not linted before it
    keep_modules(text for path, text in view.read().items() if entries.get(path) or path not in (summaries or {}))
    # the pass's facts and memos hold cycles (an index holding the project that holds it):
    # dropped here, they are freed at once by reference counting, not left for a collection
    # to walk (fairseq: 162K objects of garbage for it, 60K so)
    project.__dict__.clear()
    if notes is not None:
        notes.extend(reached)
    if key is not None:
        cache.put(key, {"project": len(entries), "notes": reached}, blob=entries)
    return entries


def bound_notes(project, paths) -> List[str]:
    """A line when the class flow reached its bound on the questions of one pass."""
    asked = getattr(project.flow, "asked", 0)
    if asked <= PASS_BUDGET:
        return []
    where = paths[0] if paths else "."
    return [f"{where}: the project pass's class flow reached its bound ({PASS_BUDGET:,} values asked); "
            "the cross-file findings that need more are not reported (each file's own findings are "
            "complete); `--isolated-files` skips the pass"]


class _KeyedLazy(Mapping):
    """The project pass's `files`: read half a million times on a 5,000-file tree, so a lookup
    is one set test and one dict lookup (a property in between cost a fifth of a second)."""

    def __init__(self, keys, texts) -> None:
        self._keys = list(keys)
        self._set = frozenset(self._keys)
        self._texts = texts

    def __getitem__(self, path: str) -> str:
        if path not in self._set:
            raise KeyError(path)
        return self._texts[path]

    def get(self, path: str, default=None):
        """Mapping.get without its `try: self[path]` (80,000 calls on the mixed monorepo tree);
        a text is read, as there, when the path is one of the keys (_LazyTexts raises nothing)."""
        return self._texts[path] if path in self._set else default

    def __contains__(self, path) -> bool:
        """Mapping's test (it reads the text, as `self[path]` does), without its frames."""
        if path not in self._set:
            return False
        self._texts[path]  # (read, as Mapping.__contains__ reads it: the texts read decide which trees are kept)
        return True

    def __iter__(self):
        return iter(self._keys)

    def read(self) -> Dict[str, str]:
        """path -> text of the files read so far."""
        return self._texts

    def __len__(self) -> int:
        return len(self._keys)


def _read_small(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def summaries_of(paths: List[str], cache: Optional[Cache], jobs=None) -> Dict[str, object]:
    """path -> its portable summary (None: it could not be summarised), cached by content.
    `jobs`: a number of processes, or the Workers of the whole project pass."""
    found: Dict[str, object] = {}
    keys: Dict[str, Optional[str]] = {}
    pending: List[str] = []
    for path in paths:
        keys[path] = summary_key(cache, path) if cache is not None else None
        hit = cache.get(keys[path], with_blob=True) if keys[path] else None
        if hit is not None:
            found[path] = hit[1]
            continue
        pending.append(path)
    own = not isinstance(jobs, Workers)
    workers = Workers(jobs) if own else jobs
    try:
        for path, summary in zip(pending, workers.imap(summarize_file, pending, isolate=is_huge)):
            found[path] = summary
            if keys[path]:
                cache.put(keys[path], {"summarised": summary is not None}, blob=summary)
    finally:
        if own:
            workers.close()
    return found


def registrations_of(paths: List[str], cache: Optional[Cache], workers: Workers) -> Dict[str, Optional[list]]:
    """path -> its summary's `flow.registrations` taken without the summary (None: summarise
    it to know), cached by content: the registry search reads them from every file whose text
    registers a class, and summarises only the files it then reads further."""
    return cached_imap(workers, registrations_file, paths, cache, "registrations",
                       lambda made: {"registrations": made is not None})


def registrations_file(path: str) -> Optional[list]:
    """The pool's unit of work for `registrations_of`."""
    try:
        with cycles_collected_after():  # an `ast` tree has no cycles: freed as it is dropped
            text = read_source(path).text
            if large_files.split(text) is not None:
                return None  # the summary decides (it is None: linted in parts)
            return ast_registrations(path, text)
    except Exception:  # unreadable or an analysis bug: the summary decides
        return None


def summary_key(cache: Cache, path: str) -> Optional[str]:
    return cache.file_key(path, repr(("summary", path)))


def summarize_file(path: str):
    """The pool's unit of work for the project pass: one file's portable summary, its tree
    dropped before the next file is read."""
    try:
        with cycles_collected_after():
            text = read_source(path).text
            if large_files.split(text) is not None:
                return None  # linted in parts, not read by the project pass (one tree: ~1 GB)
            if not needs_summary(text):  # no region, no setting: the same summary from `ast`
                found = ast_summary(path, text)
                if not isinstance(found, Refusal):
                    tag_held(path, text)  # (the main process's pass: its tree, for the lint)
                    return found
            module = parse(text)
            return portable_summary(path, text, module, FileFacts(module))
    except Exception:  # unreadable, unparsable or an analysis bug: opaque to the project pass
        return None
