"""A file too large to hold as one LibCST tree, analysed in parts (issue 34).

A LibCST tree costs ~580 bytes of memory per byte of source: torch's 1.4 MB
`common_methods_invocations.py` is ~800 MB as one tree. Above `PARTS_ABOVE` characters a file
is analysed one group of top-level statements at a time, so memory is bounded by the largest
group. Each part is parsed as a module of its own text, preceded by the file's earlier
top-level imports and one-line assignments (its *context*, so names keep resolving), and every
position maps back to the file's own line. A top-level statement is never split, except one
too large for a part that assigns a list/tuple/set/dict literal with one element per line
(torch's `op_db = [OpInfo(...), ...]` is 660 KB): its elements are then shared out between
parts, each part holding the statement's opening and closing lines. Every line of the file is
owned by one part; a finding is kept only from the part that owns its line.

What a part cannot see (said in the warning line): facts across top-level statements of other
parts (a call into a function defined in another part, a value bound by a statement that is not
an import or a one-line assignment). Fixes are not applied to such a file, and the project
pass does not read it.
"""

from __future__ import annotations

import ast
import gc
import re
import warnings
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import List, Optional, Tuple

from amplint.analysis.positions import outline

PARTS_ABOVE = 640 * 1024  # characters: files above this are analysed in parts
PART_SIZE = 256 * 1024  # characters of own statements per part (a statement is never split)
CONTEXT_MAX = 64 * 1024  # characters of earlier imports/assignments carried into each part

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass
class Part:
    text: str
    lines: List[int]  # lines[i]: the file's line number of the part's line i + 1
    owned: List[Tuple[int, int]]  # the file's lines (first, last) whose findings this part reports
    # its statements' outlines (amplint.analysis.positions.outline) in its own lines, from the
    # file's one `ast` parse; None for a part holding a piece of a split literal
    outline: Optional[tuple] = None

    def owns(self, line: int) -> bool:
        return any(lo <= line <= hi for lo, hi in self.owned)


def warning_line(path: str, parts: int, fix: bool, summary: bool) -> str:
    extra = []
    if fix:
        extra.append("fixes are not applied")
    if summary:
        extra.append("the project pass does not read it")
    tail = "; " + ", ".join(extra) if extra else ""
    return (
        f"{path}: over {PARTS_ABOVE // 1024} KB: analysed in {parts} parts of top-level "
        "statements to bound memory; facts across parts (calls into functions of another part, "
        f"values bound other than by an import or a one-line assignment) are not used{tail}"
    )


# a group: the line ranges of a part's text after its context, each (first, last, owned)
Group = List[Tuple[int, int, bool]]


def split(source: str) -> Optional[List[Part]]:
    """The parts of a file over PARTS_ABOVE characters; None: analyse it whole (small, not
    valid Python, or line endings `ast` and this split would count differently)."""
    if len(source) <= PARTS_ABOVE:
        return None
    if "\r" in source.replace("\r\n", ""):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = _LINE.findall(source)
    groups, kinds, pieces = _groups(tree, lines)
    if len(groups) < 2:
        return None
    _cover_gaps(groups, len(lines))
    body = tree.body
    body_lines = [stmt.lineno for stmt in body]
    parts: List[Part] = []
    context: List[Tuple[int, int]] = []  # earlier imports / one-line assignments
    context_size = 0
    for group in groups:
        numbers: List[int] = []
        for lo, hi in context:
            numbers.extend(range(lo, hi + 1))
        for lo, hi, _ in group:
            numbers.extend(range(lo, hi + 1))
        owned: List[Tuple[int, int]] = []
        for lo, hi, own in group:
            if own and owned and owned[-1][1] + 1 == lo:
                owned[-1] = (owned[-1][0], hi)
            elif own:
                owned.append((lo, hi))
        part = Part("".join(lines[n - 1] for n in numbers), numbers, owned)
        if id(group) not in pieces:
            part.outline = _outline(body, body_lines, context, group, numbers)
        parts.append(part)
        for lo, hi, own in group:
            kind = kinds.get(lo)
            if own and (kind == "import" or (kind == "assign" and context_size < CONTEXT_MAX)):
                context.append((lo, hi))
                context_size += sum(len(lines[n - 1]) for n in range(lo, hi + 1))
    return parts


def _outline(body, body_lines, context, group, numbers) -> tuple:
    """The outlines of a part's statements (its context's, then its own), in the part's lines."""
    statements = []
    for lo, hi in context + [(lo, hi) for lo, hi, _ in group]:
        statements.extend(body[bisect_left(body_lines, lo):bisect_right(body_lines, hi)])
    return outline(statements, {number: index for index, number in enumerate(numbers, 1)})


def _size(lines, lo: int, hi: int) -> int:
    return sum(len(lines[n - 1]) for n in range(lo, hi + 1))


def _groups(tree: ast.Module, lines) -> Tuple[List[Group], dict, set]:
    """Consecutive top-level statements grouped up to PART_SIZE characters; a statement too
    large for a part that is a splittable literal assignment becomes parts of its own.
    Also: first line -> "import" / "assign" for the statements a later part takes as context,
    and the ids of the groups that hold a piece of such a statement."""
    groups: List[Group] = []
    kinds = {}
    pieced = set()
    current: Group = []
    size = 0
    for first, last, stmt in _statement_spans(tree):
        kind = _kind(stmt, first, last) if stmt is not None else ""
        if kind:
            kinds[first] = kind
        length = _size(lines, first, last)
        pieces = _literal_pieces(stmt, first, last, lines) if length > PART_SIZE else None
        if pieces is not None:
            if current:
                groups.append(current)
            groups.extend(pieces)
            pieced.update(id(piece) for piece in pieces)
            current, size = [], 0
            continue
        if current and size + length > PART_SIZE:
            groups.append(current)
            current, size = [], 0
        if current and first > current[-1][1] + 1:  # blank lines, comments between statements
            current.append((current[-1][1] + 1, first - 1, True))
        current.append((first, last, True))
        size += length
    if current:
        groups.append(current)
    return groups, kinds, pieced


