"""The language server: LSP messages in, the engine's findings, fixes and docs out.

Lints, code actions and the first project pass run on one worker thread, one job at a time;
the project pass that edits set off runs on a second one (the asyncio loop keeps reading
messages: a cancellation or a newer edit is seen while a file is linted). Edits are debounced
(an edit after a quiet spell is linted at once); a lint whose buffer has changed since it was
asked for is dropped, not published."""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from amplint import __version__
from amplint.workspace.project_root import project_root_in
from amplint.cli.server import actions, convert
from amplint.cli.server.analysis import Cancelled, ProjectState, norm
from amplint.cli.server.options import ServerOptions, project_for

_tokens = itertools.count(1)


class AmplintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("amplint", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.options = ServerOptions()
        self.projects: Dict[str, ProjectState] = {}  # project root -> state
        self.first: Dict[str, asyncio.Future] = {}  # project root -> its first pass
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amplint")
        self.latest: Dict[str, tuple] = {}  # uri -> (version, text, [(finding, range)])
        self.timers: Dict[str, asyncio.Task] = {}
        self.last_edit: Dict[str, float] = {}  # uri -> time.monotonic() of its last didChange
        self.roots: Dict[str, str] = {}  # folder -> its project root
        # the project pass after edits: its own thread; per project root, what asked for it
        self.pass_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amplint-project")
        self.pass_wanted: Dict[str, Dict[str, bool]] = {}  # root -> {path: run it whatever}
        self.pass_running: Dict[str, asyncio.Task] = {}

    # -- plumbing --------------------------------------------------------------------------
    async def off_loop(self, func, *args):
        return await asyncio.get_running_loop().run_in_executor(
            self.worker, functools.partial(func, *args))

    def buffers(self, state: ProjectState) -> Dict[str, str]:
        """The open buffers of this project: path -> the editor's text."""
        found = {}
        for uri, document in list(self.workspace.text_documents.items()):
            path = to_fs_path(uri)
            if path and path.endswith((".py", ".pyi")) and self.project_key(path) == state.root:
                found[path] = document.source
        return found

    def project_key(self, path: str) -> str:
        """The project root of `path`, found as the CLI finds it (once per folder), links
        resolved: `amplint .` run in a folder reached through a link sees the resolved path
        (its working directory), and spells its files and cache keys relative to it."""
        folder = os.path.dirname(os.path.abspath(path))
        root = self.roots.get(folder)
        if root is None:
            root = self.roots[folder] = project_root_in([os.path.realpath(path)],
                                                        self.options.workspace)
        return root

    async def project(self, path: str) -> ProjectState:
        """The state of `path`'s project, its first pass done (started here if need be)."""
        root = self.project_key(path)
        if root not in self.first:
            self.first[root] = asyncio.ensure_future(self._first_pass(root))
        await asyncio.shield(self.first[root])
        return self.projects[root]

    async def _first_pass(self, root: str) -> None:
        state, error = project_for(root, self.options)
        if error:
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"amplint: {error}"))
        self.projects[root] = state
        token = f"amplint-project-{next(_tokens)}"
        progress = self.work_done_progress
        loop = asyncio.get_running_loop()
        supported = bool(self.client_capabilities.window and
                         self.client_capabilities.window.work_done_progress)
        if supported:
            try:
                await progress.create_async(token)
                progress.begin(token, types.WorkDoneProgressBegin(
                    title="amplint: project pass", message=os.path.basename(root) or root,
                    cancellable=True, percentage=0))
            except Exception:  # the client refused the token: run without progress
                supported = False

        def report(done: int, total: int) -> None:
            if supported:
                loop.call_soon_threadsafe(progress.report, token, types.WorkDoneProgressReport(
                    message=f"{done}/{total} files", percentage=int(100 * done / max(total, 1))))

        def cancelled() -> bool:
            future = progress.tokens.get(token)
            return bool(supported and future is not None and future.cancelled())

        message = "done"
        began = time.perf_counter()
        try:
            await self.off_loop(state.first_pass, self.buffers(state), report, cancelled)
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Log, message=first_pass_line(state, time.perf_counter() - began)))
            self.show_notes(state)
        except Cancelled:
            state.use_project, state.entries, state.ready = False, {}, True
            message = "cancelled: files are linted on their own"
        except Exception as exc:  # report it; the files are still linted on their own
            state.use_project, state.entries, state.ready = False, {}, True
            message = f"project pass failed: {type(exc).__name__}: {exc}"
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"amplint: {message}"))
        finally:
            if supported:
                progress.end(token, types.WorkDoneProgressEnd(message=message))

    # -- diagnostics -----------------------------------------------------------------------
    async def lint_and_publish(self, uri: str, version: Optional[int] = None) -> None:
        path = to_fs_path(uri)
        if not path or not path.endswith((".py", ".pyi")):
            return
        state = await self.project(path)
        document = self.workspace.get_text_document(uri)
        text, asked = document.source, document.version
        if version is not None and asked != version:
            return  # a newer edit is on its way

        timing = []

        def job():
            current = self.workspace.text_documents.get(uri)
            if current is None or current.version != asked:
                return None  # superseded or closed while queued: not worth linting
            began, cpu = time.perf_counter(), time.thread_time()
            found = state.lint(path, text)[0]
            timing.extend([time.perf_counter() - began, time.thread_time() - cpu])
            return found

        result = await self.off_loop(job)
        if timing and self.options.log_timings:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Log,
                message=f"amplint: lint {os.path.basename(path)} v{asked}: "
                        f"{timing[0] * 1000:.1f} ms wall, {timing[1] * 1000:.1f} ms CPU"))
        current = self.workspace.text_documents.get(uri)
        if result is None or current is None or current.version != asked:
            return
        lines = text.splitlines()
        pairs = [(d, convert.span(d, lines)) for d in result.diagnostics]
        self.latest[uri] = (asked, text, pairs)
        found = [convert.to_lsp(d, uri, state.locate, lines) for d in result.diagnostics]
        for error in result.errors:  # a file amplint cannot read: one line, as the CLI says
            found.append(types.Diagnostic(
                range=types.Range(start=types.Position(line=0, character=0),
                                  end=types.Position(line=0, character=0)),
                message=error, severity=types.DiagnosticSeverity.Error, source=convert.SOURCE))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=asked, diagnostics=found))

    def schedule(self, uri: str, version: Optional[int], delay: float) -> None:
        """Lint after `delay` seconds without a newer edit. An edit after a quiet spell (no
        edit of this file for `delay`, none waiting) is linted at once: waiting would only
        add to its latency. Edits in a burst wait for the burst to end, as before."""
        now = time.monotonic()
        last, self.last_edit[uri] = self.last_edit.get(uri), now
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        elif last is None or now - last >= delay:
            delay = 0.0
        self.timers[uri] = asyncio.ensure_future(self._later(uri, version, delay))

    async def _later(self, uri: str, version: Optional[int], delay: float) -> None:
        await asyncio.sleep(delay)
        self.timers.pop(uri, None)
        await self.lint_and_publish(uri, version)
        await self.refresh_project(uri)

    async def refresh_project(self, uri: str, force: bool = False) -> None:
        """Run the project pass again when the edit changed what it reads of this file (or
        with `force`), then lint again the open files whose entries changed. The pass runs on
        its own thread: the edited file's own lints never wait for it; edits that come while
        it runs make it run once more after."""
        path = to_fs_path(uri)
        document = self.workspace.text_documents.get(uri)
        if not path or document is None:
            return
        state = await self.project(path)
        if not (state.ready and state.use_project):
            return
        self.want_pass(state, path, force)

    def want_pass(self, state: ProjectState, path: str, force: bool) -> None:
        wanted = self.pass_wanted.setdefault(state.root, {})
        wanted[path] = force or wanted.get(path, False)
        if state.root not in self.pass_running:
            self.pass_running[state.root] = asyncio.ensure_future(self._passes(state))

    async def _passes(self, state: ProjectState) -> None:
        loop = asyncio.get_running_loop()
        try:
            while state.root in self.pass_wanted:
                wanted = self.pass_wanted.pop(state.root)
                buffers = self.buffers(state)
                began = time.perf_counter()
                path = next(iter(wanted))

                def job():
                    if not any(force or p not in buffers or state.needs_refresh(p, buffers[p])
                               for p, force in wanted.items()):
                        return None
                    return state.refresh(buffers)

                changed = await loop.run_in_executor(self.pass_worker, job)
                if changed is None:
                    continue
                self.show_notes(state)
                if self.options.log_timings:
                    self.window_log_message(types.LogMessageParams(
                        type=types.MessageType.Log,
                        message=f"amplint: project pass again after an edit of "
                                f"{os.path.basename(path)}: {time.perf_counter() - began:.3f} s, "
                                f"entries changed in {len(changed)} files"))
                for other, doc in list(self.workspace.text_documents.items()):
                    other_path = to_fs_path(other)
                    if other_path and norm(other_path) in changed:
                        await self.lint_and_publish(other, doc.version)
        finally:
            self.pass_running.pop(state.root, None)

    def show_notes(self, state: ProjectState) -> None:
        """A warning for what the project pass left unresolved (its bound), as `amplint .`
        prints one: the editor's cross-file findings are as incomplete as the CLI's."""
        for note in state.unseen_notes():
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"amplint: warning: {note}"))

    def clear(self, uri: str) -> None:
        self.latest.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def findings_at(self, uri: str, rng: types.Range) -> List[tuple]:
        version, text, pairs = self.latest.get(uri, (None, "", []))
        document = self.workspace.text_documents.get(uri)
        if document is None or document.version != version:
            return []
        return [(diag, span) for diag, span in pairs if convert.overlaps(span, rng)]


