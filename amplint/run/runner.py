"""Runs the engine over many files and gathers one RunSummary.

discover -> per-file lint in the pool (cached) -> project pass over the summaries -> the files
that need more (entries, fixes) again -> one RunSummary for every report format.
"""

from __future__ import annotations

import fnmatch
import gc
import os
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Dict, FrozenSet, List, Optional, Sequence, TextIO, Tuple

from amplint.workspace.baseline import Baseline
from amplint.workspace.cache import Cache
from amplint.workspace.config import Config, expand
from amplint.analysis.results import FileResult, Settings, chain_duplicates, internal_error_result
from amplint.analysis.tree_cache import drop_held, holding_modules
from amplint.workspace.files import Excludes, discover
from amplint.workspace.vendored import set_aside
from amplint.run.options import REPORT_ONLY, RunOptions
from amplint.run.progress import Progress
from amplint.run.phase_one import plan_first_pass
from amplint.run.project_cache import cached_pass, pass_files
from amplint.workspace.project_root import context_files
from amplint.report import RunSummary
from amplint.run.parallel import MIN_FILES_PER_WORKER, Workers, is_huge, survivors_frozen
from amplint.run.result_cache import LintAhead, cached_map

__all__ = ["RunOptions", "RunOutcome", "run", "settings_for", "excludes_for"]


@dataclass
class RunOutcome:
    summary: RunSummary
    diffs: List[str]
    internal_error: bool = False
    noqa_added: int = 0
    files: List[str] = field(default_factory=list)
    tracebacks: List[str] = field(default_factory=list)  # of internal errors, for --verbose


def _relative_to(path: str, base: str) -> str:
    return os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")


def settings_for(path: str, settings: Settings, config: Config) -> Settings:
    """The settings for one file: `per-file-ignores` globs (relative to the pyproject.toml's
    folder, else the working directory; a glob without `/` also matches the file name)."""
    if not config.per_file_ignores:
        return settings
    base = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
    relative = _relative_to(path, base)
    ignored = set()
    for glob, codes in config.per_file_ignores.items():
        pattern = glob.lstrip("./") if glob.startswith("./") else glob
        if fnmatch.fnmatchcase(relative, pattern) or (
            "/" not in pattern and fnmatch.fnmatchcase(os.path.basename(path), pattern)
        ):
            ignored |= expand(codes)
    if not ignored:
        return settings
    return Settings(settings.select - ignored, settings.unsafe_fixes, settings.torch)


def excludes_for(config: Config) -> Excludes:
    root = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
    if config.exclude is None:
        return Excludes(config.extend_exclude, root, True, config.respect_gitignore)
    return Excludes(list(config.exclude) + list(config.extend_exclude), root, False,
                    config.respect_gitignore)


def run(
    paths: Sequence[str], settings: Settings, options: RunOptions, config: Config,
    baseline: Optional[Baseline] = None, progress: Optional[TextIO] = None,
) -> RunOutcome:
    """Lint `paths`. `progress`: the stream progress goes to (or None): a line redrawn on a
    terminal, else a line every ~10 s while the run works (amplint.run.progress)."""
    excludes = excludes_for(config)
    files, errors = discover(paths, options.force_exclude, excludes)
    # files given explicitly are linted in their project's context; findings only for them
    root, context = context_files(paths, files, excludes) if options.project else (None, [])
    copies = []
    if not config.report_vendored:  # a framework's copy: read for the project pass, not reported
        files, aside, copies = set_aside(paths, files, context, root, options.force_exclude)
        context = list(context) + aside if options.project else context
    summary = RunSummary(errors=list(errors), unsafe_fixes=settings.unsafe_fixes,
                         fix_mode=options.fix, warnings=[copy.note() for copy in copies])
    diffs: List[str] = []
    internal = False
    noqa_added = 0
    results, project_failure = _run_files([root] if root else paths, files, settings, options,
                                          config, progress, context)
    tracebacks: List[str] = []
    if project_failure is not None and project_failure.errors:
        summary.errors.append(project_failure.errors[0])
        tracebacks.append(project_failure.traceback or "")
        internal = True
    if project_failure is not None:
        summary.warnings.extend(project_failure.warnings)  # the bounds the pass reached
    for path, result in zip(files, results):
        assert result is not None
        summary.diagnostics.extend(result.diagnostics)
        summary.fixed.update(result.fixes_applied)
        if result.fixes_applied:
            summary.fixed_by_file[path] = Counter(result.fixes_applied)
            summary.applied[path] = list(result.applied)
            if result.found_before is not None:
                summary.resolved += max(0, result.found_before - len(result.diagnostics))
        summary.errors.extend(result.errors)
        summary.warnings.extend(getattr(result, "warnings", ()))
        if getattr(result, "diff", None):
            diffs.append(result.diff)  # type: ignore[attr-defined]
        noqa_added += getattr(result, "noqa_added", 0)
        internal = internal or result.internal_error
        if result.traceback:
            tracebacks.append(result.traceback)
    summary.files_checked = len(files)
    # one report per hazard: a finding at a call drops when its event is reported in the callee
    dropped = chain_duplicates(results)
    summary.diagnostics = [d for d in summary.diagnostics if id(d) not in dropped]
    summary.sort()
    if baseline is not None:
        summary.diagnostics, summary.baselined = baseline.filter(summary.diagnostics)
    return RunOutcome(summary, diffs, internal, noqa_added, files, tracebacks)


