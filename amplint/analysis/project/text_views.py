"""One file's text readings, made once per project pass and shared by every reader (issue 26's
cost line): the `CodeText` view (site_text.py: comments and plain strings blanked, its imports
and bindings read as asked) and the names the text calls (`CALLED`).

Both are functions of the text alone, and a pass's texts do not change, so every reader gets
what it would have made itself. Before, the class flow's call-site search (site_files.py), the
return kinds (return_kinds.py) and the chosen builders (chosen_builders.py) each made their own
view of the same file, and five readers of the imported-function entries each scanned the same
text for its called names (the mixed monorepo tree: 89 views and 89 scans made twice).
Kept on the project (dropped with it after the pass)."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet

from amplint.analysis.project.site_text import CodeText

CALLED = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\s*\(")  # names called in a file's text


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
        found = names[path] = frozenset(CALLED.findall(project.files[path]))
    return found