def first_pass_line(state: ProjectState, seconds: float) -> str:
    """What the first pass took from the cache: after `amplint .` in the same folder, all of
    it (a file computed again says the cache was not the CLI's: another amplint, other settings)."""
    stats = state.first_stats
    hits, computed, read = stats.get("hits", 0), stats.get("computed", 0), stats.get("read", 0)
    project = {True: "from the cache", False: "computed"}.get(stats.get("project_cached"),
                                                              "with the open buffers")
    if not state.use_project:
        project = "not run (files are linted on their own)"
    # `read`: files whose lint the project pass does not read, only read for the text test
    # (amplint.run.first_pass); the CLI lints them after its project pass
    return (f"amplint: first pass of {state.root}: {seconds:.2f} s; {hits + computed + read} files, "
            f"{hits} from the cache, {read} only read, {computed} linted; project pass {project}")


server = AmplintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: AmplintServer, params: types.InitializeParams) -> None:
    ls.options = ServerOptions.from_client(params.initialization_options)
    root = None
    if params.workspace_folders:
        root = to_fs_path(params.workspace_folders[0].uri)
    elif params.root_uri:
        root = to_fs_path(params.root_uri)
    if root and os.path.isdir(root):
        # paths are spelled relative to the workspace, as `amplint .` run there spells them:
        # the same messages, and the same cache entries
        os.chdir(root)
        ls.options.workspace = root


