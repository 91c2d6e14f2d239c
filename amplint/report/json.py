"""A JSON list of findings: code, message, severity, filename, line, column, end_line,
end_column, fix ({applicability, message} or null), cell (notebook cell number or null),
fingerprint (stable across edits that shift lines). A file that could not be checked (read,
encoding or syntax error) is an item too, as Ruff writes one: `code` null, `severity`
"error", the error's `filename`, `line` and `column` where known (else null), `message`."""

from __future__ import annotations

import json

from amplint.report import RunSummary, cell_of, parse_error


def render(run: RunSummary, show_fixes: bool = False) -> str:
    items = []
    for diag in run.diagnostics:
        item = diag.to_json()
        item["cell"] = cell_of(diag)
        item["fingerprint"] = getattr(diag, "fingerprint", None)
        items.append(item)
    for error in run.errors:
        entry = parse_error(error)
        items.append({
            "code": None, "message": entry.message, "severity": "error",
            "filename": entry.path, "line": entry.line, "column": entry.column,
            "end_line": entry.line, "end_column": entry.column, "fix": None,
            "cell": entry.cell, "fingerprint": None,
        })
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def render_statistics(run: RunSummary) -> str:
    from amplint.report.text import statistics

    return json.dumps(statistics(run), indent=2) + "\n"
