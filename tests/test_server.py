"""`amplint server`, driven over stdio by pygls's own LSP client, as an editor drives it.

The projects are written here, laid out like a small segmentation repository (in the manner of
milesial/Pytorch-UNet: train.py at the top, the losses in their own module): one with the
hazard, and every step checks the clean twin (the fixed text) goes silent."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pygls", reason="`amplint server` needs pygls: pip install 'amplint[server]'")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60

TRAIN = textwrap.dedent('''\
    """Train the UNet with mixed precision."""
    import torch

    from losses import FocalLoss
    from model import UNet


    def train(loader, epochs=10):
        model = UNet().cuda()
        crit = FocalLoss(gamma=2.0)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler("cuda")
        for _ in range(epochs):
            for images, masks in loader:
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast("cuda", dtype=torch.float16):
                    logits = model(images.cuda())
                    loss = crit(logits, masks.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
''')
TRAIN_FP32 = TRAIN.replace('with torch.autocast("cuda", dtype=torch.float16):', "if True:")
LOSSES = textwrap.dedent('''\
    """Losses for the segmentation model."""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class FocalLoss(nn.Module):
        def __init__(self, gamma=2.0):
            super().__init__()
            self.gamma = gamma

        def forward(self, logits, target):
            probs = torch.sigmoid(logits)
            bce = F.binary_cross_entropy(probs, target, reduction="none")
            p_t = probs * target + (1 - probs) * (1 - target)
            return (bce * (1 - p_t) ** self.gamma).mean()
''')
LOSSES_CLEAN = LOSSES.replace("F.binary_cross_entropy(probs, target",
                              "F.binary_cross_entropy_with_logits(logits, target")
MODEL = textwrap.dedent('''\
    from torch import nn


    class UNet(nn.Module):
        def __init__(self, channels=3, classes=1):
            super().__init__()
            self.head = nn.Conv2d(channels, classes, 1)

        def forward(self, x):
            return self.head(x)
''')
# one file on its own: the region and the hazard together
SINGLE = textwrap.dedent('''\
    import torch
    import torch.nn.functional as F


    def step(model, images, masks):
        with torch.autocast("cuda"):
            probs = torch.sigmoid(model(images))
            return F.binary_cross_entropy(probs, masks)
''')


def write_project(root, files):
    (root / "pyproject.toml").write_text("[tool.amplint]\n")
    for name, text in files.items():
        (root / name).write_text(text)


def env():
    found = dict(os.environ)
    found["PYTHONPATH"] = ROOT + os.pathsep + found.get("PYTHONPATH", "")
    return found


def cli(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "amplint", *args], cwd=cwd, env=env(),
                          capture_output=True, text=True, input=stdin, timeout=TIMEOUT)


def cli_findings(path, cwd):
    proc = cli("--output-format", "json", "--no-cache", os.path.basename(path), cwd=cwd)
    return [(d["code"], d["message"], d["severity"], d["line"] - 1, d["column"] - 1,
             d["end_line"] - 1, d["end_column"] - 1) for d in json.loads(proc.stdout)]


SEVERITY = {types.DiagnosticSeverity.Error: "error", types.DiagnosticSeverity.Warning: "warning",
            types.DiagnosticSeverity.Information: "info"}


def lsp_findings(diagnostics):
    return [(d.code, d.message, SEVERITY[d.severity], d.range.start.line, d.range.start.character,
             d.range.end.line, d.range.end.character) for d in diagnostics]


def apply(text, edits):
    """The text after the TextEdits (ASCII text: UTF-16 columns are characters)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(pos):
        return offsets[min(pos.line, len(lines))] + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end):]
    return text


