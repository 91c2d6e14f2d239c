"""Notebook results: lint the joined cells, then cite cells and lines as the user sees them."""

from __future__ import annotations

import re
from typing import Callable, List, Tuple

from amplint.workspace import notebooks
from amplint.workspace.baseline import assign_fingerprints
from amplint.analysis.engine import FileResult, Settings, lint_source
from amplint.workspace.files import ReadError, write_source
from amplint.run.fixing import add_noqa_directives, adopt, lint_and_fix
from amplint.run.options import blank_result


_LOCATED = re.compile(r"(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)\Z", re.S)


def process_notebook(path: str, settings: Settings, options) -> FileResult:
    result = blank_result(path)
    try:
        notebook = notebooks.load(path)
    except ReadError as exc:
        result.errors.append(f"{path}: {exc}")
        return result
    if notebook is None:  # another language's notebook
        return result
    before = {cell.number: cell.text for cell in notebook.cells}

    written = [notebook.source.text]

    def write(module: str) -> None:
        new_json, _ = notebook.render(module)
        write_source(notebook.source, new_json)
        written.append(new_json)

    def diff(module: str) -> str:
        return notebooks.cell_diff(path, before, notebook.cell_texts(module))

    text = notebook.module
    if options.add_noqa:
        found, final = add_noqa_directives(path, text, settings, write)
    else:
        try:
            found, final = lint_and_fix(path, text, settings, options, write, diff)
        except notebooks.NotebookError as exc:  # from --diff
            found = adopt(lint_source(path, text, settings, fix=False))
            found.errors.append(f"{path}: fixes not shown: {exc}")
            final = text
    assign_fingerprints(found.diagnostics, final.splitlines())
    locate = _locator(final, [cell.number for cell in notebook.cells])
    rows = notebooks.file_lines(written[-1]) if found.diagnostics else {}
    for diag in found.diagnostics:
        cell, line = locate(diag.line)
        _, end_line = locate(diag.end_line)
        diag.message = _cite_cells(diag.message, cell, locate)
        diag.cell, diag.line, diag.end_line = cell, line, end_line  # type: ignore[attr-defined]
        cell_rows = rows.get(cell, [])
        diag.file_line = cell_rows[line - 1] if 0 < line <= len(cell_rows) else None  # type: ignore[attr-defined]
    prefix = f"{path}:"
    errors = []
    for error in found.errors:
        match = _LOCATED.match(error[len(prefix):]) if error.startswith(prefix) else None
        if match:
            cell, line = locate(int(match.group("line")))
            error = f"{path}:cell {cell}:{line}:{match.group('col')}: {match.group('rest')}"
        errors.append(error)
    for cell, line, column, message in notebook.errors:
        errors.append(f"{path}:cell {cell}:{line}:{column}: syntax error: {message}")
    found.errors = errors
    found.warnings.extend(f"{path}:cell {cell}: {why}" for cell, why in notebook.notes)
    return found


_CITED_LINE = re.compile(r"\bline (\d+)\b")


def _cite_cells(message: str, cell: int, locate: Callable[[int], Tuple[int, int]]) -> str:
    """Messages cite other lines as `line N` of the joined module; in a notebook that is
    `line M` of the same cell, or `cell C, line M`."""

    def replace(match: "re.Match[str]") -> str:
        other_cell, line = locate(int(match.group(1)))
        if other_cell == cell:
            return f"line {line}"
        return f"cell {other_cell}, line {line}"

    return _CITED_LINE.sub(replace, message)


def _locator(module: str, cell_numbers: List[int]) -> Callable[[int], Tuple[int, int]]:
    """Maps a line of a joined notebook module to (cell number, line within the cell)."""
    marker_lines: List[Tuple[int, int]] = []  # (module line, marker index)
    for number, line in enumerate(module.splitlines(), start=1):
        match = notebooks._MARKER_RE.match(line)
        if match:
            marker_lines.append((number, int(match.group(1))))

    def locate(line: int) -> Tuple[int, int]:
        owner = None
        for marker_line, index in marker_lines:
            if marker_line < line:
                owner = (marker_line, index)
            else:
                break
        if owner is None:
            return (0, line)
        return (cell_numbers[owner[1]], line - owner[0])

    return locate
