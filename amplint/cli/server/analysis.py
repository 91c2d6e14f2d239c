"""One project as the language server sees it: the files on disk plus the editor's buffers.

The first pass is the CLI's own (the same per-file cache entries, the same project pass,
cached under the same keys as `amplint .` run from the folder the server was started in), so
the editor and the command line agree. After it, an edited buffer is linted from its text with
the entries the project pass last found for it (fast: one file). The project pass runs again,
with the open buffers in place of their files, when an edit changes what the pass reads of a
file: its project summary (a region opened or closed, a framework setting, a call under a
region). A save brings the disk copy up to date; other edits elsewhere take effect on save."""

from __future__ import annotations

import os
import pickle
from typing import Callable, Dict, List, Optional, Tuple

from amplint.workspace.cache import Cache
from amplint.workspace.config import Config
from amplint.analysis.engine import FileResult, Settings, chain_duplicates, lint_source
from amplint.analysis.facts import FileFacts
from amplint.workspace.files import discover
from amplint.run.parallel import Workers
from amplint.analysis.parsing import parse
from amplint.run.per_file import REPORT_ONLY
from amplint.analysis.project import build, needs_summary
from amplint.analysis.project.scaler_resolution import scaler_entries, text_keys_of, text_may_hold
from amplint.analysis.project.scaler_summaries import is_caller, local_summaries
from amplint.analysis.project.function_entries import defined_functions
from amplint.analysis.project.imported import imported_entries
from amplint.analysis.project.summary import portable_summary
from amplint.run.scaler_inputs import disk_may_hold, protocol_keys_of, scaler_summaries_of, with_first_pass
from amplint.run.project_cache import config_files
from amplint.run.project_inputs import (
    _KeyedLazy, _LazyTexts, bound_notes, project_entries, summaries_of,
)
from amplint.workspace.project_root import _too_broad, shown
from amplint.run.phase_one import plan_first_pass
from amplint.run.result_cache import cached_map
from amplint.run.runner import excludes_for, settings_for

CHUNK = 400  # files per step of the first pass: progress is reported, cancellation checked


class Cancelled(Exception):
    """The client cancelled the first project pass (window/workDoneProgress/cancel)."""


def norm(path: str) -> str:
    """One spelling per file, whatever links the editor's path goes through (the working
    directory the CLI's paths are relative to is always resolved)."""
    return os.path.normcase(os.path.realpath(path))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except OSError:
        return ""


def summary_of_text(path: str, text: str, always: bool = False):
    """The project summary of an editor buffer (None: it cannot be parsed; False: nothing in
    it opens a region or holds a framework setting, as the runner marks such files, unless
    `always`: the pass asks for this file, as for a base class it resolves)."""
    if not always and not needs_summary(text):
        return False
    try:
        module = parse(text)
        return portable_summary(path, text, module, FileFacts(module))
    except Exception:  # unparsable while being typed: opaque to the project pass
        return None


def _same(a, b) -> bool:
    """Whether two project summaries are the same. Equality first: a summary read back from
    the cache pickles to other bytes than the same summary made afresh (shared objects are
    memoised differently), so comparing pickles alone took every first edit of a file for a
    change of its summary and ran the whole project pass for nothing."""
    if a is b:
        return True
    try:
        if a == b:
            return True
    except Exception:
        pass
    try:
        return pickle.dumps(a) == pickle.dumps(b)
    except Exception:
        return False


class _Texts(_LazyTexts):
    """Disk texts, read once and kept (a save drops the file's copy), under the buffers."""

    def __init__(self, overlays: Dict[str, str], disk: Dict[str, str]) -> None:
        super().__init__()
        self.overlays = overlays
        self.disk = disk

    def __missing__(self, path: str) -> str:
        if path in self.overlays:
            return self.overlays[path]
        if path not in self.disk:
            self.disk[path] = super().__missing__(path)
        return self.disk[path]


