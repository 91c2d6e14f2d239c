"""One file's unit of work: read, lint, fix (or diff, or add `# noqa`), write.

`process(path, settings, options)` takes plain, picklable inputs; everything it found comes back
on the FileResult, with these additions set as attributes: `result.diff` (the `--diff` text or
None), `result.noqa_added` (directives `--add-noqa` wrote), and on each diagnostic `cell`
(notebook cell number or None), `line_key` and `fingerprint` (see amplint.workspace.baseline)."""

from __future__ import annotations

import sys
import traceback
from typing import List, Optional, Tuple, Union

from amplint.workspace.baseline import assign_fingerprints
from amplint.report.diffs import unified_diff
from amplint.analysis import large_files
from amplint.analysis.engine import FileResult, Settings, internal_error_result
from amplint.analysis.parsing import hold_module
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.prefilter import could_match
from amplint.workspace.files import ReadError, read_source, write_source
from amplint.run.fixing import add_noqa_directives, lint_and_fix
from amplint.run.options import REPORT_ONLY, RunOptions, blank_result  # noqa: F401 (re-exported)
from amplint.run.notebook_results import process_notebook
from amplint.run.parallel import cycles_collected_after
from amplint.run.progress import naming_slow_file
from amplint.run.first_pass import Need, need_of
from amplint.run.scaler_inputs import first_pass_summary
from amplint.analysis.project.ast_summary import Refusal, ast_summary
from amplint.analysis.project.context_prefilters import opener_text_tests
from amplint.analysis.project.first_pass_ast import ast_first_pass, framework_call
from amplint.analysis.project.first_pass_answers import first_pass_walks
from amplint.analysis.project.summary import portable_summary


def process(
    path: str, settings: Settings, options: RunOptions, diffs: Optional[List[str]] = None,
    entries: Tuple[EntryRegion, ...] = (), summarize: Union[bool, Need] = False,
) -> FileResult:
    """Lint (and fix, diff or mark with noqa) one file. `diffs`, when given, also receives the
    file's diff (kept for callers of the first version; `result.diff` has it too). `summarize`:
    make what the project pass reads (True, or the runner's Need of the file).
    An unexpected exception becomes this file's internal error; it never ends the run."""
    try:
        if path.endswith(".ipynb"):
            result = process_notebook(path, settings, options)
        else:
            result = _process_python(path, settings, options, entries, summarize)
    except Exception as exc:  # contain it: one file's bug must not lose the others' results
        result = blank_result(path)
        failed = internal_error_result(path, exc, traceback.format_exc())
        result.errors, result.internal_error, result.traceback = (
            failed.errors, True, failed.traceback
        )
        result.summary = None  # opaque to the project pass
    if diffs is not None and getattr(result, "diff", None):
        diffs.append(result.diff)  # type: ignore[attr-defined]
    return result


def _process_python(
    path: str, settings: Settings, options: RunOptions, entries: Tuple[EntryRegion, ...] = (),
    summarize: Union[bool, Need] = False,
) -> FileResult:
    try:
        source = read_source(path)
    except ReadError as exc:
        result = blank_result(path)
        result.errors.append(f"{path}: {exc}")
        return result
    text = source.text
    if options.add_noqa:
        result, final = add_noqa_directives(
            path, text, settings, lambda new: write_source(source, new), entries, options.noqa_skip)
    else:
        # only the files that can open a region or hold a framework setting: summarising every
        # file the rules parse, in case the project pass asks for it later, cost five times
        # what it saved on a mixed-framework tree (163 summaries made, 9 asked for); and a
        # caller of the GradScaler protocol: its protocol summary from the same parse, for
        # the project pass (which parsed it a second time before). The runner may have made
        # the test already (amplint.run.first_pass).
        need = summarize if isinstance(summarize, Need) else (
            need_of(path, text, source.raw, settings, entries) if summarize else Need(False, None))
        wanted, plan = need
        protocol = plan is True
        if wanted and not protocol and not entries and not (options.fix or options.diff):
            summary = _ast_first_pass(path, text, settings)
            if summary is not None:  # not parsed by LibCST: nothing to lint, no setting
                result = blank_result(path)
                result.summary, result.scaler = summary, plan
                return result
        made: dict = {}

        def summaries(path, text, module, facts):
            if protocol:
                made["scaler"] = first_pass_summary(path, module, facts, text)
            if not wanted:
                return False
            summary = portable_summary(path, text, module, facts)
            made["walked"] = (text, facts)  # what its rules walk, for the project pass (below)
            if summary is not None and (summary.regions or any(opener_text_tests(text))):
                # the pass reads again the trees of region files (module outputs, escapes) and
                # of the first-pass files that may define an opener (context_openers.py)
                hold_module(text, module)
            return summary

        result, final = lint_and_fix(
            path, text, settings, options,
            write=lambda new: write_source(source, new),
            diff=lambda new: unified_diff(path, text, new),
            entries=entries,
            summarize=summaries if wanted or protocol else None,
        )
        if summarize and not wanted:
            result.summary = False  # not a file the project pass's first pass summarises
        elif "walked" in made and result.summary:
            result.walks = first_pass_walks(*made.pop("walked"), result.summary)
        result.scaler = made.get("scaler") if protocol else plan  # None: not made here
    for diag in result.diagnostics:
        diag.cell = None  # type: ignore[attr-defined]
    assign_fingerprints(result.diagnostics, final.splitlines())
    return result


def _ast_first_pass(path: str, text: str, settings: Settings):
    """The first-pass summary of a file no rule could match, from Python's `ast`, when the
    file opens no region and holds no framework setting (amplint.analysis.project.
    first_pass_ast); None: summarise it from LibCST's parse as before."""
    if not path.endswith(".py") or len(text) > large_files.PARTS_ABOVE or not ast_first_pass(text):
        return None  # (stubs: the differential benchmark compares .py files only)
    if could_match(text, settings.rules()):
        return None  # linted: the parse is made anyway
    found = ast_summary(path, text, check=framework_call)
    return None if isinstance(found, Refusal) else found


def process_item(item) -> FileResult:
    """The pool's unit of work; results travel back without tree nodes. A file the project
    pass does not need to summarise gets `summary = False` (None: it could not be parsed)."""
    path, settings, options, entries, summarize = item
    slow_stream = sys.stderr if options.name_slow_files else None
    with cycles_collected_after(), naming_slow_file(path, slow_stream):
        result = process(path, settings, options, entries=entries, summarize=summarize)
    for diag in result.diagnostics:
        diag.strip()
    return result