def _cover_gaps(groups: List[Group], line_count: int) -> None:
    """Lines between statements (blank, comments) go to the part before them; the file's first
    lines to the first part."""
    first = groups[0][0][0]
    if first > 1:
        groups[0].insert(0, (1, first - 1, True))
    for group, following in zip(groups, groups[1:] + [None]):
        end = group[-1][1]
        nxt = following[0][0] if following is not None else line_count + 1
        if nxt > end + 1:
            group.append((end + 1, nxt - 1, True))


def _statement_spans(tree: ast.Module):
    """(first line, last line, statement) of each top-level statement; statements sharing a line
    (`a = 1; b = 2`) are one span, its statement None."""
    spans: list = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        last = stmt.end_lineno or stmt.lineno
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last), None)
        else:
            spans.append((first, last, stmt))
    return spans


def _kind(stmt: ast.stmt, first: int, last: int) -> str:
    if _imports_only(stmt):
        return "import"
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and first == last:
        return "assign"
    return ""


def _imports_only(stmt: ast.stmt) -> bool:
    """An import, or a `try:` / `if` made of imports (the version fallbacks of a file)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, ast.Try):
        blocks = [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]
    elif isinstance(stmt, ast.If):
        blocks = [stmt.body, stmt.orelse]
    else:
        return False
    inner = [s for block in blocks for s in block]
    return bool(inner) and all(
        isinstance(s, (ast.Pass, ast.Assign)) or _imports_only(s) for s in inner
    ) and any(_imports_only(s) for s in inner)


def _literal_pieces(stmt, first: int, last: int, lines) -> Optional[List[Group]]:
    """`NAME = [e1, e2, ...]` too large for a part, one element per line range (each element
    starts its own line, the brackets on lines of their own): parts that each hold the opening
    lines, some elements and the closing lines; the first part owns the opening lines, the last
    the closing ones. None: not such a statement."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return None
    value = stmt.value
    if isinstance(value, ast.Dict):
        if any(key is None for key in value.keys):
            return None
        elements = [(k.lineno, k.col_offset, v.end_lineno) for k, v in zip(value.keys, value.values)]
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        elements = [(e.lineno, e.col_offset, e.end_lineno) for e in value.elts]
    else:
        return None
    if len(elements) < 2 or value.end_lineno != last or elements[0][0] <= value.lineno:
        return None
    if elements[-1][2] >= value.end_lineno:
        return None
    previous_end = value.lineno
    for start, column, end in elements:
        if start <= previous_end or lines[start - 1].encode()[:column].strip():
            return None  # shares a line with what comes before it
        previous_end = end
    opening = (first, elements[0][0] - 1)
    closing = (elements[-1][2] + 1, last, False)  # owned by the last piece (set below)
    pieces: List[Group] = []
    starts = [e[0] for e in elements] + [closing[0]]
    lo = starts[0]
    size = 0
    for index in range(len(elements)):
        hi = starts[index + 1] - 1
        size += _size(lines, starts[index], hi)
        if size >= PART_SIZE or index == len(elements) - 1:
            pieces.append([(opening[0], opening[1], not pieces), (lo, hi, True), closing])
            lo, size = hi + 1, 0
    for piece in pieces:
        piece[-1] = (closing[0], closing[1], piece is pieces[-1])
    return pieces if len(pieces) > 1 else None


def lint_in_parts(path: str, parts: List[Part], lint_part, fix: bool, summarize, result) -> None:
    """Lint each part on its own into `result` (report only), positions mapped to the file's
    lines; each part's tree is released before the next is parsed. `lint_part(text, lines,
    outline)`: the engine's lint of one part's text (a FileResult), its lines mapped by `lines`,
    its statements outlined (or None)."""
    found = []
    for part in parts:
        sub = lint_part(part.text, part.lines, part.outline)
        for error in sub.errors:
            result.errors.append(_map_error(error, path, part))
        if sub.internal_error:
            result.internal_error = True
            result.traceback = sub.traceback
        result.suppressed.extend(item for item in sub.suppressed if part.owns(item[1]))
        for diag in sub.diagnostics:
            if part.owns(diag.line):
                diag.strip()
                found.append(diag)
        del sub
        # what is left of the part in cycles (the engine releases its facts' own cycles, so
        # that this pass does not go over its whole tree); amplint runs with the collector off
        gc.collect()
    found.sort(key=lambda d: (d.line, d.column, d.code))
    result.diagnostics = found
    if fix:
        result.found_before = len(found)
    result.warnings.append(warning_line(path, len(parts), fix, summarize is not None))


_ERROR_LINE = re.compile(r"(?P<line>[0-9]+):(?P<rest>[0-9]+:.*)$", re.S)


def _map_error(error: str, path: str, part: Part) -> str:
    """A part's parse error `path:LINE:COL: ...` with the file's line."""
    prefix = path + ":"
    if error.startswith(prefix):
        match = _ERROR_LINE.match(error, len(prefix))
        if match and 1 <= int(match.group("line")) <= len(part.lines):
            return f"{prefix}{part.lines[int(match.group('line')) - 1]}:{match.group('rest')}"
    return error
