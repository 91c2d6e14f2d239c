"""The GradScaler protocol summaries the project pass asks for (amplint.analysis.project.
scaler_summaries), made in the process pool and cached by content like the region summaries."""

from __future__ import annotations

from typing import Dict, List, Optional

from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.project.scaler_summaries import (
    CALLEE_WORDS, CALLER_WORDS, is_caller, summarize_scaler,
)
from amplint.run.parallel import Workers, cycles_collected_after, is_huge
from amplint.workspace.cache import Cache
from amplint.workspace.files import read_source


def scaler_summaries_of(paths: List[str], force: bool, cache: Optional[Cache], workers: Workers
                        ) -> Dict[str, object]:
    """path -> its protocol summary (None: none made). Without `force`, only the files whose
    text holds a scaler or framework-verb word are summarised (the callers)."""
    found: Dict[str, object] = {}
    keys: Dict[str, Optional[str]] = {}
    pending: List[str] = []
    for path in paths:
        if not _holds_words(path, _CALLEE_WORDS if force else _WORDS):
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


_WORDS = tuple(word.encode() for word in CALLER_WORDS)
_CALLEE_WORDS = tuple(word.encode() for word in CALLEE_WORDS)


def _holds_words(path: str, words) -> bool:
    """A text test on the file's bytes (the words are ASCII)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return any(word in data for word in words)


def summarize_file(item):
    """The pool's unit: (path, force) -> the file's protocol summary, or None."""
    path, force = item
    try:
        with cycles_collected_after():
            text = read_source(path).text
            if not force and not is_caller(text):
                return None
            module = parse(text)
            return summarize_scaler(path, module, FileFacts(module), force)
    except Exception:  # unreadable, unparsable or an analysis bug: no protocol to compose
        return None
