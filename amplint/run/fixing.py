"""Lint and fix one file's text, then write it (or diff it, or mark it with `# noqa`).

Shared by Python files and notebooks; `write` and `diff` say how this kind of file is written
and shown."""

from __future__ import annotations

from typing import Callable, FrozenSet, Optional, Tuple

from amplint.workspace import notebooks
from amplint.analysis.engine import FileResult, Settings, Summarizer, lint_source
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.workspace.files import ReadError
from amplint.workspace.noqa import add_noqa
from amplint.analysis.parsing import valid_python


def lint_and_fix(
    path: str, text: str, settings: Settings, options,
    write: Callable[[str], None], diff: Callable[[str], str],
    entries: Tuple[EntryRegion, ...] = (), summarize: Optional[Summarizer] = None,
) -> Tuple[FileResult, str]:
    """(result, the text its diagnostics refer to)."""
    want_fix = options.fix or options.diff
    found = lint_source(
        path, text, settings, fix=want_fix, entries=entries, summarize=summarize
    )
    result = adopt(found)
    if found.fixed_source is None:
        return result, text
    if options.diff:
        result.diff = diff(found.fixed_source)  # type: ignore[attr-defined]
        return result, found.fixed_source
    try:
        write(found.fixed_source)
    except (ReadError, notebooks.NotebookError) as exc:
        result.errors.append(f"{path}: {exc}")
        # Nothing was written: the findings that the fixes addressed are still there.
        relinted = lint_source(path, text, settings, fix=False, entries=entries)
        result.diagnostics = relinted.diagnostics
        result.fixes_applied.clear()
        result.applied.clear()
        return result, text
    return result, found.fixed_source


def adopt(found: FileResult) -> FileResult:
    found.diff = None  # type: ignore[attr-defined]
    found.noqa_added = 0  # type: ignore[attr-defined]
    return found


def add_noqa_directives(
    path: str, text: str, settings: Settings, write: Callable[[str], None],
    entries: Tuple[EntryRegion, ...] = (), skip: FrozenSet[Tuple[str, int]] = frozenset(),
) -> Tuple[FileResult, str]:
    """Mark every finding, cross-file ones (from `entries`) included, with `# noqa`, but those
    at (code, line) in `skip` (reported elsewhere: the run drops them)."""
    found = adopt(lint_source(path, text, settings, fix=False, entries=entries))
    marked = [d for d in found.diagnostics if (d.code, d.line) not in skip]
    if not marked:
        return found, text
    new, added, skipped = add_noqa(text, marked)
    for line in skipped:
        found.errors.append(
            f"{path}:{line}: cannot add `# noqa` here (the line ends inside a string or "
            "continues with a backslash); suppress it by hand"
        )
    if not added:
        return found, text
    if not valid_python(new):  # pragma: no cover - defensive
        found.errors.append(f"{path}: adding `# noqa` would break the file; not changed")
        return found, text
    try:
        write(new)
    except (ReadError, notebooks.NotebookError) as exc:
        found.errors.append(f"{path}: {exc}")
        return found, text
    after = adopt(lint_source(path, new, settings, fix=False, entries=entries))
    after.errors = found.errors + after.errors
    after.noqa_added = added  # type: ignore[attr-defined]
    return after, new
