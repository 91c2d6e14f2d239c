"""The unified diff `--diff` prints."""

from __future__ import annotations

import difflib
from typing import List


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """The diff `--diff` prints, headed with the path as given (`--- path` / `+++ path`).
    The common head and tail are trimmed first and the rest diffed without difflib's
    "popular line" heuristic, which turns a one-line change in a file of repeated lines into
    a diff of everything after it."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = max(0, head - context)
    a_mid, b_mid = a[start:len(a) - tail + min(tail, context)], b[start:len(b) - tail + min(tail, context)]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    out: List[str] = []
    for group in matcher.get_grouped_opcodes(context):
        if not out:
            out += [f"--- {path}\n", f"+++ {path}\n"]
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_range(start + first[1], start + last[2])} "
            f"+{_range(start + first[3], start + last[4])} @@\n"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a_mid[i1:i2])
                continue
            out.extend("-" + line for line in a_mid[i1:i2])
            out.extend("+" + line for line in b_mid[j1:j2])
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """A unified diff range, as difflib writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
