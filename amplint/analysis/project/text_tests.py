"""Text tests several entry modules of one project pass ask of every Python file, answered once
per pass (issue 26's cost line): each is a full read of the tree's text (the mixed monorepo
tree: ~0.06 s CPU a word), and the pass's texts do not change, so every asker gets what its
own scan would have found.

- `holds(project, path, word)`: `word in text` (foreign_stores.py, chosen_builders.py and
  local_callers.py each asked it of every file for "autocast", return_kinds.py of each file
  building an optimizer);
- `names_half_literal(project, path)`: names_a_half_dtype (dtype_fields.py asks
  it of every dataclass file, config_dtypes.py of every file);
- `casts_half(project, path)`: HALF_CASTS' search (the class flow's half casts), and
  within its files `half_cast(project, path)`: HALF_TEXT's (half_callees.py and
  half_params.py both asked it of every file).

A file outside `project.python` is tested directly (nothing is kept for it), and so is every
file of a stand-in project that cannot keep anything. Kept on the project (dropped with it
after the pass). A test asked first by a loop over a few files would read every file: ask
here only what a loop over every file asks."""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Optional, Tuple

from amplint.analysis.project.scan_view import files_holding, python_texts

# the class flow's half casts (classflow.py reads the files casts_half finds)
HALF_CASTS = re.compile(
    r"\.(?:half|bfloat16)\(\)|\.(?:to|type)\([^)\n]*(?:float16|[Hh]alf|BFloat16)"
)  # and `.apply(convert_module_to_f16)`: converters.may_apply_converter
# half_callees.py's and half_params.py's narrower test (asked within HALF_CASTS' files)
HALF_TEXT = re.compile(r"\.(?:half|bfloat16)\(\)|\.to\([^)\n]*(?:float16|half|bfloat16)")
_HALF_LITERAL = re.compile(r"\btorch\.(?:float16|half|bfloat16)\b")
# the same literal without its leading `\b`: a pattern that starts with a literal is scanned
# for at memchr speed (transformers' 1,112 dataclass texts: ~10x faster)
_HALF_LITERAL_AHEAD = re.compile(r"torch\.(?:float16|half|bfloat16)\b")


def names_a_half_dtype(text: str) -> bool:
    """`_HALF_LITERAL.search(text) is not None` (a search from a position still sees the
    character before it for `\\b`): a `torch.float16`/`half`/`bfloat16` literal (dtype_fields.py)."""
    for match in _HALF_LITERAL_AHEAD.finditer(text):
        if _HALF_LITERAL.search(text, match.start(), match.end()) is not None:
            return True
    return False


_WORD_CHAR = re.compile(r"\w")


def starts_a_word(text: str, at: int) -> bool:
    """`(?<!\\w)` at `at`: no word character just before it. The readers that search from a
    word's literal test it on each match (a pattern led by a lookbehind or `\\b` is tried at
    every position of the text)."""
    return at == 0 or not _WORD_CHAR.match(text, at - 1)


def ends_a_word(text: str, end: int) -> bool:
    """`(?!\\w)` at `end`: no word character there."""
    return not _WORD_CHAR.match(text, end)


def holds(project, path: str, word: str) -> bool:
    """`word in` the file's text."""
    kept = _kept(project)
    if kept is not None and path in kept[0]:
        return path in files_holding(project, word)  # (the pass's one scan of the word)
    return _answer(project, path, ("in", word), lambda text: word in text)


def names_half_literal(project, path: str) -> bool:
    """names_a_half_dtype of the file's text."""
    return _answer(project, path, ("half literal",), names_a_half_dtype)


def casts_half(project, path: str) -> bool:
    """Whether HALF_CASTS finds a cast in the file's text (`.to(`/`.type(` with a
    half dtype, `.half()`, `.bfloat16()`): the files the class flow reads for half casts."""
    return _answer(project, path, ("wide half cast",), lambda text: HALF_CASTS.search(text) is not None)


def half_cast(project, path: str) -> bool:
    """Whether HALF_TEXT finds a cast in the file's text. Searched only in the
    files casts_half finds: each match of HALF_TEXT is one of HALF_CASTS (the same `.half()` /
    `.bfloat16()`; its `.to(...float16|half|bfloat16` is HALF_CASTS' `.to(...float16|half`,
    the `b` of bfloat16 read by `[^)\n]*`)."""
    return casts_half(project, path) and _answer(
        project, path, ("half cast",), lambda text: HALF_TEXT.search(text) is not None, ("wide half cast",))


def _answer(project, path: str, key: tuple, test: Callable[[str], bool], within: Optional[tuple] = None) -> bool:
    """`within`: the key of a test every file passing this one passes (already answered)."""
    kept = _kept(project)
    if kept is None or path not in kept[0]:
        return test(project.files.get(path) or "")
    python, memo = kept
    found = memo.get(key)
    if found is None:
        if within:
            files = project.files
            found = memo[key] = frozenset(p for p in sorted(memo[within]) if test(files.get(p) or ""))
        else:
            found = memo[key] = frozenset(p for p, text in python_texts(project) if test(text))
    return path in found


def _kept(project) -> Optional[Tuple[FrozenSet[str], Dict[tuple, FrozenSet[str]]]]:
    """(the project's Python files, key -> the files passing that test); None for a stand-in
    that keeps nothing (a class or a mapping proxy, as some tests pass)."""
    held = getattr(project, "__dict__", None)
    if type(held) is not dict or not hasattr(project, "python"):
        return None
    kept = held.get("_text_tests")
    if kept is None:
        kept = held["_text_tests"] = (frozenset(project.python), {})
    return kept

