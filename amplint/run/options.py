"""What a run asks of each file (RunOptions) and the result it starts each file from: light, so
that a run that lints nothing (a warm one) reads them without importing the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, NamedTuple, Optional, Tuple

from amplint.analysis.results import FileResult


@dataclass
class RunOptions:
    fix: bool = False
    diff: bool = False
    force_exclude: bool = False
    add_noqa: bool = False
    # --add-noqa: (code, line) of this file's findings the run drops as chain duplicates
    # (amplint.analysis.diagnostics.drop_chain_duplicates): they get no directive
    noqa_skip: FrozenSet[Tuple[str, int]] = frozenset()
    jobs: Optional[int] = None  # processes; None: all cores
    cache_dir: Optional[str] = None  # None: no cache
    project: bool = True  # the cross-file pass (off: every file on its own)
    name_slow_files: bool = False  # --verbose: name a file still being analysed after 10 s


REPORT_ONLY = RunOptions()


class Need(NamedTuple):
    """What a first-pass lint of a file makes for the project pass: `wanted`, its portable
    summary; `plan`, its protocol summary (first_pass_plan's True / False / None, None also
    where the file is not parsed otherwise). As an item's `summarize`, it stands for True
    (the same cached result) and spares the worker the text tests (amplint.run.first_pass)."""

    wanted: bool
    plan: Optional[bool]

    @property
    def first(self) -> bool:
        """Does the project pass read this file's first-pass lint result?"""
        return self.wanted or self.plan is True


def blank_result(path: str) -> FileResult:
    """A file's result with the run's own attributes set (per_file's docstring names them)."""
    result = FileResult(path)
    result.diff = None  # type: ignore[attr-defined]
    result.noqa_added = 0  # type: ignore[attr-defined]
    return result
