"""The project pass's one view of its Python texts for `word in text` scans (issue 26's cost
line), and one memo per pass of the files holding each word.

A text stored 4 bytes a character (transformers' files: one emoji each; 1,272 of the mixed
monorepo tree's 5,338 texts, 20.5 M of its 70 M characters) is scanned ~1.5x slower than its
ASCII-reduced copy (every non-ASCII character written `?`), and for a needle that is ASCII and
holds no `?`, `needle in reduced` == `needle in text` exactly: each character of the text is one
character of the copy, an ASCII one unchanged, and no character of the needle can match a `?`
that stood for another. So the view keeps such a copy of each 4-byte text, 8 M characters of them a pass at most
(memory: benchmarks/scan_view.py; 2-byte texts gain less for the same copy: not kept), and a scan
for any other needle reads the originals. Regexes and position reads keep reading the original
(`\\w` matches non-ASCII letters): callers take it from the triple.

The memo also holds the files of each scan read to the end (texts_holding), and a scan for a
word containing a word the memo knows reads only that word's files (`_candidates`).

Kept on the project (dropped with it after the pass)."""

from __future__ import annotations

import sys
from typing import Dict, FrozenSet, Iterator, List, Tuple

Triple = Tuple[str, str, str]  # (path, the text to test `word in`, the original text)

_UCS4 = 4  # bytes a character of a text stored wide (one character beyond U+FFFF)
# the characters of the reduced copies kept per pass (1 byte each): issue 26's cost work may
# grow a run's peak memory by 10 MB; copies of all the mixed monorepo tree's 4-byte texts took 20
_COPIED_CHARS = 8_000_000


def scannable(word: str) -> bool:
    """Does `word in reduce(text)` answer `word in text` for every text?"""
    return word.isascii() and "?" not in word


def reduce(text: str) -> str:
    """The text with each non-ASCII character written `?` (the same length, positions kept)."""
    return text if text.isascii() else text.encode("ascii", "replace").decode("ascii")


def _wide(text: str) -> bool:
    """Is the text stored 4 bytes a character? (str.isascii reads a flag; getsizeof the size)"""
    return not text.isascii() and sys.getsizeof(text) >= _UCS4 * (len(text) + 1)


def python_texts(project) -> List[Tuple[str, str]]:
    """(path, text or "") of each of the project's Python files, in order, made once per pass
    (kept on the project where it can keep anything): a scan of every text walks this list
    rather than looking each text up in `files` (a Mapping whose lookup is Python code: half a
    million lookups on a 5,000-file tree). The texts are the project's own, not copies."""
    held = getattr(project, "__dict__", None)
    files, python = project.files, project.python
    kept = held.get("_python_texts") if type(held) is dict else None
    if kept is not None and kept[0] is files and kept[1] is python:  # (a test may swap them)
        return kept[2]
    found = [(path, files.get(path) or "") for path in python]
    if type(held) is dict:
        for stale in ("_files_holding", "_other_texts"):  # answers read from the texts swapped out
            held.pop(stale, None)
        held["_python_texts"] = (files, python, found)
    return found


def scan_texts(project, word: str) -> List[Triple]:
    """(path, text to test `word in`, original) of each of the project's Python files, in
    order: the reduced copy where `scannable(word)` allows, else the original twice."""
    pairs = python_texts(project)
    held = getattr(project, "__dict__", None)
    kept = held.get("_scan_view") if type(held) is dict else None
    if kept is None or kept[0] is not pairs:
        plain = [(path, text, text) for path, text in pairs]
        reduced, budget = [], _COPIED_CHARS
        for path, text in pairs:
            if len(text) <= budget and _wide(text):
                budget -= len(text)
                reduced.append((path, reduce(text), text))
            else:
                reduced.append((path, text, text))
        kept = (pairs, plain, reduced)
        if type(held) is dict:
            held["_scan_view"] = kept
    return kept[2] if scannable(word) else kept[1]


def every_scan_text(project, word: str) -> List[Triple]:
    """scan_texts, then (path, text, text) of each of the project's other files (configs)."""
    held = getattr(project, "__dict__", None)
    others = held.get("_other_texts") if type(held) is dict else None
    if others is None:
        python = python_files(project)
        others = [(path, text, text) for path, text in project.files.items() if path not in python]
        if type(held) is dict:
            held["_other_texts"] = others
    return scan_texts(project, word) + others


def python_files(project) -> FrozenSet[str]:
    """The project's Python files, as a set (kept for the pass)."""
    held = getattr(project, "__dict__", None)
    found = held.get("_python_set") if type(held) is dict else None
    if found is None or found[0] is not project.python:
        found = (project.python, frozenset(project.python))
        if type(held) is dict:
            held["_python_set"] = found
    return found[1]


