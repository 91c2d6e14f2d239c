"""Per-file results through the content cache, computed in the process pool where missing.

Phase 1 results, with the project summary and the GradScaler protocol summary made from the
file's parse, are cached by content; phase 3 results by content and entries. Only results that
describe the file as it is on disk now are stored."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from amplint.workspace.cache import UNREADABLE, Cache, diagnostic_from_dict, diagnostic_to_dict
from amplint.analysis.results import FileResult
from amplint.run.options import Need, blank_result
from amplint.run.parallel import Workers, imap, is_huge


def cached_map(cache, kind, items, jobs, meter, stats=None):
    """Results of `process_item` for `items`, from the cache where it has them. `stats`: a
    dict whose "hits" and "computed" counts are raised by this call's."""
    results: List[Optional[FileResult]] = [None] * len(items)
    keys: List[Optional[str]] = [None] * len(items)
    pending: List[int] = []
    writes = _writes(items)
    for index, item in enumerate(items):
        if cache is not None and not writes:
            keys[index] = _cache_key(cache, kind, item)
            hit = _from_cache(cache, keys[index], item[0])
            if hit is not None:
                results[index] = hit
                continue
        pending.append(index)
    done = len(items) - len(pending)
    if stats is not None:
        stats["hits"] = stats.get("hits", 0) + done
        stats["computed"] = stats.get("computed", 0) + len(pending)
    # largest first: the pool's last chunks are then small files, and no process is left
    # parsing a big model file while the other waits
    pending.sort(key=lambda index: -_size(items[index][0]))
    process_item = _process_item() if pending else None
    for index, result in zip(pending, imap(process_item, [items[i] for i in pending], jobs,
                                                  isolate=lambda item: is_huge(item[0]))):
        results[index] = result
        if keys[index] is not None:
            _to_cache(cache, keys[index], result)
        done += 1
        if meter is not None:
            meter.update(done)
    if cache is not None:
        cache.save_index()
    return results  # type: ignore[return-value]


class LintAhead:
    """`items[i]` for i in `indices` (none of them in the cache) linted in `workers`' pool while
    the main process does other work (the project pass), largest first, at most `ahead` at a
    time. `results()` yields (i, result) as they are collected, each stored in the cache as
    cached_map would: a lint the caller then makes again with entries is still this kind's."""

    def __init__(self, cache, kind, items, indices, workers: Workers, ahead: int) -> None:
        self.cache, self.kind, self.items = cache, kind, items
        self.order = sorted(indices, key=lambda index: -_size(items[index][0]))
        self.started = workers.start(_process_item(), [items[i] for i in self.order], ahead)

    def widen(self, ahead: int) -> None:
        self.started.widen(ahead)

    def results(self):
        for index, result in zip(self.order, self.started.results()):
            if self.cache is not None and not _writes([self.items[index]]):
                _to_cache(self.cache, _cache_key(self.cache, self.kind, self.items[index]), result)
            yield index, result
        if self.cache is not None:
            self.cache.save_index()


def _process_item():
    """per_file.process_item, imported where a file is linted: a run that lints none (a warm
    one) imports neither the engine nor LibCST."""
    from amplint.run.per_file import process_item

    return process_item


def _writes(items) -> bool:
    return any(item[2].fix or item[2].add_noqa for item in items)


def cached_results(cache, kind, items, later: Optional[Dict[int, Tuple[str, dict]]] = None
                   ) -> List[Optional[FileResult]]:
    """What the cache holds for `items` (None where it holds nothing), nothing computed.
    `later`: where given, a result whose project and protocol summaries are kept in a blob
    comes without them (None) and `later[i]` receives what `add_summaries` reads them from
    (its key and value): a warm run whose whole project pass is cached unpickles none of them."""
    if cache is None or _writes(items):
        return [None] * len(items)
    results = []
    for index, item in enumerate(items):
        key = _cache_key(cache, kind, item)
        if later is None:
            results.append(_from_cache(cache, key, item[0]))
            continue
        data = cache.get(key) if key is not None else None
        results.append(None if data is None else _result(data, None, item[0]))
        if data is not None and data.get("_blob"):
            later[index] = (key, data)
    return results