class Session:
    """A client connected to `amplint server` in `root`; publishDiagnostics are kept per URI."""

    def __init__(self, root, options=None, cancel_progress=False):
        self.root = str(root)
        self.cancel_progress = cancel_progress  # answer the first pass's begin with a cancel
        self.options = options or {"debounceMs": 20}
        self.client = LanguageClient("amplint-tests", "1")
        self.published = {}
        self.arrived = asyncio.Condition()
        self.progress = []
        self.versions = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def _publish(params):
            async with self.arrived:
                self.published.setdefault(params.uri, []).append(params)
                self.arrived.notify_all()

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _create(params):
            return None

        self.registrations = []
        self.logs = []

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        async def _log(params):
            async with self.arrived:
                self.logs.append(params.message)
                self.arrived.notify_all()

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def _register(params):
            self.registrations.extend(r.method for r in params.registrations)
            return None

        @self.client.feature(types.PROGRESS)
        def _progress(params):
            self.progress.append(params.value)
            if self.cancel_progress and params.value.get("kind") == "begin":
                self.client.window_work_done_progress_cancel(
                    types.WorkDoneProgressCancelParams(token=params.token))

    async def start(self):
        await self.client.start_io(sys.executable, "-m", "amplint", "server", cwd=self.root,
                                   env=env())
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True),
            workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True)))
        result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=capabilities, root_uri=from_fs_path(self.root),
            initialization_options=self.options)), TIMEOUT)
        self.client.initialized(types.InitializedParams())
        return result

    def uri(self, name):
        return from_fs_path(os.path.join(self.root, name))

    def open(self, name, text):
        self.versions[name] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=self.uri(name), language_id="python", version=1, text=text)))

    def change(self, name, text):
        self.versions[name] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=self.uri(name), version=self.versions[name]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    async def diagnostics(self, name, after=0):
        """The next diagnostics published for `name` after the first `after` publications."""
        uri = self.uri(name)
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(
                lambda: len(self.published.get(uri, [])) > after), TIMEOUT)
            return list(self.published[uri][-1].diagnostics)

    def count(self, name):
        return len(self.published.get(self.uri(name), []))

    async def log(self, start):
        """The first log message that starts with `start`."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(
                lambda: any(m.startswith(start) for m in self.logs)), TIMEOUT)
            return next(m for m in self.logs if m.startswith(start))

    async def actions(self, name, rng, diagnostics, only=None):
        return await asyncio.wait_for(self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(name)), range=rng,
                context=types.CodeActionContext(diagnostics=diagnostics, only=only))), TIMEOUT)

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await self.client.stop()


def run(coroutine):
    asyncio.run(asyncio.wait_for(coroutine, 4 * TIMEOUT))


def edit_of(action):
    (change,) = action.edit.document_changes
    return change.edits


def test_open_fix_and_clear_a_file_as_the_cli_does(tmp_path):
    write_project(tmp_path, {"step.py": SINGLE})
    fixed = cli("--fix", "-", "--stdin-filename", "step.py", "--no-cache", cwd=tmp_path,
                stdin=SINGLE).stdout
    assert fixed != SINGLE and "binary_cross_entropy_with_logits" in fixed

    async def scenario():
        session = Session(tmp_path)
        result = await session.start()
        assert result.capabilities.code_action_provider is not None
        session.open("step.py", SINGLE)
        found = await session.diagnostics("step.py")
        assert lsp_findings(found) == cli_findings(tmp_path / "step.py", tmp_path) != []
        (diag,) = found
        assert diag.code_description.href.startswith("https://")
        assert diag.related_information[0].location.range.start.line == 5  # the `with` line

        actions = await session.actions("step.py", diag.range, found)
        titles = [a.title for a in actions]
        quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred]
        assert len(quick) == 1 and quick[0].title.startswith("AMP102:")
        assert apply(SINGLE, edit_of(quick[0])) == fixed
        (fix_all,) = [a for a in actions if a.kind == "source.fixAll.amplint"]
        assert apply(SINGLE, edit_of(fix_all)) == fixed
        (noqa,) = [a for a in actions if "noqa" in a.title]
        assert "# noqa: AMP102" in apply(SINGLE, edit_of(noqa)), titles

        hover = await asyncio.wait_for(session.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=session.uri("step.py")),
            position=diag.range.start)), TIMEOUT)
        assert hover.contents.value.startswith("# AMP102 ")
        assert "## What it does" in hover.contents.value

        # the buffer, not the disk: the file on disk still has the hazard
        before = session.count("step.py")
        session.change("step.py", apply(SINGLE, edit_of(quick[0])))
        assert await session.diagnostics("step.py", before) == []
        before = session.count("step.py")
        session.change("step.py", apply(SINGLE, edit_of(noqa)))
        assert await session.diagnostics("step.py", before) == []
        before = session.count("step.py")
        session.change("step.py", SINGLE)
        assert lsp_findings(await session.diagnostics("step.py", before)) == lsp_findings(found)
        await session.stop()

    run(scenario())
    assert (tmp_path / "step.py").read_text() == SINGLE


def test_a_cross_file_finding_follows_the_edits_of_either_file(tmp_path):
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open("losses.py", LOSSES)
        found = await session.diagnostics("losses.py")
        assert lsp_findings(found) == cli_findings(tmp_path / "losses.py", tmp_path) != []
        (diag,) = found
        assert "train.py:" in diag.message
        cited = {info.location.uri for info in diag.related_information}
        assert cited == {session.uri("train.py")}
        kinds = [p.get("kind") if isinstance(p, dict) else getattr(p, "kind", None)
                 for p in session.progress]
        assert kinds[0] == "begin" and kinds[-1] == "end"  # $/progress over the project pass

        # the loss file fixed in the buffer: the finding goes; the hazard back: it returns
        before = session.count("losses.py")
        session.change("losses.py", LOSSES_CLEAN)
        assert await session.diagnostics("losses.py", before) == []
        before = session.count("losses.py")
        session.change("losses.py", LOSSES)
        assert lsp_findings(await session.diagnostics("losses.py", before)) == lsp_findings(found)

        # the train script's region removed (unsaved): the finding in losses.py goes
        session.open("train.py", TRAIN)
        await session.diagnostics("train.py")
        before = session.count("losses.py")
        session.change("train.py", TRAIN_FP32)
        assert await session.diagnostics("losses.py", before) == []
        before = session.count("losses.py")
        session.change("train.py", TRAIN)
        assert lsp_findings(await session.diagnostics("losses.py", before)) == lsp_findings(found)

        # train.py half typed (it does not parse): its last good summary stands, the finding stays
        session.change("train.py", TRAIN.replace("loss = crit(", "loss = crit((("))
        await session.diagnostics("train.py", session.count("train.py"))
        await asyncio.sleep(1.5)  # time for a project pass, were one to run
        before = session.count("losses.py")
        session.change("losses.py", LOSSES + "# a comment\n")
        assert [d.code for d in await session.diagnostics("losses.py", before)] == ["AMP102"]
        await session.stop()

    run(scenario())


def test_settings_from_initialization_options_and_pyproject(tmp_path):
    write_project(tmp_path, {"step.py": SINGLE})

    async def scenario():
        session = Session(tmp_path, {"ignore": ["AMP102"], "debounceMs": 20})
        await session.start()
        session.open("step.py", SINGLE)
        assert await session.diagnostics("step.py") == []
        await session.stop()

    run(scenario())
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nignore = ["AMP102"]\n')

    async def configured():
        session = Session(tmp_path)
        await session.start()
        session.open("step.py", SINGLE)
        assert await session.diagnostics("step.py") == []
        await session.stop()

    run(configured())


def test_the_cli_does_not_import_the_server_package(tmp_path):
    write_project(tmp_path, {"step.py": SINGLE})
    code = ("import sys\nfrom amplint.cli.main import cli\ntry:\n    cli(['--no-cache', '.'], "
            "prog_name='amplint')\nexcept SystemExit:\n    pass\n"
            "assert not [m for m in sys.modules if m.startswith(('pygls', 'lsprotocol', "
            "'amplint.cli.server'))]\nprint('NO-SERVER')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env(),
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert "NO-SERVER" in proc.stdout, proc.stderr[-2000:]


def cache_entries():
    """The files of the cache both use (tests/conftest.py points AMPLINT_CACHE_DIR at a
    temporary folder), with their modification times."""
    found = set()
    for folder, _, names in os.walk(os.environ["AMPLINT_CACHE_DIR"]):
        for name in names:
            path = os.path.join(folder, name)
            found.add((path, os.stat(path).st_mtime_ns))
    return found


def test_the_server_reads_the_cache_the_cli_wrote(tmp_path):
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})
    assert cli(".", cwd=tmp_path).returncode == 1
    written = cache_entries()
    assert written

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        # the server says what its first pass took from the cache: all of it, the CLI's
        line = await session.log("amplint: first pass of ")
        # the CLI lints losses.py and model.py once, with their entries: no lint without entries
        # to take; the server only reads them for the text test (they open no region: the pass
        # reads no lint of them)
        assert line.endswith("3 files, 1 from the cache, 2 only read, 0 linted; project pass from the cache"), line
        session.open("losses.py", LOSSES)
        assert [d.code for d in await session.diagnostics("losses.py")] == ["AMP102"]
        await session.stop()

    run(scenario())
    # every per-file result and the project pass came from the CLI's entries: nothing new
    assert cache_entries() == written


def test_a_workspace_reached_through_a_symlink_reads_the_cli_cache(tmp_path):
    """The editor opens the project by a path through a symbolic link; `amplint .` run there
    sees the resolved folder (the working directory is always resolved). The server spells
    files and keys the cache as the CLI does, so its first pass reads the CLI's entries, and
    the cross-file finding still reaches the file opened by the linked path."""
    real = tmp_path / "real" / "unet"
    real.mkdir(parents=True)
    write_project(real, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    linked = tmp_path / "link" / "unet"
    assert cli(".", cwd=linked).returncode == 1
    written = cache_entries()

    async def scenario():
        session = Session(linked)
        await session.start()
        line = await session.log("amplint: first pass of ")
        # the CLI lints losses.py and model.py once, with their entries: no lint without entries
        # to take; the server only reads them for the text test (they open no region: the pass
        # reads no lint of them)
        assert line.endswith("3 files, 1 from the cache, 2 only read, 0 linted; project pass from the cache"), line
        session.open("losses.py", LOSSES)
        found = await session.diagnostics("losses.py")
        assert lsp_findings(found) == cli_findings(linked / "losses.py", linked)
        await session.stop()

    run(scenario())
    assert cache_entries() == written


def test_an_edit_that_keeps_the_project_summary_runs_no_project_pass(tmp_path):
    """After `amplint .`, the server's summaries come from the cache. Opening train.py and
    adding a comment to it changes nothing the project pass reads: no pass runs (one did, a
    whole project pass on a large tree, competing with every lint). Removing the region does
    change it: that pass is the first and only one logged."""
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})
    assert cli(".", cwd=tmp_path).returncode == 1

    async def scenario():
        session = Session(tmp_path, {"debounceMs": 20, "logTimings": True})
        await session.start()
        await session.log("amplint: first pass of ")
        session.open("train.py", TRAIN)
        await session.diagnostics("train.py")
        session.change("train.py", TRAIN + "# a comment\n")
        await session.diagnostics("train.py", 1)
        session.change("train.py", TRAIN_FP32)
        await session.diagnostics("train.py", 2)
        await session.log("amplint: project pass again")
        passes = [m for m in session.logs if m.startswith("amplint: project pass again")]
        assert len(passes) == 1, passes
        await session.stop()

    run(scenario())


def test_equal_summaries_are_the_same_whatever_their_pickles():
    """A summary read back from the cache was pickled in a pool worker (another hash seed): its
    sets iterate in another order than the same summary made in the server, so the pickles
    differ while the summaries are equal. The sets here are built in two orders (8 and 16
    collide in a small table) to stand for that."""
    from amplint.cli.server.analysis import _same

    first, second = {8, 16}, set()
    second.add(16)
    second.add(8)
    assert pickle.dumps(first) != pickle.dumps(second)
    assert _same({"calls": first}, {"calls": second})
    assert not _same({"calls": first}, {"calls": {8}})


def test_without_the_cli_run_the_first_pass_says_it_linted_the_files(tmp_path):
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        line = await session.log("amplint: first pass of ")
        # train.py opens the region: linted for its summary; the others only read (amplint.run.first_pass)
        assert line.endswith("3 files, 0 from the cache, 2 only read, 1 linted; project pass computed"), line
        await session.stop()

    run(scenario())


def test_an_edit_after_a_quiet_spell_is_linted_at_once_a_burst_waits(tmp_path):
    """The debounce delays only edits that follow one another closely: a lone edit's
    diagnostics do not wait for it (it would only add to their latency)."""
    write_project(tmp_path, {"step.py": SINGLE})
    debounce = 6.0

    async def scenario():
        session = Session(tmp_path, {"debounceMs": int(debounce * 1000)})
        await session.start()
        session.open("step.py", SINGLE)
        assert [d.code for d in await session.diagnostics("step.py")] == ["AMP102"]
        loop = asyncio.get_running_loop()
        sent = loop.time()
        session.change("step.py", SINGLE + "# a lone edit\n")
        assert [d.code for d in await session.diagnostics("step.py", 1)] == ["AMP102"]
        assert loop.time() - sent < debounce
        # the next edit comes at once: it waits for the burst to end, the whole debounce
        sent = loop.time()
        session.change("step.py", SINGLE + "# a lone edit\n# and another\n")
        assert [d.code for d in await session.diagnostics("step.py", 2)] == ["AMP102"]
        assert loop.time() - sent >= debounce * 0.95
        assert session.published[session.uri("step.py")][-1].version == 3
        await session.stop()

    run(scenario())


def test_columns_are_counted_in_utf16_code_units():
    from amplint.analysis.diagnostics import Diagnostic, Severity
    from amplint.cli.server.convert import span, text_edit

    lines = ['msg = "😀 é"; loss = F.binary_cross_entropy(p, y)']
    start = lines[0].index("F.") + 1  # amplint's 1-based code-point column
    diag = Diagnostic("AMP102", "m", Severity.ERROR, None, line=1, column=start,
                      end_line=1, end_column=len(lines[0]) + 1)
    rng = span(diag, lines)
    # the emoji is two UTF-16 code units: one column more than in code points
    assert (rng.start.line, rng.start.character) == (0, start - 1 + 1)
    assert rng.end.character == len(lines[0]) + 1
    old = "a = 1\nb = 2\nc = 3"
    edit = text_edit(old, "a = 1\nb = 20\nc = 3")
    assert (edit.range.start.line, edit.range.end.line, edit.new_text) == (1, 2, "b = 20\n")
    edit = text_edit(old, "a = 1\nb = 2\nc = 30")  # the last line, with no newline after it
    assert apply(old, [edit]) == "a = 1\nb = 2\nc = 30"


def test_related_locations_when_every_file_sits_under_src(tmp_path):
    # the project pass cites paths from the folder that holds all the files (src/ here)
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    (tmp_path / "src").mkdir()
    for name, text in {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL}.items():
        (tmp_path / "src" / name).write_text(text)

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open("src/losses.py", LOSSES)
        (diag,) = await session.diagnostics("src/losses.py")
        assert "train.py:" in diag.message
        assert {i.location.uri for i in diag.related_information} == {session.uri("src/train.py")}
        await session.stop()

    run(scenario())


def test_cancelling_the_first_project_pass_lints_files_on_their_own(tmp_path):
    # a large codebase: the two-file hazard among 1,200 small modules (three steps of the pass)
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})
    (tmp_path / "ops").mkdir()
    for i in range(1200):
        (tmp_path / "ops" / f"op_{i}.py").write_text(f"def op_{i}(x):\n    return x + {i}\n")

    async def scenario():
        session = Session(tmp_path, {"debounceMs": 20, "noCache": True, "jobs": 1},
                          cancel_progress=True)
        await session.start()
        session.open("losses.py", LOSSES)
        # alone, losses.py has no region around FocalLoss.forward: no finding
        assert await session.diagnostics("losses.py") == []
        assert "cancelled" in session.progress[-1].get("message", "")
        await session.stop()

    run(scenario())


def test_a_change_on_disk_outside_the_editor_reaches_the_open_files(tmp_path):
    write_project(tmp_path, {"train.py": TRAIN, "losses.py": LOSSES, "model.py": MODEL})

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open("losses.py", LOSSES)
        found = await session.diagnostics("losses.py")
        assert [d.code for d in found] == ["AMP102"]
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in session.registrations

        def changed_on_disk(text):  # as `git checkout` would, train.py not open in the editor
            (tmp_path / "train.py").write_text(text)
            session.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=session.uri("train.py"),
                                         type=types.FileChangeType.Changed)]))

        before = session.count("losses.py")
        changed_on_disk(TRAIN_FP32)
        assert await session.diagnostics("losses.py", before) == []
        before = session.count("losses.py")
        changed_on_disk(TRAIN)
        assert lsp_findings(await session.diagnostics("losses.py", before)) == lsp_findings(found)
        await session.stop()

    run(scenario())


OLD_TORCH_STEP = textwrap.dedent('''\
    import torch

    scaler = torch.cuda.amp.GradScaler()
''')


def test_the_project_torch_target_holds_in_the_editor(tmp_path):
    """A project that supports torch 1.8 (its requirements.txt) gets in the editor what
    `amplint .` gives it: the AMP130 finding says why it is not fixed, and no code action
    writes `torch.amp.GradScaler` (torch >= 2.3). The server used to ignore the target."""
    write_project(tmp_path, {"step.py": OLD_TORCH_STEP, "requirements.txt": "torch>=1.8\n"})
    expected = cli_findings(tmp_path / "step.py", tmp_path)
    assert [f[0] for f in expected] == ["AMP130"] and "torch >= 2.3" in expected[0][1]

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open("step.py", OLD_TORCH_STEP)
        found = await session.diagnostics("step.py")
        assert lsp_findings(found) == expected
        actions = await session.actions("step.py", found[0].range, found)
        for action in actions:
            if action.edit is not None:
                assert "torch.amp.GradScaler" not in apply(OLD_TORCH_STEP, edit_of(action))
        await session.stop()

    run(scenario())


SPLIT_MIXIN = textwrap.dedent('''\
    import torch


    class ClipMixin:
        def clip_gradients(self):
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
''')
SPLIT_TRAINER = textwrap.dedent('''\
    import torch

    from mixins import ClipMixin


    class Trainer(ClipMixin):
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer
            self.scaler = torch.amp.GradScaler("cuda")

        def training_step(self, loss):
            self.scaler.scale(loss).backward()
            self.clip_gradients()
            self.scaler.step(self.optimizer)
            self.scaler.update()
''')


def test_a_saved_mixin_s_protocol_summary_is_made_again_from_the_disk(tmp_path, monkeypatch):
    """The first pass's protocol summary of a file (made from the disk text it linted) stands
    for that file in later project passes until the file is saved; after a save the pass makes
    it again from the new text (a stale one would keep composing the old mixin)."""
    from amplint.analysis.engine import Settings
    from amplint.analysis.facts.scaler_remote import EntryScaler
    from amplint.cli.server.analysis import ProjectState, norm
    from amplint.workspace.config import Config

    write_project(tmp_path, {"trainer.py": SPLIT_TRAINER, "mixins.py": SPLIT_MIXIN})
    monkeypatch.chdir(tmp_path)
    state = ProjectState(str(tmp_path), Config(), Settings.default(), None, jobs=1)
    state.first_pass({})
    assert state.scalers["mixins.py"].functions  # made by the first pass

    def composed():  # the events the trainer's `self.clip_gradients()` composes from the mixin
        (entry,) = [e for e in state.entries[norm("trainer.py")] if isinstance(e, EntryScaler)]
        return [event[0] for event in entry.events]

    assert composed() == ["clip"]
    (tmp_path / "mixins.py").write_text(SPLIT_MIXIN.replace(
        "        torch.nn", "        self.scaler.unscale_(self.optimizer)\n        torch.nn"))
    state.saved(str(tmp_path / "mixins.py"))
    state.refresh({})
    assert composed() == ["unscale", "clip"]


def test_a_mixin_edited_in_the_editor_changes_the_protocol_finding_of_its_user(tmp_path):
    """The GradScaler protocol across files: the mixin (another file) clips before any
    unscale_, flagged at the trainer's call; unscaling first in the mixin's unsaved buffer
    clears the trainer's finding, though the edit changes nothing the region pass reads."""
    write_project(tmp_path, {"trainer.py": SPLIT_TRAINER, "mixins.py": SPLIT_MIXIN})
    fixed = SPLIT_MIXIN.replace("        torch.nn", "        self.scaler.unscale_(self.optimizer)\n"
                                "        torch.nn")

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open("trainer.py", SPLIT_TRAINER)
        found = await session.diagnostics("trainer.py")
        while not any("mixins.py:6, through this call" in d.message for d in found):
            found = await session.diagnostics("trainer.py", session.count("trainer.py"))
        assert [(d.code, d.range.start.line) for d in found] == [("AMP120", 12)]
        session.open("mixins.py", SPLIT_MIXIN)
        await session.diagnostics("mixins.py")
        before = session.count("trainer.py")
        session.change("mixins.py", fixed)
        assert await session.diagnostics("trainer.py", before) == []
        before = session.count("trainer.py")
        session.change("mixins.py", SPLIT_MIXIN)
        assert [d.code for d in await session.diagnostics("trainer.py", before)] == ["AMP120"]
        await session.stop()

    run(scenario())


