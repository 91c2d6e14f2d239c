"""Output formats. Each module renders a finished run (`RunSummary`) as text:
`text` (default), `json`, `github` (workflow annotations), `sarif` (2.1.0), `junit`."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple, Optional

from amplint.analysis.diagnostics import Applicability, Diagnostic

FORMATS = ("text", "json", "github", "sarif", "junit")


@dataclass
class RunSummary:
    diagnostics: List[Diagnostic] = field(default_factory=list)  # findings left, sorted
    fixed: Counter = field(default_factory=Counter)  # code -> fixes applied (edits)
    # the findings --fix removed: those found before fixing and gone after (a fix can
    # resolve other findings as well, and a fix may take more than one round)
    resolved: int = 0
    applied: Dict[str, list] = field(default_factory=dict)  # path -> [(code, line, fix message)]
    errors: List[str] = field(default_factory=list)  # one line each
    warnings: List[str] = field(default_factory=list)  # one line each (e.g. a file in parts)
    unsafe_fixes: bool = False
    fix_mode: bool = False
    fixed_by_file: Dict[str, Counter] = field(default_factory=dict)  # path -> code -> count
    baselined: int = 0  # findings left out because the baseline has them
    files_checked: int = 0

    def sort(self) -> None:
        self.diagnostics.sort(key=sort_key)


def sort_key(diag: Diagnostic):
    return (diag.filename, cell_of(diag) or 0, diag.line, diag.column, diag.code)


def cell_of(diag: Diagnostic) -> Optional[int]:
    """The notebook cell (1-based) of a finding in an `.ipynb` file, else None."""
    return getattr(diag, "cell", None)


def location(diag: Diagnostic) -> str:
    """`path:line:col`, or `path:cell N:line:col` in a notebook."""
    cell = cell_of(diag)
    where = f"cell {cell}:" if cell else ""
    return f"{diag.filename}:{where}{diag.line}:{diag.column}"


def fixable(diag: Diagnostic, unsafe_fixes: bool) -> bool:
    """Would `--fix` (with the run's `--unsafe-fixes`) fix it?"""
    return diag.fix is not None and (
        diag.fix.applicability is Applicability.SAFE or unsafe_fixes
    )


def relative_uri(path: str, root: Optional[str] = None) -> str:
    """The path relative to `root` (default: the working directory) with `/` separators;
    absolute when it lies outside."""
    root = os.path.abspath(root or os.getcwd())
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root)
    if relative.startswith(os.pardir):
        return absolute.replace(os.sep, "/")
    return relative.replace(os.sep, "/")


class ErrorEntry(NamedTuple):
    """One error line split into its parts: `path:line:col: message`, `path:cell N:line:col:
    message` (a notebook), `path:line: message` or `path: message` (line and column None)."""
    path: Optional[str]
    line: Optional[int]
    column: Optional[int]
    cell: Optional[int]
    message: str
    text: str  # the whole line, as stderr shows it


_LOCATED = re.compile(
    r"^(?P<path>.+?):(?:cell (?P<cell>\d+):)?(?P<line>\d+):(?:(?P<col>\d+):)? (?P<msg>.*)$", re.S)
_PATH_ONLY = re.compile(r"^(?P<path>.+?): (?P<msg>.*)$", re.S)


def parse_error(text: str) -> ErrorEntry:
    match = _LOCATED.match(text)
    if match:
        cell, col = match.group("cell"), match.group("col")
        return ErrorEntry(match.group("path"), int(match.group("line")),
                          int(col) if col else None, int(cell) if cell else None,
                          match.group("msg"), text)
    match = _PATH_ONLY.match(text)
    if match:
        return ErrorEntry(match.group("path"), None, None, None, match.group("msg"), text)
    return ErrorEntry(None, None, None, None, text, text)
