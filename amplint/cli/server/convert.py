"""amplint's findings, fixes and docs in the Language Server Protocol's terms."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Callable, List, Optional

from lsprotocol import types

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity

SOURCE = "amplint"
# the README's rule table: the one stable place every rule is listed (hover shows the full
# --explain page)
DOCS_URL = "https://github.com/amplint/amplint#rules"
FIX_ALL = "source.fixAll.amplint"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# "called at train.py:19", "the autocast region at train.py:17", "Net() at deploy/loader.py:7"
_CITED_FILE = re.compile(r"\bat (?P<path>[\w./\\-]+\.(?:pyi?|ya?ml)):(?P<line>\d+)")
# "(autocast at line 12)", "under the autocast region at line 9"
_CITED_LINE = re.compile(r"\bat line (?P<line>\d+)")


def to_lsp(diag: Diagnostic, uri: str, locate: Callable[[str], Optional[str]],
           lines: List[str]) -> types.Diagnostic:
    """One finding; `locate`: the file a path cited in the message names (None: not found);
    `lines`: the text's lines (LSP counts columns in UTF-16 code units)."""
    rng = span(diag, lines)
    data = None
    if diag.fix is not None:
        data = {"fix": diag.fix.message, "applicability": diag.fix.applicability.value}
    return types.Diagnostic(
        range=rng,
        message=diag.message,
        severity=_SEVERITY.get(diag.severity, types.DiagnosticSeverity.Warning),
        code=diag.code,
        code_description=types.CodeDescription(href=DOCS_URL),
        source=SOURCE,
        related_information=related(diag.message, uri, locate) or None,
        data=data,
    )


def related(message: str, uri: str,
            locate: Callable[[str], Optional[str]]) -> List[types.DiagnosticRelatedInformation]:
    """The places the message cites (the call, the autocast region, the file that made a
    class half): each becomes a location the editor can jump to."""
    found: List[types.DiagnosticRelatedInformation] = []
    for match in _CITED_FILE.finditer(message):
        path = locate(match.group("path"))
        if path is None:
            continue
        found.append(_info(Path(path).as_uri(), int(match.group("line")),
                           _clause(message, match)))
    for match in _CITED_LINE.finditer(message):
        found.append(_info(uri, int(match.group("line")), _clause(message, match)))
    return found


def _clause(message: str, match) -> str:
    """The words that say what the citation is: "called at train.py:19"."""
    head = message[: match.end()]
    start = max(head.rfind(mark) for mark in "(;,")
    return head[start + 1:].strip()[-80:]


def _info(uri: str, line: int, text: str) -> types.DiagnosticRelatedInformation:
    point = types.Position(line=max(line - 1, 0), character=0)
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=types.Range(start=point, end=point)),
        message=text,
    )


def text_edit(old: str, new: str) -> types.TextEdit:
    """One edit turning `old` into `new`: the changed lines only, so the cursor and folds
    elsewhere stay."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    blocks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not blocks:
        first, last, first_b, last_b = 0, 0, 0, 0
    else:
        first, first_b = blocks[0][1], blocks[0][3]
        last, last_b = blocks[-1][2], blocks[-1][4]
    start = types.Position(line=first, character=0)
    if last < len(a):
        end = types.Position(line=last, character=0)
    else:  # to the end of the text (it may not end with a newline)
        end = _end_of(old)
    return types.TextEdit(range=types.Range(start=start, end=end), new_text="".join(b[first_b:last_b]))


def _end_of(text: str) -> types.Position:
    lines = text.splitlines(keepends=True)
    if not lines:
        return types.Position(line=0, character=0)
    if lines[-1].endswith(("\n", "\r")):
        return types.Position(line=len(lines), character=0)
    return types.Position(line=len(lines) - 1, character=_utf16_len(lines[-1]))


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def action(title: str, kind: str, uri: str, old: str, new: str, version: Optional[int],
           diagnostics=None, preferred: bool = False) -> types.CodeAction:
    edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=[text_edit(old, new)],
    )
    return types.CodeAction(
        title=title, kind=kind, diagnostics=diagnostics, is_preferred=preferred or None,
        edit=types.WorkspaceEdit(document_changes=[edit]),
    )


def fix_title(diag: Diagnostic) -> str:
    assert diag.fix is not None
    label = f"{diag.code}: {diag.fix.message}"
    if diag.fix.applicability is Applicability.UNSAFE:
        label += " (unsafe)"
    return label


def span(diag: Diagnostic, lines: List[str]) -> types.Range:
    return types.Range(start=_position(lines, diag.line, diag.column),
                       end=_position(lines, diag.end_line, diag.end_column))


def _position(lines: List[str], line: int, column: int) -> types.Position:
    """amplint's 1-based line and code-point column as an LSP position."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return types.Position(line=max(line - 1, 0), character=_utf16_len(text[: max(column - 1, 0)]))


def overlaps(a: types.Range, b: types.Range) -> bool:
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def contains(rng: types.Range, pos: types.Position) -> bool:
    return _key(rng.start) <= _key(pos) <= _key(rng.end)


def _key(pos: types.Position):
    return (pos.line, pos.character)