def test_a_function_decorated_in_the_editor_clears_its_users_amp151(tmp_path):
    """AMP151 across files (tests/projects/fn_deformable_detr, Deformable-DETR's layout): the
    Function is defined in models/ops/functions, applied in models/ops/modules under the
    engine's region. Adding `custom_fwd`/`custom_bwd` in the defining file's unsaved buffer
    changes no region or protocol summary, only what the project pass reads of the Function:
    the user's finding goes, and comes back when the decorators are removed again."""
    from project_files import PROJECTS
    from test_function_cross_file import DETR, DETR_DECORATED, DETR_FUNCTIONS

    shutil_copy = __import__("shutil").copytree
    shutil_copy(os.path.join(PROJECTS, DETR), tmp_path, dirs_exist_ok=True)
    user = "models/ops/modules/ms_deform_attn.py"
    plain = (tmp_path / DETR_FUNCTIONS).read_text()
    decorated = plain
    for old, new in DETR_DECORATED:
        decorated = decorated.replace(old, new)
    assert decorated != plain

    async def scenario():
        session = Session(tmp_path)
        await session.start()
        session.open(user, (tmp_path / user).read_text())
        found = await session.diagnostics(user)
        while not any(d.code == "AMP151" for d in found):
            found = await session.diagnostics(user, session.count(user))
        session.open(DETR_FUNCTIONS, plain)
        await session.diagnostics(DETR_FUNCTIONS)
        before = session.count(user)
        session.change(DETR_FUNCTIONS, decorated)
        assert [d.code for d in await session.diagnostics(user, before)] == []
        before = session.count(user)
        session.change(DETR_FUNCTIONS, plain)
        assert [d.code for d in await session.diagnostics(user, before)] == ["AMP151"]
        await session.stop()

    run(scenario())
