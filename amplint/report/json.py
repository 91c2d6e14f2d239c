"""A JSON list of findings: code, message, severity, filename, line, column, end_line,
end_column, fix ({applicability, message} or null), cell (notebook cell number or null),
fingerprint (stable across edits that shift lines)."""

from __future__ import annotations

import json

from amplint.report import RunSummary, cell_of


def render(run: RunSummary, show_fixes: bool = False) -> str:
    items = []
    for diag in run.diagnostics:
        item = diag.to_json()
        item["cell"] = cell_of(diag)
        item["fingerprint"] = getattr(diag, "fingerprint", None)
        items.append(item)
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def render_statistics(run: RunSummary) -> str:
    from amplint.report.text import statistics

    return json.dumps(statistics(run), indent=2) + "\n"
