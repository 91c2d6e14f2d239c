"""`--add-noqa`: mark every current finding with `# noqa: CODE` on its line."""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from typing import Dict, Iterable, List, Set, Tuple

from amplint.analysis.diagnostics import Diagnostic

_NOQA_CODES = re.compile(
    r"(?P<head>#\s*noqa:\s*)(?P<codes>[A-Z]+[0-9]+(?:(?:\s*,\s*|\s+)[A-Z]+[0-9]+)*)", re.I
)


_LINE_TOKENS = {
    tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
    tokenize.ENDMARKER,
}


def _unsafe_lines(source: str) -> Set[int]:
    """Lines whose end lies inside a multi-line string or that continue with a backslash:
    a comment cannot be appended to them."""
    bad: Set[int] = set()
    lines = source.splitlines()
    for number, line in enumerate(lines, start=1):
        if line.endswith("\\"):
            bad.add(number)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.start[0] < token.end[0] and token.type not in _LINE_TOKENS:
                bad.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return bad


def add_noqa(source: str, diagnostics: Iterable[Diagnostic]) -> Tuple[str, int, List[int]]:
    """(new source, directives added, lines where none could be added)."""
    wanted: Dict[int, List[str]] = defaultdict(list)
    for diag in diagnostics:
        if diag.code not in wanted[diag.line]:
            wanted[diag.line].append(diag.code)
    if not wanted:
        return source, 0, []
    lines = source.splitlines(keepends=True)
    unsafe = _unsafe_lines(source)
    added = 0
    skipped: List[int] = []
    for number, codes in sorted(wanted.items()):
        if number < 1 or number > len(lines) or number in unsafe:
            skipped.append(number)
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        match = _NOQA_CODES.search(body)
        if match:
            present = [c.upper() for c in re.findall(r"[A-Z]+[0-9]+", match.group("codes"), re.I)]
            merged = present + [c for c in codes if c not in present]
            body = body[: match.start()] + match.group("head") + ", ".join(merged) + body[match.end():]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(codes)
        lines[number - 1] = body + ending
        added += len(codes)
    return "".join(lines), added, skipped