# -- the project pass, the pool and the cache ----------------------------------------------------
#
# Every file is parsed once, unless the project pass gives it entries after it was linted.
# Phase 1 lints on its own (report only), in the pool, only the files the project pass reads
# from a lint: those that can open an autocast region or hold a framework setting (the worker
# returns their project summary, made from the same parse) and the callers of the GradScaler
# protocol (their protocol summary); the main process picks them by the worker's own text
# tests (amplint.run.first_pass). Phase 2 propagates regions over the summaries (main process,
# no parsing but for files it summarises on demand, in the pool). Phase 3 lints every other
# file once, with its entries (none: the same work and cached result as a phase-1 lint; with
# a pool, those files are linted without entries while phase 2 runs, and those that then get
# entries linted again: _lint_ahead), and again the phase-1 files that need more: those that
# got entries, and, with --fix/--diff/--add-noqa, those with something to do. Phase-1 results
# and summaries are cached by content; results with entries by content and entries
# (amplint.run.result_cache).

def _run_files(paths, targets, settings, options: RunOptions, config: Config, progress,
               context=()):
    """Results for `targets`; `context`: the project's other files, which the project pass
    reads (phase 1, cached) but which are neither reported nor changed."""
    cache = Cache(options.cache_dir, one_run=True) if options.cache_dir else None
    files = list(targets) + list(context)
    per_file = {path: settings_for(path, settings, config) for path in files}
    use_project = options.project and (
        sum(f.endswith((".py", ".pyi")) for f in files) >= 2 or bool(config.autocast_modules)
    )
    meter = Progress(progress, len(files))
    try:
        with holding_modules():  # LibCST trees read again by a later phase (parsing.py)
            return _phases(paths, targets, files, per_file, settings, options, config, cache,
                           meter, use_project)
    finally:
        meter.close()
        if cache is not None:
            cache.save_index()


def _phases(paths, targets, files, per_file, settings, options, config, cache, meter,
            use_project):
    first_options = replace(REPORT_ONLY, name_slow_files=options.name_slow_files)
    if not use_project:
        # the one Python file of its project: no other file calls its public functions
        from amplint.analysis.project.local_callers import lone_file_entries  # (see _phases' note)

        lone = lone_file_entries(files) if options.project else {}
        found = iter(cached_map(
            cache, "lint", [(p, per_file[p], first_options, (), False) for p in files if p not in lone],
            options.jobs, meter,
        ))
        results = [None if p in lone else next(found) for p in files]
        return _final(results[: len(targets)], targets, per_file, options, lone, cache,
                      (meter, len(files))), None
    plain = [(p, per_file[p], first_options, (), True) for p in files]
    plan = plan_first_pass(cache, plain, defer=True)
    results, needs, first = plan.results, plan.needs, plan.asked
    # counted as done: what the cache had, and the project's other files that need no lint
    counted = len(files) - len(needs) + sum(
        p in needs and not (needs[p] is None or needs[p].first) for p in files[len(targets):])
    meter.done = counted  # shown with the first file linted: a run that lints none draws nothing
    found = cached_map(cache, "lint", [plan.item(plain[i]) for i in first], options.jobs,
                       _Counted(meter, counted, len(first), len(first)))
    for index, result in zip(first, found):
        results[index] = result
    counted += len(first)
    with Workers(options.jobs) as workers:  # the pass's, forked before its heap grows
        ahead = _lint_ahead(cache, [plan.item(plain[i]) for i in range(len(targets))], results,
                            workers)
        meter.set_stage("project pass")
        summaries, scalers = plan.inputs_when_read(files)
        entries: dict = {}
        failure: Optional[FileResult] = None
        notes: List[str] = []
        try:
            with survivors_frozen():  # (unfrozen after it: collected below with its own cycles)
                entries = project_entries(paths, files, settings, config, summaries, cache,
                                          workers, scalers=scalers, notes=notes)
        except Exception as exc:  # every file is still linted on its own
            failure = internal_error_result("project pass", exc, traceback.format_exc())
        if notes:
            failure = failure or FileResult(paths[0] if paths else ".")
            failure.warnings.extend(notes)
        meter.set_stage("")
        if ahead is not None:  # the pass is done: every worker may lint what is left
            ahead.widen(2 * workers.jobs)
        for index, result in ahead.results() if ahead is not None else ():
            if not entries.get(targets[index]):  # else linted again below, with them
                results[index] = result
                counted += 1
                meter.update(counted)
    for result in results:
        if result is not None:
            result.summary = result.scaler = None
    results = results[: len(targets)]
    summaries = scalers = None
    # the pass's summaries and memos hold cycles: free them before a pool forks its workers
    # (phase 3's), which would otherwise inherit that heap and walk it in every collection of
    # their own
    gc.collect()
    rest = [i for i, (p, r) in enumerate(zip(targets, results)) if r is None and not entries.get(p)]
    found = cached_map(cache, "lint", [plan.item(plain[i]) for i in rest], options.jobs,
                       _Counted(meter, counted, len(rest), len(rest)))
    for index, result in zip(rest, found):
        result.summary = result.scaler = None
        results[index] = result
    try:
        return _final(results, targets, per_file, options, entries, cache,
                      (meter, counted + len(rest))), failure
    finally:
        drop_held()  # the pass's trees no lint took


