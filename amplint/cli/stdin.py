"""`amplint - --stdin-filename PATH`: lint the text on standard input as if it were PATH (its
configuration, per-file-ignores and project context apply), as editors and nbqa call Ruff.
With --fix the fixed text goes to standard output."""

from __future__ import annotations

import os
from collections import Counter
from typing import Optional, Tuple

from amplint.workspace.baseline import assign_fingerprints
from amplint.workspace.config import Config
from amplint.analysis.engine import Settings, lint_source
from amplint.report import RunSummary
from amplint.run.runner import settings_for


def lint_stdin(
    text: str, filename: Optional[str], settings: Settings, config: Config, fix: bool,
    project: bool = True, cache_dir: Optional[str] = None,
) -> Tuple[RunSummary, Optional[str]]:
    """(the run's summary, the fixed text or None when fixing changed nothing)."""
    path = filename or "-"
    entries = ()
    if filename:
        settings = settings_for(filename, settings, config)
        if project and os.path.exists(os.path.dirname(os.path.abspath(filename))):
            from amplint.run.file_context import entries_for

            entries = entries_for(filename, config, cache_dir)
    result = lint_source(path, text, settings, fix=fix, entries=entries)
    final = result.fixed_source if result.fixed_source is not None else text
    for diag in result.diagnostics:
        diag.cell = None  # type: ignore[attr-defined]
    assign_fingerprints(result.diagnostics, final.splitlines())
    summary = RunSummary(diagnostics=list(result.diagnostics), errors=list(result.errors),
                         unsafe_fixes=settings.unsafe_fixes, fix_mode=fix, files_checked=1)
    if result.fixes_applied:
        summary.fixed.update(result.fixes_applied)
        summary.fixed_by_file[path] = Counter(result.fixes_applied)
        summary.applied[path] = list(result.applied)
        summary.resolved = max(0, (result.found_before or 0) - len(result.diagnostics))
    summary.sort()
    return summary, result.fixed_source