class ProjectState:
    """`root`: the project's folder (absolute). Paths are spelled as the CLI spells them when
    run from the working directory (relative under it), so cache keys and messages match."""

    def __init__(self, root: str, config: Config, settings: Settings,
                 cache_dir: Optional[str], project: bool = True, jobs: Optional[int] = None):
        self.root = root
        self.config = config
        self.settings = settings
        self.project = project
        self.jobs = jobs
        self.cache = Cache(cache_dir) if cache_dir else None
        self.files: List[str] = []
        self.spelled: Dict[str, str] = {}  # norm(path) -> the spelling in self.files
        self.summaries: Dict[str, object] = {}  # path -> summary of its disk text
        self.used: Dict[str, object] = {}  # path -> the summary the last project pass used
        # path -> the protocol summary the first pass made from its disk text (run.scaler_inputs)
        self.scalers: Dict[str, object] = {}
        self.entries: Dict[str, tuple] = {}  # norm(path) -> entries
        self.disk_texts: Dict[str, str] = {}
        self.buffers: Dict[str, str] = {}  # the spelled paths the last pass read from buffers
        # (path, text) -> lint of another file a buffer's finding reaches (its entries: until
        # the next pass)
        self._others: Dict[tuple, FileResult] = {}
        self.ready = False
        self.use_project = False
        # the lines the last project pass left (a bound it reached), as the CLI warns of them;
        # `shown_notes`: those the client was already told of
        self.notes: List[str] = []
        self.shown_notes: set = set()
        # the first pass: files linted, how many came from the cache (the CLI's entries when
        # `amplint .` ran there before), whether the project pass did
        self.first_stats: Dict[str, object] = {}
        self._needs: Dict[str, object] = {}  # path -> its first_pass.Need, for files not cached

    # -- the first pass --------------------------------------------------------------------
    def first_pass(self, overlays: Dict[str, str],
                   report: Callable[[int, int], None] = lambda done, total: None,
                   cancelled: Callable[[], bool] = lambda: False) -> None:
        if _too_broad(self.root):  # no project above the file: lint it alone, as the CLI does
            self.ready = True
            return
        files, _ = discover([shown(self.root)], False, excludes_for(self.config))
        self.files = files
        self.spelled = {norm(f): f for f in files}
        python = [f for f in files if f.endswith((".py", ".pyi"))]
        self.use_project = self.project and (len(python) >= 2 or bool(self.config.autocast_modules))
        if self.use_project:
            items = [(f, settings_for(f, self.settings, self.config), REPORT_ONLY, (), True)
                     for f in python]
            for start in range(0, len(items), CHUNK):
                if cancelled():
                    raise Cancelled()
                chunk = items[start:start + CHUNK]
                for (path, *_), result in zip(chunk, self._first_results(chunk)):
                    if result is None:  # not linted: the project pass reads no lint of it
                        need = self._needs[path]
                        if need is not None and need.plan is not None:
                            self.scalers[path] = need.plan
                        continue
                    if result.summary is not False:
                        self.summaries[path] = result.summary
                    if result.scaler is not None:
                        self.scalers[path] = result.scaler
                report(start + len(chunk), len(items))
            if cancelled():
                raise Cancelled()
            self.refresh(overlays, self.jobs, self.first_stats)
        self.ready = True

    def _first_results(self, chunk):
        """The chunk's first-pass results (None: a file the project pass reads no lint of,
        left unlinted, as the CLI does: amplint.run.first_pass)."""
        plan = plan_first_pass(self.cache, chunk)
        results = plan.results
        self._needs.update(plan.needs)
        self.first_stats["hits"] = self.first_stats.get("hits", 0) + len(chunk) - len(plan.needs)
        self.first_stats["read"] = self.first_stats.get("read", 0) + len(plan.needs) - len(plan.asked)
        items = [plan.item(chunk[i]) for i in plan.asked]
        for index, result in zip(plan.asked, cached_map(self.cache, "lint", items, self.jobs, None,
                                                        self.first_stats)):
            results[index] = result
        return results

    def locate(self, cited: str) -> Optional[str]:
        """The absolute path of a file a message cites: relative to the project root, else
        to the folder that holds all the project's files (the project pass's own base)."""
        candidate = os.path.join(self.root, cited)
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
        tail = os.sep + os.path.normpath(cited)
        found = [f for f in self.files if os.path.normpath(os.path.abspath(f)).endswith(tail)]
        return os.path.abspath(found[0]) if len(found) == 1 else None

    def spell(self, path: str) -> str:
        return self.spelled.get(norm(path)) or shown(os.path.realpath(path))

    # -- the project pass --------------------------------------------------------------------
    def refresh(self, overlays: Dict[str, str], jobs: Optional[int] = 1,
                stats: Optional[dict] = None) -> List[str]:
        """Run the project pass again (buffers in place of their files); the norm()ed paths
        whose entries changed. `jobs`: 1 after the first pass (the summaries it asks for then
        come a few files at a time: a process pool would cost more than it saves)."""
        if not self.use_project:
            return []
        old = self.entries
        buffers = {self.spell(p): text for p, text in overlays.items()
                   if not self._matches_disk(p, text)}
        self.buffers = buffers
        self._others = {}
        notes: List[str] = []
        if not buffers:  # what `amplint .` computes: shared with it through the cache
            found = project_entries([shown(self.root)], self.files, self.settings, self.config,
                                    dict(self.summaries), self.cache, jobs, stats,
                                    scalers=self.scalers, notes=notes)
            self.used = dict(self.summaries)
        else:
            found = self._with_buffers(buffers, jobs, notes)
        self.notes = notes
        self.entries = {norm(p): tuple(e) for p, e in found.items()}
        if self.cache is not None:
            self.cache.save_index()
        return [p for p in set(old) | set(self.entries) if old.get(p) != self.entries.get(p)]

    def _with_buffers(self, buffers: Dict[str, str], jobs: Optional[int],
                      notes: List[str]) -> Dict[str, tuple]:
        summaries = dict(self.summaries)
        for path, text in buffers.items():
            summary = summary_of_text(path, text)
            if summary is None and self.used.get(path) is not None:
                # a buffer that does not parse while it is typed: the last summary that did
                # stands, so that the findings it causes elsewhere do not flicker
                summary = self.used[path]
            summaries.pop(path, None)
            if summary is not False:
                summaries[path] = summary
        self.used = summaries
        python = [f for f in self.files if f.endswith((".py", ".pyi"))]
        keys = python + [p for p in buffers if p not in self.spelled.values()]
        keys += config_files([shown(self.root)])
        view = _KeyedLazy(keys, _Texts(buffers, self.disk_texts))

        def more(wanted):
            found = summaries_of([p for p in wanted if p not in buffers], self.cache, workers)
            for path in wanted:
                if path in buffers:
                    found[path] = summary_of_text(path, buffers[path], always=True)
            return found

        from_disk = with_first_pass(self.scalers, lambda wanted, force: scaler_summaries_of(
            wanted, force, self.cache, workers))

        def scaler_more(wanted, force):  # protocol summaries, the buffers' from their text
            found = from_disk([p for p in wanted if p not in buffers], force)
            found.update(local_summaries(buffers, [p for p in wanted if p in buffers], force))
            return found

        with Workers(jobs) as workers:
            project = build(view, self.settings, self.config, summaries=summaries,
                            summarize_many=more)
            on_disk = disk_may_hold()
            remote = scaler_entries(project, keys, scaler_more, may_hold=lambda path: (
                text_may_hold(buffers)(path) if path in buffers else on_disk(path)),
                keys_of=lambda wanted: {**protocol_keys_of([p for p in wanted if p not in buffers], self.cache, workers),
                                        **text_keys_of(buffers)([p for p in wanted if p in buffers])})
            functions = imported_entries(project, keys, remote)
        found = {p: project.entries_for(p) for p in keys if project.entries_for(p)}
        notes.extend(bound_notes(project, [shown(self.root)]))
        for more_entries in (remote, functions):  # scaler callees, classes of other files
            for path, extra in more_entries.items():
                found[path] = tuple(found.get(path, ())) + extra
        return found

    def unseen_notes(self) -> List[str]:
        """The last pass's notes the client has not been shown yet (each once per session)."""
        fresh = [note for note in self.notes if note not in self.shown_notes]
        self.shown_notes.update(fresh)
        return fresh

    def _matches_disk(self, path: str, text: str) -> bool:
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                return handle.read() == text
        except (OSError, UnicodeDecodeError):
            return False

    def needs_refresh(self, path: str, text: str) -> bool:
        """Whether an edit of `path` changes what the project pass reads of it."""
        if not self.use_project:
            return False
        spelled = self.spell(path)
        before = self.used.get(spelled, False)
        after = summary_of_text(spelled, text)
        if after is None and before is not None:
            return False  # it does not parse (being typed): the last good summary stands
        return (not _same(before, after) or self._protocol_changed(spelled, text)
                or self._functions_changed(spelled, text))

    def _protocol_changed(self, spelled: str, text: str) -> bool:
        """Whether the edit changes the file's GradScaler protocol summary (what other files'
        calls into it compose, amplint.analysis.project.scaler_summaries)."""
        known = self.__dict__.setdefault("_protocols", {})  # path -> last summary (None: none)
        if spelled not in known:
            disk = _read(spelled)
            known[spelled] = (local_summaries({spelled: disk}, [spelled], True)[spelled]
                              if is_caller(disk) else None)
        if known[spelled] is None and not is_caller(text):
            return False
        after = local_summaries({spelled: text}, [spelled], True)[spelled]
        if after is None:
            return False  # being typed: the last good summary stands
        before, known[spelled] = known[spelled], after
        return before != after

    def _functions_changed(self, spelled: str, text: str) -> bool:
        """Whether the edit changes the custom autograd Functions the file defines, as other
        files' AMP151 entries read them (amplint.analysis.project.function_entries)."""
        known = self.__dict__.setdefault("_functions", {})  # path -> last digest
        if spelled not in known:
            known[spelled] = defined_functions(_read(spelled))
        after = defined_functions(text)
        if after is None:
            return False  # being typed: the last good digest stands
        before, known[spelled] = known[spelled], after
        return before != after

    def saved(self, path: str) -> None:
        """The disk copy of `path` changed: read it again when the pass asks."""
        spelled = self.spell(path)
        self.disk_texts.pop(spelled, None)
        if spelled not in self.spelled.values() and path.endswith((".py", ".pyi")):
            self.files.append(spelled)
            self.spelled[norm(path)] = spelled
        if self.use_project:
            with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                summary = summary_of_text(spelled, handle.read())
            self.summaries.pop(spelled, None)
            if summary is not False:
                self.summaries[spelled] = summary
        self.scalers.pop(spelled, None)  # made from the old disk text: the pass makes it again

    def deleted(self, path: str) -> None:
        """`path` is gone from disk: the project pass no longer reads it."""
        spelled = self.spell(path)
        self.disk_texts.pop(spelled, None)
        self.summaries.pop(spelled, None)
        self.scalers.pop(spelled, None)
        if norm(path) in self.spelled:
            self.files = [f for f in self.files if f != spelled]
            del self.spelled[norm(path)]

    # -- one buffer ------------------------------------------------------------------------
    def lint(self, path: str, text: str, fix: bool = False,
             unsafe: Optional[bool] = None) -> Tuple[FileResult, Settings]:
        """The buffer's findings (the CLI's, for the same text), and the settings used."""
        settings = self.file_settings(path, unsafe)
        entries = self.entries.get(norm(path), ())
        result = lint_source(self.spell(path), text, settings, fix=fix, entries=entries)
        if not fix:
            self._drop_chain_duplicates(result)
        return result, settings

    def _drop_chain_duplicates(self, result: FileResult) -> None:
        """As `amplint .` does: drop the buffer's findings at a call whose event, in another
        file, that file reports (or a `# noqa` there silences) under the same code. Each such
        file is linted from its buffer, else its disk text, with its own entries."""
        mine = norm(result.path)
        others = sorted({d.through[0] for d in result.diagnostics
                         if isinstance(d.through, tuple) and norm(d.through[0]) != mine})
        if not others:
            return
        linted = [result]
        for other in others:
            spelled = self.spell(other)
            text = self.buffers.get(spelled)
            text = _read(spelled) if text is None else text
            key = (spelled, text)
            if key not in self._others:  # linted once per text until the next project pass
                while len(self._others) >= 32:
                    del self._others[next(iter(self._others))]
                self._others[key] = lint_source(spelled, text, self.file_settings(spelled),
                                                entries=self.entries.get(norm(spelled), ()))
            linted.append(self._others[key])
        dropped = chain_duplicates(linted)
        result.diagnostics = [d for d in result.diagnostics if id(d) not in dropped]

    def file_settings(self, path: str, unsafe: Optional[bool] = None) -> Settings:
        settings = settings_for(self.spell(path), self.settings, self.config)
        return settings if unsafe is None else Settings(settings.select, unsafe, settings.torch)