def project_entries(paths, files, settings: Settings, config: Config, summaries,
                    cache: Optional[Cache] = None, jobs=None, stats=None, scalers=None,
                    notes: Optional[list] = None):
    """amplint.run.project_inputs.project_entries (same arguments), looked up in the cache
    before the pass is imported: a run whose pass is cached imports none of it."""
    keys = pass_files(paths, files)
    key, cached = cached_pass(cache, keys, settings, config, stats, notes)
    if cached is not None:
        return cached
    from amplint.run.project_inputs import project_entries as made

    return made(paths, files, settings, config, summaries, cache, jobs, stats, scalers, notes,
                known=(keys, key))


def _lint_ahead(cache, items, results, workers: Workers) -> Optional[LintAhead]:
    """The files linted after the project pass whatever it finds (it reads no lint of theirs:
    `results[i]` is None), linted in the pool while the main process runs the pass, which
    left the pool idle but for the pass's own summaries. A thread keeps at most one file per
    worker but one in the pool: the main process is busy with the pass, and the summaries the
    pass asks for wait behind a few files only. A file the pass then gives entries is linted
    again with them, as before (this lint, without them, is dropped). With one job, or too few
    files to pay for the pool, they wait for the pass, as before; so do huge files (each is
    linted in a process of its own)."""
    ready = [i for i, item in enumerate(items) if results[i] is None and not is_huge(item[0])]
    if workers.jobs <= 1 or len(ready) < 2 * MIN_FILES_PER_WORKER:
        return None
    return LintAhead(cache, "lint", items, ready, workers, workers.jobs - 1)


def _final(results, targets, per_file, options, entries, cache, counting):
    """`results` (None: not linted yet) with the files that have entries or, with --fix/--diff/
    --add-noqa, something to do linted with their entries and the run's options. `counting`:
    (the meter, the files it counted) where some of them are linted here the first time."""
    skips: Dict[str, FrozenSet[Tuple[str, int]]] = {}
    if options.add_noqa and any(entries.values()):
        # a cross-file finding the run drops as a chain duplicate must get no directive: lint
        # first, drop, then mark what is left
        results = _final(results, targets, per_file, replace(options, add_noqa=False), entries,
                         cache, counting)
        skips = _chain_skips(results)
        counting = None
    redo = [
        i for i, (path, result) in enumerate(zip(targets, results))
        if entries.get(path) or (result is not None and _needs_action(result, per_file[path], options))
    ]
    if redo:
        fresh = sum(results[i] is None for i in redo)
        meter = None
        if counting is not None:
            counting[0].set_stage(f"{len(redo)} files with entries or fixes")
            if fresh:
                meter = _Counted(counting[0], counting[1], len(redo), fresh)
        again = cached_map(
            cache, "final", [(targets[i], per_file[targets[i]], _with_skips(options, skips, targets[i]),
                              entries.get(targets[i], ()), False) for i in redo],
            options.jobs, meter,
        )
        for i, result in zip(redo, again):
            results[i] = result
    return results


def _chain_skips(results) -> Dict[str, FrozenSet[Tuple[str, int]]]:
    """Per file, (code, line) of the findings `drop_chain_duplicates` drops from the run."""
    dropped = chain_duplicates(results)
    skips: Dict[str, set] = {}
    for result in results:
        for diag in result.diagnostics if result is not None else ():
            if id(diag) in dropped:
                skips.setdefault(result.path, set()).add((diag.code, diag.line))
    return {path: frozenset(lines) for path, lines in skips.items()}


def _with_skips(options: RunOptions, skips, path: str) -> RunOptions:
    return replace(options, noqa_skip=skips[path]) if path in skips else options


class _Counted:
    """The run's meter as one map sees it: `done` of its `items` finished, of which `fresh`
    the meter has not counted yet (taken to finish last: the count never runs ahead)."""

    def __init__(self, meter, before: int, items: int, fresh: int) -> None:
        self.meter, self.before, self.items, self.fresh = meter, before, items, fresh

    def update(self, done: int) -> None:
        self.meter.update(self.before + max(0, done - (self.items - self.fresh)))


def _needs_action(result: FileResult, settings: Settings, options: RunOptions) -> bool:
    if options.add_noqa:
        return bool(result.diagnostics)
    if options.fix or options.diff:
        return any(d.fix is not None and settings.allows(d.fix) for d in result.diagnostics)
    return False
