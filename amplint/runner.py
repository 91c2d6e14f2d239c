"""Runs the engine over many files and gathers one RunSummary.

`process(path, settings, options)` is the self-contained unit of work for one file (Python or
notebook): plain, picklable inputs; everything it found comes back on the FileResult, with
these additions set as attributes: `result.diff` (the `--diff` text or None),
`result.noqa_added` (directives `--add-noqa` wrote), and on each diagnostic `cell` (notebook
cell number or None), `line_key` and `fingerprint` (see amplint.baseline).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, TextIO, Tuple

from amplint import notebooks
from amplint.baseline import Baseline, assign_fingerprints
from amplint.config import Config, expand
from amplint.cache import Cache, diagnostic_from_dict
from amplint.engine import FileResult, Settings, lint_source, valid_python
from amplint.facts.regions import EntryRegion
from amplint.parallel import imap
from amplint.project import needs_summary
from collections.abc import Mapping
from amplint.files import Excludes, ReadError, discover, read_source, write_source
from amplint.noqa import add_noqa
from amplint.report import RunSummary

PROGRESS_MIN_FILES = 50  # fewer files finish before a progress line would help


@dataclass
class RunOptions:
    fix: bool = False
    diff: bool = False
    force_exclude: bool = False
    add_noqa: bool = False
    jobs: Optional[int] = None  # processes; None: all cores
    cache_dir: Optional[str] = None  # None: no cache
    project: bool = True  # the cross-file pass (off: every file on its own)


@dataclass
class RunOutcome:
    summary: RunSummary
    diffs: List[str]
    internal_error: bool = False
    noqa_added: int = 0
    files: List[str] = field(default_factory=list)


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
    return Settings(settings.select - ignored, settings.unsafe_fixes)


def excludes_for(config: Config) -> Excludes:
    root = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
    if config.exclude is None:
        return Excludes(config.extend_exclude, root, True, config.respect_gitignore)
    return Excludes(list(config.exclude) + list(config.extend_exclude), root, False,
                    config.respect_gitignore)


class Progress:
    """`amplint: 120/4000 files` redrawn in place on a terminal, at most ten times a second."""

    def __init__(self, stream: Optional[TextIO], total: int) -> None:
        self.stream = stream if stream is not None and total >= PROGRESS_MIN_FILES else None
        self.total = total
        self.last = 0.0
        self.drawn = False

    def update(self, done: int) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        self.stream.write(f"\ramplint: {done}/{self.total} files")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.stream is not None and self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run(
    paths: Sequence[str], settings: Settings, options: RunOptions, config: Config,
    baseline: Optional[Baseline] = None, progress: Optional[TextIO] = None,
) -> RunOutcome:
    """Lint `paths`. `progress`: a terminal to draw a progress line on (or None)."""
    files, errors = discover(paths, options.force_exclude, excludes_for(config))
    summary = RunSummary(errors=list(errors), unsafe_fixes=settings.unsafe_fixes,
                         fix_mode=options.fix)
    diffs: List[str] = []
    internal = False
    noqa_added = 0
    results = _run_files(paths, files, settings, options, config, progress)
    for path, result in zip(files, results):
        assert result is not None
        summary.diagnostics.extend(result.diagnostics)
        summary.fixed.update(result.fixes_applied)
        if result.fixes_applied:
            summary.fixed_by_file[path] = Counter(result.fixes_applied)
        summary.errors.extend(result.errors)
        if getattr(result, "diff", None):
            diffs.append(result.diff)  # type: ignore[attr-defined]
        noqa_added += getattr(result, "noqa_added", 0)
        internal = internal or result.internal_error
    summary.files_checked = len(files)
    summary.sort()
    if baseline is not None:
        summary.diagnostics, summary.baselined = baseline.filter(summary.diagnostics)
    return RunOutcome(summary, diffs, internal, noqa_added, files)


def process(
    path: str, settings: Settings, options: RunOptions, diffs: Optional[List[str]] = None,
    entries: Tuple[EntryRegion, ...] = (), summarize: bool = False,
) -> FileResult:
    """Lint (and fix, diff or mark with noqa) one file. `diffs`, when given, also receives the
    file's diff (kept for callers of the first version; `result.diff` has it too)."""
    if path.endswith(".ipynb"):
        result = _process_notebook(path, settings, options)
    else:
        result = _process_python(path, settings, options, entries, summarize)
    if diffs is not None and getattr(result, "diff", None):
        diffs.append(result.diff)  # type: ignore[attr-defined]
    return result


def _blank(path: str) -> FileResult:
    result = FileResult(path)
    result.diff = None  # type: ignore[attr-defined]
    result.noqa_added = 0  # type: ignore[attr-defined]
    return result