def files_holding(project, word: str) -> FrozenSet[str]:
    """The project's Python files whose text holds `word` (`word in text`), one scan per word
    and pass (`scans_made` counts them)."""
    python_texts(project)  # (drops the memo where the texts were swapped)
    held = getattr(project, "__dict__", None)
    memo: Dict[str, FrozenSet[str]] = held.setdefault("_files_holding", {}) if type(held) is dict else {}
    found = memo.get(word)
    if found is None and word in SCANNED_TOGETHER and type(held) is dict:
        _scan_together(project, held, memo)
        found = memo[word]
    if found is None:
        found = memo[word] = frozenset(path for path, scan, _text in _candidates(project, word) if word in scan)
        if type(held) is dict:
            counts = held.setdefault("_scans_made", {})
            counts[word] = counts.get(word, 0) + 1
    return found


# words the pass scans every text for in nearly any tree (text_tests' `autocast` and `half(`,
# string_classes' Hydra `_target_`; of the imported-function entries, return_kinds'
# `torch.optim.` and chosen_builders' `GradScaler`, each asked of nearly every file; not
# local_callers' `float16`: its loop stops at its budget, in the mixed monorepo tree early): the first asked scans for all of them, each text read for each word while it is
# in the processor's cache. Scans of the mixed monorepo tree's 70 M characters, one after
# another, cost about twice as much as this one loop (each is ASCII and holds no `?`: the
# reduced copies answer for them all)
SCANNED_TOGETHER = ("autocast", "half(", "_target_", "torch.optim.", "GradScaler")


def _scan_together(project, held: dict, memo: Dict[str, FrozenSet[str]]) -> None:
    words = [word for word in SCANNED_TOGETHER if word not in memo]
    found: Dict[str, List[str]] = {word: [] for word in words}
    for path, scan, _text in scan_texts(project, SCANNED_TOGETHER[0]):
        for word in words:
            if word in scan:
                found[word].append(path)
    counts = held.setdefault("_scans_made", {})
    for word in words:
        memo[word] = frozenset(found[word])
        counts[word] = counts.get(word, 0) + 1


def paths_holding(project, word: str) -> List[str]:
    """files_holding in the project's order (one scan per word and pass)."""
    holding = files_holding(project, word)
    return [path for path, _text in python_texts(project) if path in holding]


def texts_holding(project, word: str) -> Iterator[Tuple[str, str]]:
    """(path, original text) of the project's Python files holding `word`, in order, read
    lazily (a caller may stop at the first): from files_holding's memo where an earlier scan
    of the pass made it, else scanned (and the memo made when the caller reads to the end)."""
    python_texts(project)  # (drops the memo where the texts were swapped)
    held = getattr(project, "__dict__", None)
    known = held.get("_files_holding", {}).get(word) if type(held) is dict else None
    if known is None and word in SCANNED_TOGETHER and type(held) is dict:
        known = files_holding(project, word)
    if known is None:
        return _scanned(held, word, _candidates(project, word), held and held.get("_python_texts"))
    return ((path, text) for path, _scan, text in scan_texts(project, "") if path in known)


def _scanned(held, word: str, triples: List[Triple], texts) -> Iterator[Tuple[str, str]]:
    found = []
    for path, scan, text in triples:
        if word in scan:
            found.append(path)
            yield path, text
    # read to the end (and the texts not swapped since): the files holding the word, for later scans
    if type(held) is dict and texts is not None and held.get("_python_texts") is texts:
        held.setdefault("_files_holding", {}).setdefault(word, frozenset(found))


def _candidates(project, word: str) -> List[Triple]:
    """scan_texts(project, word), less the files that cannot hold `word`: those that do not
    hold a word it contains (`part in word`) whose holders the pass already knows (every text
    holding `word` holds `part`). The fairseq-shaped `MegatronTrainer` after `Trainer`, the
    `.autocast_context_manager(` after `autocast`: a few files read, not every file."""
    triples = scan_texts(project, word)
    held = getattr(project, "__dict__", None)
    memo = held.get("_files_holding") if type(held) is dict else None
    narrowest = None
    for part, paths in (memo or {}).items():
        if part in word and (narrowest is None or len(paths) < len(narrowest)):
            narrowest = paths
    if narrowest is None or len(narrowest) == len(triples):
        return triples
    pairs = python_texts(project)  # (the triples' order)
    kept = held.get("_text_at")
    if kept is None or kept[0] is not pairs:
        kept = held["_text_at"] = (pairs, {path: at for at, (path, _text) in enumerate(pairs)})
    at = kept[1]
    return [triples[index] for index in sorted(at[path] for path in narrowest)]


def mentioned_outside(project, word: str, path: str) -> bool:
    """Does some file of the project other than `path` (a Python file or a config) hold `word`?"""
    python_texts(project)  # (drops the memo where the texts were swapped)
    held = getattr(project, "__dict__", None)
    known = held.get("_files_holding", {}).get(word) if type(held) is dict else None
    if known is not None and (len(known) > 1 or known and path not in known):
        return True
    others = every_scan_text(project, word)[len(project.python):]
    if known is None and any(word in scan for other, scan, _text in _candidates(project, word) if other != path):
        return True
    return any(word in scan for other, scan, _text in others if other != path)


def scans_made(project) -> Dict[str, int]:
    """word -> the whole-tree scans files_holding made for it this pass (tests count the work)."""
    held = getattr(project, "__dict__", None)
    return dict(held.get("_scans_made", {})) if type(held) is dict else {}
