"""Runs the engine over many files and gathers one RunSummary."""

from __future__ import annotations

import difflib
import fnmatch
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from amplint.config import Config, expand
from amplint.engine import FileResult, Settings, lint_source
from amplint.files import ReadError, discover, read_source, write_source
from amplint.report import RunSummary


@dataclass
class RunOptions:
    fix: bool = False
    diff: bool = False
    force_exclude: bool = False


@dataclass
class RunOutcome:
    summary: RunSummary
    diffs: List[str]
    internal_error: bool = False


def _settings_for(path: str, settings: Settings, config: Config) -> Settings:
    if not config.per_file_ignores:
        return settings
    base = os.path.dirname(config.path) if config.path else os.getcwd()
    relative = os.path.relpath(os.path.abspath(path), base)
    ignored = set()
    for glob, codes in config.per_file_ignores.items():
        if fnmatch.fnmatch(relative, glob) or fnmatch.fnmatch(os.path.basename(path), glob):
            ignored |= expand(codes)
    if not ignored:
        return settings
    return Settings(settings.select - ignored, settings.unsafe_fixes)


def _excluded(path: str, config: Config) -> bool:
    patterns = config.exclude + config.extend_exclude
    if not patterns:
        return False
    normalized = os.path.normpath(path)
    parts = normalized.split(os.sep)
    for pattern in patterns:
        if fnmatch.fnmatch(normalized, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return True
    return False


def run(paths: Sequence[str], settings: Settings, options: RunOptions, config: Config) -> RunOutcome:
    files, errors = discover(paths, options.force_exclude)
    explicit = set(paths)
    files = [
        f for f in files
        if not _excluded(f, config) or (f in explicit and not options.force_exclude)
    ]
    summary = RunSummary(errors=list(errors), unsafe_fixes=settings.unsafe_fixes,
                         fix_mode=options.fix)
    diffs: List[str] = []
    internal = False
    for path in files:
        result = process(path, _settings_for(path, settings, config), options, diffs)
        summary.diagnostics.extend(result.diagnostics)
        summary.fixed.update(result.fixes_applied)
        summary.errors.extend(result.errors)
        internal = internal or result.internal_error
    summary.sort()
    return RunOutcome(summary, diffs, internal)


def process(path: str, settings: Settings, options: RunOptions, diffs: List[str]) -> FileResult:
    try:
        source = read_source(path)
    except ReadError as exc:
        result = FileResult(path)
        result.errors.append(f"{path}: {exc}")
        return result
    want_fix = options.fix or options.diff
    result = lint_source(path, source.text, settings, fix=want_fix)
    if result.fixed_source is None:
        return result
    if options.diff:
        diffs.append(unified_diff(path, source.text, result.fixed_source))
        return result
    try:
        write_source(source, result.fixed_source)
    except ReadError as exc:
        result.errors.append(f"{path}: {exc}")
        # Nothing was written: the findings that the fixes addressed are still there.
        relinted = lint_source(path, source.text, settings, fix=False)
        result.diagnostics = relinted.diagnostics
        result.fixes_applied.clear()
    return result


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile=f"a/{path}", tofile=f"b/{path}",
        )
    )