def _process_python(
    path: str, settings: Settings, options: RunOptions, entries: Tuple[EntryRegion, ...] = (),
    summarize: bool = False,
) -> FileResult:
    try:
        source = read_source(path)
    except ReadError as exc:
        result = _blank(path)
        result.errors.append(f"{path}: {exc}")
        return result
    text = source.text
    if options.add_noqa:
        result, final = _add_noqa(path, text, settings, lambda new: write_source(source, new))
    else:
        result, final = _lint_and_fix(
            path, text, settings, options,
            write=lambda new: write_source(source, new),
            diff=lambda new: unified_diff(path, text, new),
            entries=entries, summarize=summarize and needs_summary(text),
        )
        if summarize and not needs_summary(text):
            result.summary = False  # not a file the project pass summarises
    for diag in result.diagnostics:
        diag.cell = None  # type: ignore[attr-defined]
    assign_fingerprints(result.diagnostics, final.splitlines())
    return result


def _lint_and_fix(
    path: str, text: str, settings: Settings, options: RunOptions,
    write: Callable[[str], None], diff: Callable[[str], str],
    entries: Tuple[EntryRegion, ...] = (), summarize: bool = False,
) -> Tuple[FileResult, str]:
    """(result, the text its diagnostics refer to)."""
    want_fix = options.fix or options.diff
    found = lint_source(
        path, text, settings, fix=want_fix, entries=entries, summarize=summarize
    )
    result = _adopt(found)
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
        return result, text
    return result, found.fixed_source


def _adopt(found: FileResult) -> FileResult:
    found.diff = None  # type: ignore[attr-defined]
    found.noqa_added = 0  # type: ignore[attr-defined]
    return found


def _add_noqa(
    path: str, text: str, settings: Settings, write: Callable[[str], None],
) -> Tuple[FileResult, str]:
    found = _adopt(lint_source(path, text, settings, fix=False))
    if not found.diagnostics:
        return found, text
    new, added, skipped = add_noqa(text, found.diagnostics)
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
    after = _adopt(lint_source(path, new, settings, fix=False))
    after.errors = found.errors + after.errors
    after.noqa_added = added  # type: ignore[attr-defined]
    return after, new


_LOCATED = re.compile(r"(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)\Z", re.S)


def _process_notebook(path: str, settings: Settings, options: RunOptions) -> FileResult:
    result = _blank(path)
    try:
        notebook = notebooks.load(path)
    except ReadError as exc:
        result.errors.append(f"{path}: {exc}")
        return result
    if notebook is None:  # another language's notebook
        return result
    before = {cell.number: cell.text for cell in notebook.cells}

    written = [notebook.source.text]

    def write(module: str) -> None:
        new_json, _ = notebook.render(module)
        write_source(notebook.source, new_json)
        written.append(new_json)

    def diff(module: str) -> str:
        return notebooks.cell_diff(path, before, notebook.cell_texts(module))

    text = notebook.module
    if options.add_noqa:
        found, final = _add_noqa(path, text, settings, write)
    else:
        try:
            found, final = _lint_and_fix(path, text, settings, options, write, diff)
        except notebooks.NotebookError as exc:  # from --diff
            found = _adopt(lint_source(path, text, settings, fix=False))
            found.errors.append(f"{path}: fixes not shown: {exc}")
            final = text
    assign_fingerprints(found.diagnostics, final.splitlines())
    locate = _locator(final, [cell.number for cell in notebook.cells])
    rows = notebooks.file_lines(written[-1]) if found.diagnostics else {}
    for diag in found.diagnostics:
        cell, line = locate(diag.line)
        _, end_line = locate(diag.end_line)
        diag.message = _cite_cells(diag.message, cell, locate)
        diag.cell, diag.line, diag.end_line = cell, line, end_line  # type: ignore[attr-defined]
        cell_rows = rows.get(cell, [])
        diag.file_line = cell_rows[line - 1] if 0 < line <= len(cell_rows) else None  # type: ignore[attr-defined]
    prefix = f"{path}:"
    errors = []
    for error in found.errors:
        match = _LOCATED.match(error[len(prefix):]) if error.startswith(prefix) else None
        if match:
            cell, line = locate(int(match.group("line")))
            error = f"{path}:cell {cell}:{line}:{match.group('col')}: {match.group('rest')}"
        errors.append(error)
    for cell, line, column, message in notebook.errors:
        errors.append(f"{path}:cell {cell}:{line}:{column}: syntax error: {message}")
    found.errors = errors
    return found


_CITED_LINE = re.compile(r"\bline (\d+)\b")


