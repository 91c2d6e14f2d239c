"""A JSON list of findings: code, message, severity, filename, positions, fix."""

from __future__ import annotations

import json

from amplint.report import RunSummary


def render(run: RunSummary) -> str:
    return json.dumps([d.to_json() for d in run.diagnostics], indent=2) + "\n"
