"""One file's text readings, made once per project pass and shared by every reader (issue 26's
cost line): the `CodeText` view (site_text.py: comments and plain strings blanked, its imports
and bindings read as asked) and the names the text calls (`CALLED`).

Both are functions of the text alone, and a pass's texts do not change, so every reader gets
what it would have made itself. Before, the class flow's call-site search (site_files.py), the
return kinds (return_kinds.py) and the chosen builders (chosen_builders.py) each made their own
view of the same file, and five readers of the imported-function entries each scanned the same
text for its called names (the mixed monorepo tree: 89 views and 89 scans made twice).
Kept on the project (dropped with it after the pass). One reading of every text: the names
written after `def` (`defined_names`), which site_files.member_anywhere scanned every text for
once per name (the mixed monorepo tree: 54 names, ~5 full scans of its 70M characters)."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Set

from amplint.analysis.project.site_text import CodeText
from amplint.analysis.project.scan_view import python_texts

CALLED = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\s*\(")  # names called in a file's text
# CALLED read backwards (`called_names`): led by the literal `(`, which the engine skips to
# (CALLED, led by its lookbehind, is tried at every position: ~8x slower on the largest files);
# the greedy `\w*` then the name's first character, with no `.` or word character before it
_CALLED_BACKWARDS = re.compile(r"\(\s*(\w*[A-Za-z_])(?![.\w])")
# `def` then the name it defines, read without consuming it (`def def f` names `def` and `f`);
# led by the literal (a leading `(?<!\w)` would be tried at every position): the word boundary
# before `def` is the lookbehind after it (`def` with no word character before it)
_DEF_NAME = re.compile(r"def(?<!\wdef)(?=\s+(\w+))")


def code_view(project, path: str) -> CodeText:
    """The CodeText of the file's text."""
    views: Dict[str, CodeText] = project.__dict__.setdefault("_code_views", {})
    found = views.get(path)
    if found is None:
        found = views[path] = CodeText(project.files[path])
    return found


def called_names(project, path: str) -> FrozenSet[str]:
    """The names the file's text calls (`name(`, not after a dot), as `CALLED.findall` reads them."""
    names: Dict[str, FrozenSet[str]] = project.__dict__.setdefault("_called_names", {})
    found = names.get(path)
    if found is None:
        found = names[path] = names_called(project.files[path])
    return found


def names_called(text: str) -> FrozenSet[str]:
    """`frozenset(CALLED.findall(text))`, read from the reversed text."""
    return frozenset(name[::-1] for name in _CALLED_BACKWARDS.findall(text[::-1]))


def defined_names(project) -> FrozenSet[str]:
    """`written_after_def` of the project's Python texts, read once per pass."""
    found = project.__dict__.get("_defined_names")
    if found is None:
        found = project.__dict__["_defined_names"] = written_after_def(
            text for _path, text in python_texts(project))
    return found


def written_after_def(texts: Iterable[str]) -> FrozenSet[str]:
    r"""Every word written as a whole word right after `(?<!\w)def\s+` in one of the texts
    (comments and strings included): the words `w` for which site_files' scan of the texts
    for `w` finds a mention after `def` (tests/test_text_views.py checks the two agree)."""
    names: Set[str] = set()
    for text in texts:
        if "def" in text:
            names.update(_DEF_NAME.findall(text))
    return frozenset(names)