def _cite_cells(message: str, cell: int, locate: Callable[[int], Tuple[int, int]]) -> str:
    """Messages cite other lines as `line N` of the joined module; in a notebook that is
    `line M` of the same cell, or `cell C, line M`."""

    def replace(match: "re.Match[str]") -> str:
        other_cell, line = locate(int(match.group(1)))
        if other_cell == cell:
            return f"line {line}"
        return f"cell {other_cell}, line {line}"

    return _CITED_LINE.sub(replace, message)


def _locator(module: str, cell_numbers: List[int]) -> Callable[[int], Tuple[int, int]]:
    """Maps a line of a joined notebook module to (cell number, line within the cell)."""
    marker_lines: List[Tuple[int, int]] = []  # (module line, marker index)
    for number, line in enumerate(module.splitlines(), start=1):
        match = notebooks._MARKER_RE.match(line)
        if match:
            marker_lines.append((number, int(match.group(1))))

    def locate(line: int) -> Tuple[int, int]:
        owner = None
        for marker_line, index in marker_lines:
            if marker_line < line:
                owner = (marker_line, index)
            else:
                break
        if owner is None:
            return (0, line)
        return (cell_numbers[owner[1]], line - owner[0])

    return locate


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """The diff `--diff` prints, headed with the path as given (`--- path` / `+++ path`).
    The common head and tail are trimmed first and the rest diffed without difflib's
    "popular line" heuristic, which turns a one-line change in a file of repeated lines into
    a diff of everything after it."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = max(0, head - context)
    a_mid, b_mid = a[start:len(a) - tail + min(tail, context)], b[start:len(b) - tail + min(tail, context)]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    out: List[str] = []
    for group in matcher.get_grouped_opcodes(context):
        if not out:
            out += [f"--- {path}\n", f"+++ {path}\n"]
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_range(start + first[1], start + last[2])} "
            f"+{_range(start + first[3], start + last[4])} @@\n"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a_mid[i1:i2])
                continue
            out.extend("-" + line for line in a_mid[i1:i2])
            out.extend("+" + line for line in b_mid[j1:j2])
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """A unified diff range, as difflib writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


# -- the project pass, the pool and the cache ----------------------------------------------------
#
# Every file is parsed once: phase 1 lints each file on its own (report only) in the pool, and
# for the files that can open an autocast region or hold a framework setting the worker also
# returns the project summary made from the same parse. Phase 2 propagates regions over the
# summaries (main process, no parsing but for files a region reaches that phase 1 did not
# summarise). Phase 3 processes again only the files that need more: those that got entries,
# and, with --fix/--diff/--add-noqa, those with something to do. Phase 1 results and summaries
# are cached by content; phase 3 results by content and entries.

PROJECT_CONFIG_SUFFIXES = (".yaml", ".yml")
MAX_CONFIG_BYTES = 1 << 20
REPORT_ONLY = RunOptions()


def _run_files(paths, files, settings, options: RunOptions, config: Config, progress):
    cache = Cache(options.cache_dir) if options.cache_dir else None
    per_file = {path: settings_for(path, settings, config) for path in files}
    use_project = options.project and (
        sum(f.endswith((".py", ".pyi")) for f in files) >= 2 or bool(config.autocast_modules)
    )
    meter = Progress(progress, len(files))
    try:
        first = _cached_map(
            cache, "lint", [(p, per_file[p], REPORT_ONLY, (), use_project) for p in files],
            options.jobs, meter,
        )
    finally:
        meter.close()
    entries: dict = {}
    if use_project:
        summaries = {p: r.summary for p, r in zip(files, first) if p.endswith((".py", ".pyi"))
                     and r.summary is not False}
        entries = _project_entries(paths, files, settings, config, summaries)
    for result in first:
        result.summary = None
    redo = [
        i for i, (path, result) in enumerate(zip(files, first))
        if entries.get(path) or _needs_action(result, per_file[path], options)
    ]
    if redo:
        again = _cached_map(
            cache, "final", [(files[i], per_file[files[i]], options, entries.get(files[i], ()), False)
                             for i in redo],
            options.jobs, None,
        )
        for i, result in zip(redo, again):
            first[i] = result
    return first


def _needs_action(result: FileResult, settings: Settings, options: RunOptions) -> bool:
    if options.add_noqa:
        return bool(result.diagnostics)
    if options.fix or options.diff:
        return any(d.fix is not None and settings.allows(d.fix) for d in result.diagnostics)
    return False


