"""Text tests several entry modules of one project pass ask of every Python file, answered once
per pass (issue 26's cost line): each is a full read of the tree's text (the mixed monorepo
tree: ~0.06 s CPU a word), and the pass's texts do not change, so every asker gets what its
own scan would have found.

- `holds(project, path, word)`: `word in text` (foreign_stores.py, chosen_builders.py and
  local_callers.py each asked it of every file for "autocast", return_kinds.py of each file
  building an optimizer);
- `names_half_literal(project, path)`: dtype_fields.names_a_half_dtype (dtype_fields.py asks
  it of every dataclass file, config_dtypes.py of every file);
- `half_cast(project, path)`: half_callees.HALF_TEXT's search (half_callees.py and
  half_params.py both asked it of every file).

A file outside `project.python` is tested directly (nothing is kept for it), and so is every
file of a stand-in project that cannot keep anything. Kept on the project (dropped with it
after the pass). A test asked first by a loop over a few files would read every file: ask
here only what a loop over every file asks."""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Optional, Tuple


def holds(project, path: str, word: str) -> bool:
    """`word in` the file's text."""
    return _answer(project, path, ("in", word), lambda text: word in text)


def names_half_literal(project, path: str) -> bool:
    """dtype_fields.names_a_half_dtype of the file's text."""
    from amplint.analysis.project.dtype_fields import names_a_half_dtype

    return _answer(project, path, ("half literal",), names_a_half_dtype)


def half_cast(project, path: str) -> bool:
    """Whether half_callees.HALF_TEXT finds a cast in the file's text."""
    from amplint.analysis.project.half_callees import HALF_TEXT

    return _answer(project, path, ("half cast",), lambda text: HALF_TEXT.search(text) is not None)


def _answer(project, path: str, key: tuple, test: Callable[[str], bool]) -> bool:
    kept = _kept(project)
    if kept is None or path not in kept[0]:
        return test(project.files.get(path) or "")
    python, memo = kept
    found = memo.get(key)
    if found is None:
        files = project.files
        found = memo[key] = frozenset(p for p in project.python if test(files.get(p) or ""))
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
