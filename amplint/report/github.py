"""GitHub Actions workflow commands: one `::error|warning|notice ...::message` line per
finding, which the Actions runner turns into annotations on the pull request.

Syntax (GitHub docs, "Workflow commands for GitHub Actions"):
`::LEVEL file=F,line=L,col=C,endLine=EL,endColumn=EC,title=T::MESSAGE`. In property values
`%`, CR, LF, `:` and `,` are escaped as %25 %0D %0A %3A %2C; in the message `%`, CR and LF.
"""

from __future__ import annotations

import os
from typing import List

from amplint.report import RunSummary, cell_of, location, parse_error, relative_uri

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(run: RunSummary, show_fixes: bool = False) -> str:
    lines: List[str] = []
    for diag in run.diagnostics:
        level = LEVELS.get(diag.severity.value, "warning")
        props = [("title", f"amplint ({diag.code})"), ("file", relative_uri(diag.filename))]
        cell = cell_of(diag)
        file_line = getattr(diag, "file_line", None)
        if cell is None:
            props += [("line", str(diag.line)), ("col", str(diag.column)),
                      ("endLine", str(diag.end_line)), ("endColumn", str(diag.end_column))]
        elif file_line:
            props.append(("line", str(file_line)))
        head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
        message = f"{location(diag)}: {diag.code} {diag.message}"
        if show_fixes and diag.fix is not None:
            message += f"\nfix ({diag.fix.applicability.value}): {diag.fix.message}"
        lines.append(f"::{level} {head}::{escape_data(message)}")
    for error in run.errors:
        entry = parse_error(error)
        props = [("title", "amplint")]
        if entry.path is not None:
            props.append(("file", relative_uri(entry.path)))
            # in a notebook the cell's line is not the file's: the annotation goes on the file
            if entry.line is not None and entry.cell is None:
                props.append(("line", str(entry.line)))
                if entry.column is not None:
                    props.append(("col", str(entry.column)))
            elif os.path.isfile(entry.path):
                props.append(("line", "1"))  # an annotation needs a line to land on the file
        head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
        lines.append(f"::error {head}::{escape_data(error)}")
    return "\n".join(lines) + "\n" if lines else ""
