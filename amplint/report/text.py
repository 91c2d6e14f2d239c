"""`path:line:col: CODE [*] message` lines and a closing summary, as Ruff prints them."""

from __future__ import annotations

from typing import List

from amplint.diagnostics import Applicability
from amplint.report import RunSummary


def render(run: RunSummary) -> str:
    lines: List[str] = []
    for diag in run.diagnostics:
        fixable = diag.fix is not None and (
            diag.fix.applicability is Applicability.SAFE or run.unsafe_fixes
        )
        mark = " [*]" if fixable else ""
        lines.append(f"{diag.filename}:{diag.line}:{diag.column}: {diag.code}{mark} {diag.message}")
    lines.extend(_summary(run))
    return "\n".join(lines) + "\n"


def _summary(run: RunSummary) -> List[str]:
    remaining = len(run.diagnostics)
    fixed = sum(run.fixed.values())
    if remaining == 0 and fixed == 0:
        return [] if run.errors else ["All checks passed!"]
    total = remaining + fixed
    noun = "finding" if total == 1 else "findings"
    if fixed:
        out = [f"Found {total} {noun} ({fixed} fixed, {remaining} remaining)."]
    else:
        out = [f"Found {total} {noun}."]
    safe = sum(
        1 for d in run.diagnostics if d.fix and d.fix.applicability is Applicability.SAFE
    )
    unsafe = sum(
        1 for d in run.diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE
    )
    if run.unsafe_fixes:
        if safe + unsafe:
            out.append(f"[*] {safe + unsafe} fixable with the `--fix` option.")
    else:
        if safe:
            out.append(f"[*] {safe} fixable with the `--fix` option.")
        if unsafe:
            out.append(
                f"{unsafe} more fixable with `--fix --unsafe-fixes` "
                "(unsafe fixes may change behaviour: review them)."
            )
    return out
