"""The GradScaler protocol summaries the project pass asks for (amplint.analysis.project.
scaler_summaries).

A caller file's summary is made by the first pass, from the parse that lints the file
(`first_pass_plan` / `first_pass_summary`, called by amplint.run.per_file), and travels on its
FileResult (`scaler`) and in its cached result; `with_first_pass` hands those to the project
pass. What the first pass did not make (a callee file without a caller word, a file over the
large-file size, a file mixing line endings) is made in the process pool and cached by
content like the region summaries (`scaler_summaries_of`). Before a callee file is summarised,
`protocol_keys_of` tells from Python's `ast` which of its functions may hold events at all
(amplint.analysis.project.scaler_quiet), also in the pool and cached by content."""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional

from amplint.analysis import large_files
from amplint.analysis.facts import FileFacts
from amplint.analysis.fix_text import mixed_newlines
from amplint.analysis.parsing import parse
from amplint.analysis.project.scaler_quiet import protocol_keys
from amplint.analysis.project.scaler_summaries import (
    CALLEE_WORDS, composes_calls, is_caller, summarize_scaler,
)
from amplint.run.parallel import Workers, cached_imap, cycles_collected_after, is_huge
from amplint.workspace.cache import Cache
from amplint.workspace.files import read_source


def first_pass_plan(path: str, text: str, raw: bytes) -> Optional[bool]:
    """What the first pass does about this `.py` file's protocol summary. True: make it, a
    caller (`composes_calls` of its text, and its bytes hold a caller word: the text test
    `scaler_summaries_of` makes before `summarize_file` makes the same test); False: say it is not a caller. None: leave it to the project pass, which makes it
    as it always did: a caller over the large-file size (linted in parts: no whole tree) or
    mixing line endings (linted with one kind of ending: the summary's texts could differ)."""
    if not (composes_calls(text) and is_caller(raw)):
        return False
    if len(text) > large_files.PARTS_ABOVE or mixed_newlines(text):
        return None
    return True


def first_pass_summary(path: str, module, facts, text: Optional[str] = None) -> object:
    """The summary `scaler_summaries_of(..., force=True)` would make, from the first pass's
    parse and FileFacts (made without entries, as there): a ScalerSummary, or False (none:
    an analysis bug, as there)."""
    try:
        return summarize_scaler(path, module, facts, True, text)
    except Exception:  # an analysis bug: no protocol to compose
        return False


# what a first-pass result's `scaler` says: a ScalerSummary (with every function's events:
# it answers a caller's and a callee's question), False (not a caller: no caller summary; a
# callee's question goes to the pool) or None (not made)
def with_first_pass(made: Mapping[str, object],
                    fallback: Callable[[List[str], bool], Dict[str, object]]):
    """The project pass's `summarize(wanted, force)`: the first pass's summaries where it made
    them, `fallback` for the others."""
    def summarize(wanted: List[str], force: bool) -> Dict[str, object]:
        found: Dict[str, object] = {}
        rest: List[str] = []
        for path in wanted:
            known = made.get(path)
            if known is None or (known is False and force):
                rest.append(path)
            else:
                found[path] = known or None
        if rest:
            found.update(fallback(rest, force))
        return found
    return summarize


def disk_may_hold() -> Callable[[str], bool]:
    """`may_hold` for `scaler_summaries_of(..., force=True)`: its callee-word test of the
    file's bytes, once per file."""
    known: Dict[str, bool] = {}

    def may_hold(path: str) -> bool:
        if path not in known:
            known[path] = _holds_words(path, _CALLEE_WORDS)
        return known[path]
    return may_hold


def first_pass_scalers(paths, results) -> Dict[str, object]:
    """path -> the protocol summary its first-pass result carries (those that carry one)."""
    return {path: result.scaler for path, result in zip(paths, results)
            if getattr(result, "scaler", None) is not None}


def scaler_summaries_of(paths: List[str], force: bool, cache: Optional[Cache], workers: Workers
                        ) -> Dict[str, object]:
    """path -> its protocol summary (None: none made). Without `force`, only the files whose
    text holds a scaler or framework-verb word are summarised (the callers)."""
    found: Dict[str, object] = {}
    keys: Dict[str, Optional[str]] = {}
    pending: List[str] = []
    for path in paths:
        if not (_holds_words(path, _CALLEE_WORDS) if force else _holds_words(path, None)):
            found[path] = None  # the common case, decided here without the pool
            continue
        keys[path] = cache.file_key(path, repr(("scaler summary", path, force))) if cache else None
        hit = cache.get(keys[path], with_blob=True) if keys[path] else None
        if hit is not None:
            found[path] = hit[1]
            continue
        pending.append(path)
    items = [(path, force) for path in pending]
    for path, summary in zip(pending, workers.imap(summarize_file, items,
                                                   isolate=lambda item: is_huge(item[0]))):
        found[path] = summary
        if keys[path]:
            cache.put(keys[path], {"scaler_summarised": summary is not None}, blob=summary)
    return found


_CALLEE_WORDS = tuple(word.encode() for word in CALLEE_WORDS)


def _holds_words(path: str, words) -> bool:
    """A text test on the file's bytes (the words are ASCII); `words` None: `is_caller`'s."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return is_caller(data) if words is None else any(word in data for word in words)


def summarize_file(item):
    """The pool's unit: (path, force) -> the file's protocol summary, or None."""
    path, force = item
    try:
        with cycles_collected_after():
            text = read_source(path).text
            if not force and not composes_calls(text):
                return None
            if large_files.split(text) is not None:
                return None  # linted in parts, read by no project pass (one whole tree: ~800 MB)
            module = parse(text)
            return summarize_scaler(path, module, FileFacts(module), force, text)
    except Exception:  # unreadable, unparsable or an analysis bug: no protocol to compose
        return None


def protocol_keys_of(paths: List[str], cache: Optional[Cache], workers: Workers) -> Dict[str, object]:
    """path -> `protocol_keys` of its text (None: any function may hold events), cached by
    content."""
    return cached_imap(workers, keys_file, paths, cache, "scaler keys",
                       lambda made: {"scaler_keys": made is not None})


def keys_file(path: str):
    """The pool's unit of `protocol_keys_of`."""
    if not _holds_words(path, _CALLEE_WORDS):
        return frozenset()  # `scaler_summaries_of(..., force=True)` makes no summary of it
    try:
        with cycles_collected_after():  # an `ast` tree has no cycles: freed as it is dropped
            text = read_source(path).text
            if large_files.split(text) is not None:
                return None  # `summarize_file` decides (it gives None)
            return protocol_keys(text)
    except Exception:  # unreadable or an analysis bug: the summary decides
        return None