def add_summaries(cache: Cache, stored: Tuple[str, dict], result: FileResult) -> bool:
    """Sets the summaries of a result cached_results made without them, from the blob beside
    `stored` (its `later` entry); False where that blob cannot be read back."""
    key, data = stored
    blob = cache.blob(key)
    if blob is UNREADABLE:
        return False
    _set_summaries(result, data, blob)
    return True


def cached_need(cache, item, compute):
    """The first pass's Need of an item's file (amplint.run.first_pass), kept under the file's
    content and settings like a result: a warm run does not read and test every text that the
    first pass lints nothing of. `compute(path, settings)` gives it (None: unreadable, not kept)."""
    key = None if cache is None or _writes([item]) else _cache_key(cache, "need", item)
    found = cache.get(key) if key is not None else None
    if found is not None:
        return Need(found["wanted"], found["plan"])
    need = compute(item[0], item[1])
    if need is not None and key is not None:
        cache.put(key, {"wanted": need.wanted, "plan": need.plan})
    return need


def _cache_key(cache: Cache, kind: str, item) -> Optional[str]:
    path, settings, options, entries, summarize = item
    summarize = bool(summarize)  # a Need (amplint.run.first_pass) asks what True asks
    described = repr((kind, _FORMAT, sorted(settings.select), settings.unsafe_fixes, settings.torch,
                      path, entries, summarize, options.fix, options.diff, options.add_noqa))
    return cache.file_key(path, described)


_EXTRA = ("cell", "line_key", "fingerprint", "file_line")
# what a cached result holds: 2 added the first pass's protocol summary (`scaler`) to the blob,
# 3 a finding's `through` (the run drops chain duplicates across files after the cache), 4 the
# findings `# noqa` suppressed (which count as reported in that drop)
_FORMAT = 4


def _to_cache(cache: Cache, key: str, result: FileResult) -> None:
    if result.internal_error or result.fixed_source is not None or getattr(result, "noqa_added", 0):
        return  # only results that describe the file as it is on disk now
    if getattr(result, "diff", None):
        return
    diagnostics = []
    for diag in result.diagnostics:
        data = diagnostic_to_dict(diag)
        for name in _EXTRA:
            if hasattr(diag, name):
                data["_" + name] = getattr(diag, name)
        diagnostics.append(data)
    summary = None if result.summary in (None, False) else result.summary
    scaler = None if result.scaler in (None, False) else result.scaler
    cache.put(key, {"diagnostics": diagnostics, "errors": result.errors,
                    "warnings": result.warnings, "suppressed": result.suppressed,
                    "summary": result.summary if result.summary is False else None,
                    "scaler": result.scaler if result.scaler is False else None},
              blob=(summary, scaler) if summary is not None or scaler is not None else None)


def _from_cache(cache: Cache, key: Optional[str], path: str):
    if key is None:
        return None
    found = cache.get(key, with_blob=True)
    if found is None:
        return None
    return _result(*found, path)


def _result(data: dict, blob, path: str) -> FileResult:
    diagnostics = []
    for item in data["diagnostics"]:
        diag = diagnostic_from_dict(item)
        for name in _EXTRA:
            if "_" + name in item:
                setattr(diag, name, item["_" + name])
        diagnostics.append(diag)
    result = blank_result(path)
    result.diagnostics = diagnostics
    result.errors = list(data["errors"])
    result.warnings = list(data.get("warnings", ()))
    result.suppressed = [tuple(item) for item in data.get("suppressed", ())]
    _set_summaries(result, data, blob)
    return result


def _set_summaries(result: FileResult, data: dict, blob) -> None:
    summary, scaler = blob if blob is not None else (None, None)
    result.summary = False if data.get("summary") is False else summary
    result.scaler = False if data.get("scaler") is False else scaler


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