def _cached_map(cache, kind, items, jobs, meter):
    """Results of `_process_item` for `items`, from the cache where it has them."""
    results: List[Optional[FileResult]] = [None] * len(items)
    keys: List[Optional[str]] = [None] * len(items)
    pending: List[int] = []
    writes = any(item[2].fix or item[2].add_noqa for item in items)
    for index, item in enumerate(items):
        if cache is not None and not writes:
            keys[index] = _cache_key(cache, kind, item)
            hit = _from_cache(cache, keys[index])
            if hit is not None:
                results[index] = hit
                continue
        pending.append(index)
    done = len(items) - len(pending)
    for index, result in zip(pending, imap(_process_item, [items[i] for i in pending], jobs)):
        results[index] = result
        if keys[index] is not None:
            _to_cache(cache, keys[index], result)
        done += 1
        if meter is not None:
            meter.update(done)
    return results  # type: ignore[return-value]


class _LazyTexts(dict):
    """path -> source text, read from disk on first use (the project pass reads only the
    files a region or a framework setting reaches)."""

    def __missing__(self, path: str) -> str:
        if path.endswith(PROJECT_CONFIG_SUFFIXES):
            text = _read_small(path) or ""
        else:
            try:
                text = read_source(path).text
            except ReadError:
                text = ""
        self[path] = text
        return text


def _project_entries(paths, files, settings: Settings, config: Config, summaries):
    """path -> the regions other files and framework settings put around its functions."""
    from amplint.project import build

    texts = _LazyTexts()
    keys = [f for f in files if f.endswith((".py", ".pyi"))] + _config_files(paths)
    view = _KeyedLazy(keys, texts)
    project = build(view, settings, config, summaries=summaries)
    return {path: project.entries_for(path) for path in keys if project.entries_for(path)}


class _KeyedLazy(Mapping):
    def __init__(self, keys, texts) -> None:
        self._keys = list(keys)
        self._texts = texts

    def __getitem__(self, path: str) -> str:
        if path not in self._keys_set:
            raise KeyError(path)
        return self._texts[path]

    @property
    def _keys_set(self):
        found = self.__dict__.get("_set")
        if found is None:
            found = self.__dict__["_set"] = set(self._keys)
        return found

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _config_files(paths: Sequence[str]) -> List[str]:
    """YAML files under the linted folders (framework settings such as detectron2's
    `SOLVER.AMP.ENABLED` or a LightningCLI `trainer: precision:` live there)."""
    from amplint.files import DEFAULT_EXCLUDES

    found: List[str] = []
    for root in paths:
        if not os.path.isdir(root):
            continue
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDES)
            found.extend(
                os.path.join(directory, name) for name in sorted(filenames)
                if name.endswith(PROJECT_CONFIG_SUFFIXES)
            )
    return found


def _read_small(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _process_item(item) -> FileResult:
    """The pool's unit of work; results travel back without tree nodes. A file the project
    pass does not need to summarise gets `summary = False` (None: it could not be parsed)."""
    path, settings, options, entries, summarize = item
    result = process(path, settings, options, entries=entries, summarize=summarize)
    for diag in result.diagnostics:
        diag.strip()
    return result


def _cache_key(cache: Cache, kind: str, item) -> Optional[str]:
    path, settings, options, entries, summarize = item
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    described = repr((kind, sorted(settings.select), settings.unsafe_fixes, path, entries,
                      summarize, options.fix, options.diff, options.add_noqa))
    return cache.key(data, described)


_EXTRA = ("cell", "line_key", "fingerprint", "file_line")


def _to_cache(cache: Cache, key: str, result: FileResult) -> None:
    if result.internal_error or result.fixed_source is not None or getattr(result, "noqa_added", 0):
        return  # only results that describe the file as it is on disk now
    if getattr(result, "diff", None):
        return
    diagnostics = []
    for diag in result.diagnostics:
        data = diag.to_json()
        for name in _EXTRA:
            if hasattr(diag, name):
                data["_" + name] = getattr(diag, name)
        diagnostics.append(data)
    summary = None if result.summary in (None, False) else result.summary
    cache.put(key, {"diagnostics": diagnostics, "errors": result.errors,
                    "summary": result.summary if result.summary is False else None},
              blob=summary)


def _from_cache(cache: Cache, key: Optional[str]):
    if key is None:
        return None
    found = cache.get(key, with_blob=True)
    if found is None:
        return None
    data, blob = found
    diagnostics = []
    for item in data["diagnostics"]:
        diag = diagnostic_from_dict(item)
        for name in _EXTRA:
            if "_" + name in item:
                setattr(diag, name, item["_" + name])
        diagnostics.append(diag)
    result = _blank(diagnostics[0].filename if diagnostics else "")
    result.diagnostics = diagnostics
    result.errors = list(data["errors"])
    result.summary = False if data.get("summary") is False else blob
    return result