@server.feature(types.INITIALIZED)
async def initialized(ls: AmplintServer, params: types.InitializedParams) -> None:
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if watched is not None and watched.dynamic_registration:
        # files changed outside the editor (a checkout, a generator) reach the project pass
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(
                    id="amplint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                        types.FileSystemWatcher(glob_pattern="**/*.{py,pyi}")]))]))
        except Exception:  # the client refused: saves still update the project pass
            pass
    if ls.options.workspace and ls.options.eager:
        await ls.project(os.path.join(ls.options.workspace, "__amplint__.py"))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: AmplintServer, params: types.DidOpenTextDocumentParams) -> None:
    await ls.lint_and_publish(params.text_document.uri, params.text_document.version)
    await ls.refresh_project(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: AmplintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, params.text_document.version, ls.options.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
async def did_save(ls: AmplintServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = to_fs_path(uri)
    if not path or not path.endswith((".py", ".pyi")):
        return
    state = await ls.project(path)
    # on the project pass's thread: what `saved` changes, the pass reads
    await asyncio.get_running_loop().run_in_executor(ls.pass_worker, state.saved, path)
    await ls.lint_and_publish(uri)
    await ls.refresh_project(uri, force=True)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: AmplintServer, params: types.DidChangeWatchedFilesParams) -> None:
    loop = asyncio.get_running_loop()
    for change in params.changes:
        path = to_fs_path(change.uri)
        if not path or not path.endswith((".py", ".pyi")):
            continue
        state = ls.projects.get(ls.project_key(path))
        if state is None or not state.ready:
            continue  # the first pass, still to come or under way, reads the disk as it is
        gone = change.type == types.FileChangeType.Deleted or not os.path.exists(path)
        await loop.run_in_executor(ls.pass_worker, state.deleted if gone else state.saved, path)
        if state.use_project:
            ls.want_pass(state, path, True)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: AmplintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    ls.clear(uri)
    ls.last_edit.pop(uri, None)
    path = to_fs_path(uri)
    if path and path.endswith((".py", ".pyi")) and ls.project_key(path) in ls.projects:
        state = ls.projects[ls.project_key(path)]
        if state.ready and state.use_project:  # the file's disk text counts again
            ls.want_pass(state, path, True)


actions.register(server)
