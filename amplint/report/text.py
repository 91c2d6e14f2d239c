"""`path:line:col: CODE [*] message` lines and a closing summary, as Ruff prints them.
In a notebook the location reads `path:cell N:line:col`."""

from __future__ import annotations

from collections import Counter
from typing import List

from amplint.analysis.diagnostics import Applicability
from amplint.report import RunSummary, fixable, location
from amplint.analysis.rules import all_rules


def render(run: RunSummary, show_fixes: bool = False) -> str:
    lines: List[str] = []
    for diag in run.diagnostics:
        mark = " [*]" if fixable(diag, run.unsafe_fixes) else ""
        lines.append(f"{location(diag)}: {diag.code}{mark} {diag.message}")
        if show_fixes and diag.fix is not None:
            lines.append(f"    fix ({diag.fix.applicability.value}): {diag.fix.message}")
    if show_fixes and run.fixed_by_file:
        if lines:
            lines.append("")
        total = sum(run.fixed.values())
        lines.append(f"Applied {total} {'fix' if total == 1 else 'fixes'}:")
        rules = all_rules()
        for path in sorted(run.fixed_by_file):
            lines.append(f"- {path}:")
            for code, line, message in sorted(run.applied.get(path, ()), key=lambda a: a[1]):
                name = rules[code].name if code in rules else ""
                lines.append(f"    line {line}: {code} ({name}): {message}")
        lines.append("")
    lines.extend(_summary(run))
    return "\n".join(lines) + "\n" if lines else ""


def _unchecked(run: RunSummary) -> str:
    """The files the run could not check, said in the same summary line as the findings."""
    if not run.errors:
        return ""
    noun = "file" if len(run.errors) == 1 else "files"
    return f"; {len(run.errors)} {noun} could not be checked (see the errors above)"


def _summary(run: RunSummary) -> List[str]:
    # "Found N findings (F fixed, R remaining)": N is what a run without --fix reports, F the
    # findings the fixes removed, R those left; the fixes applied are listed by --show-fixes.
    remaining = len(run.diagnostics)
    fixed = run.resolved if run.fixed else 0
    out: List[str] = []
    if remaining == 0 and fixed == 0:
        if run.errors:
            out = ["No findings" + _unchecked(run) + "."]
        else:
            out = ["All checks passed!"]
    else:
        total = remaining + fixed
        noun = "finding" if total == 1 else "findings"
        found = f"Found {total} {noun} ({fixed} fixed, {remaining} remaining)" if fixed \
            else f"Found {total} {noun}"
        out = [found + _unchecked(run) + "."]
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
    if run.baselined:
        noun = "finding" if run.baselined == 1 else "findings"
        out.append(f"{run.baselined} baselined {noun} not shown.")
    return out


def statistics(run: RunSummary) -> List[dict]:
    """Per code: how many findings remain, its name, and whether --fix would fix any."""
    counts: Counter = Counter(d.code for d in run.diagnostics)
    any_fixable = {d.code for d in run.diagnostics if fixable(d, run.unsafe_fixes)}
    rules = all_rules()
    rows = [
        {"code": code, "name": rules[code].name if code in rules else "", "count": count,
         "fixable": code in any_fixable}
        for code, count in counts.items()
    ]
    rows.sort(key=lambda r: (-r["count"], r["code"]))
    return rows


def render_statistics(run: RunSummary) -> str:
    """`COUNT<TAB>CODE<TAB>[*] name` per code, most frequent first, as Ruff prints them."""
    rows = statistics(run)
    if not rows:
        return "" if run.errors else "All checks passed!\n"
    width = max(len(str(r["count"])) for r in rows)
    lines = [
        f"{r['count']:>{width}}\t{r['code']}\t{'[*]' if r['fixable'] else '[ ]'} {r['name']}"
        for r in rows
    ]
    return "\n".join(lines) + "\n"
