"""`amplint server` in a large tree: how soon diagnostics follow an edit, and the server's memory.

    python benchmarks/server.py                  # the mixed tree of benchmarks/monorepo.py
    python benchmarks/server.py --tree DIR       # any folder (a pyproject.toml with
                                                 # [tool.amplint] is written there if it has none)

Steps: a CLI run `amplint .` in the tree warms the cache (the server shares it); the server
starts (pygls's LanguageClient over stdio, as an editor); its first project pass is timed from
`initialized` to the end of its `$/progress`; a file with findings is opened, then edited 20
times (a comment line added at its end: the buffer changes, the project pass's view of it does
not) and the time from each didChange to the diagnostics of that version is taken (the server's
debounce included where it applies: edits 0.3 s apart are each linted at once, as a lone edit
after a quiet spell is); then 20 edits of a file that opens an autocast region
(a line added above the region: its project summary changes, so the server lints the file and
then runs the project pass again with the buffer in place of the file), one a second.
Prints the medians, the server's CPU time (its own process: the first pass, each edit), the
project pass's time after such an edit (the server's log), what the first pass took from the
cache (the server's log), the server's RSS now and its peak (VmHWM), against the targets
(300 ms, 500 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

EDITS = 20
TIMEOUT = 1800


def env():
    found = dict(os.environ)
    found["PYTHONPATH"] = ROOT + os.pathsep + found.get("PYTHONPATH", "")
    return found


def proc_status(pid: int) -> dict:
    found = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                found[key] = int(value.split()[0]) / 1024  # MB
    return found


def pick_files(tree: str):
    """(a file with findings, a file that opens an autocast region), from a CLI run."""
    proc = subprocess.run([sys.executable, "-m", "amplint", "--output-format", "json",
                           "--exit-zero", "."], cwd=tree, env=env(), capture_output=True,
                          text=True)
    findings = json.loads(proc.stdout)
    with_findings = sorted({d["filename"] for d in findings}, key=lambda f: os.path.getsize(
        os.path.join(tree, f)))
    # a mid-sized one, not the smallest (a typical file being worked on)
    edited = with_findings[len(with_findings) // 2]
    region = None
    for path in sorted(with_findings, key=lambda p: p == edited):  # another file if any
        with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as handle:
            if re.search(r"^\s*with torch\.(cuda\.amp\.)?autocast\(", handle.read(), re.M):
                region = path
                break
    return edited, region, len(findings)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the server's own process (not its pool's children)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_pass_log(logs) -> str:
    """The server's own account of its first pass (what came from the cache)."""
    return next((m for m in logs if m.startswith("amplint: first pass of ")), "(not logged)")


class Client:
    def __init__(self, tree: str) -> None:
        self.tree = tree
        self.client = LanguageClient("amplint-bench", "1")
        self.versions = {}
        self.waiting = {}
        self.logs = []
        self.progress_end = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _publish(params):
            future = self.waiting.pop((params.uri, params.version), None)
            if future is not None and not future.done():
                future.set_result((time.perf_counter(), len(params.diagnostics)))

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _create(params):
            return None

        @self.client.feature(types.PROGRESS)
        def _progress(params):
            kind = params.value.get("kind") if isinstance(params.value, dict) else None
            if kind == "end":
                self.progress_end.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params):
            self.logs.append(params.message)

    def uri(self, path):
        return from_fs_path(os.path.join(self.tree, path))

    def expect(self, path, version):
        future = asyncio.get_running_loop().create_future()
        self.waiting[(self.uri(path), version)] = future
        return future

    async def open(self, path, text):
        self.versions[path] = 1
        future = self.expect(path, 1)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=self.uri(path), language_id="python", version=1, text=text)))
        return await asyncio.wait_for(future, TIMEOUT)

    async def change(self, path, text):
        """Seconds from didChange to the diagnostics of that version."""
        self.versions[path] += 1
        version = self.versions[path]
        future = self.expect(path, version)
        sent = time.perf_counter()
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri(path), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        arrived, count = await asyncio.wait_for(future, TIMEOUT)
        return arrived - sent, count


async def measure(tree: str, edited: str, region, options) -> None:
    bench = Client(tree)
    await bench.client.start_io(sys.executable, "-m", "amplint", "server", cwd=tree, env=env())
    pid = bench.client._server.pid
    await bench.client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)),
        root_uri=from_fs_path(tree), initialization_options=options))
    began, cpu = time.perf_counter(), cpu_seconds(pid)
    bench.client.initialized(types.InitializedParams())
    await asyncio.wait_for(bench.progress_end.wait(), TIMEOUT)
    print(f"first project pass (warm CLI cache): {time.perf_counter() - began:.2f} s, "
          f"{cpu_seconds(pid) - cpu:.2f} s CPU; server RSS after it {proc_status(pid)['VmRSS']:.0f} MB")
    await asyncio.sleep(0.5)  # the log line follows the progress end
    print(f"  {first_pass_log(bench.logs)}")
    with open(os.path.join(tree, edited), encoding="utf-8") as handle:
        text = handle.read()
    _, count = await bench.open(edited, text)
    print(f"edited file: {edited} ({len(text.splitlines())} lines, {count} findings)")
    latencies, cpus = [], []
    for n in range(EDITS):
        text = text + f"# edit {n}\n"
        cpu = cpu_seconds(pid)
        seconds, _ = await bench.change(edited, text)
        latencies.append(seconds)
        await asyncio.sleep(0.3)  # the server's work after publishing counts to this edit
        cpus.append(cpu_seconds(pid) - cpu)
    median = statistics.median(latencies) * 1000
    print(f"didChange -> diagnostics, median of {EDITS} edits: {median:.0f} ms "
          f"(min {min(latencies) * 1000:.0f}, max {max(latencies) * 1000:.0f}; target <= 300 ms; "
          f"the server's debounce, {options.get('debounceMs', 100)} ms, included)")
    print(f"  server CPU per edit (the lint, the project-summary check, the protocol), median: "
          f"{statistics.median(cpus) * 1000:.0f} ms")
    print_lint_times(bench.logs, os.path.basename(edited))
    if region:
        with open(os.path.join(tree, region), encoding="utf-8") as handle:
            source = handle.read()
        await bench.open(region, source)
        first_logs = len(bench.logs)
        lines = source.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if re.match(r"\s*with torch\..*autocast\(", line))
        indent = re.match(r"\s*", lines[at]).group(0)
        region_latencies = []
        for n in range(EDITS):
            lines.insert(at, f"{indent}_edit_{n} = {n}\n")
            seconds, _ = await bench.change(region, "".join(lines))
            region_latencies.append(seconds)
            await asyncio.sleep(1.0)
        logs = bench.logs[first_logs:]
        passes = [float(found.group(1)) for found in
                  (re.search(r"project pass again after an edit of .*: ([\d.]+) s,", m)
                   for m in logs) if found]
        print(f"edits above an autocast region ({region}): didChange -> diagnostics, median "
              f"{statistics.median(region_latencies) * 1000:.0f} ms; the project pass that "
              f"follows each: median {statistics.median(passes) if passes else float('nan'):.2f} s "
              f"({len(passes)} runs)")
        print_lint_times(logs, os.path.basename(region))
    status = proc_status(pid)
    print(f"server RSS now {status['VmRSS']:.0f} MB, peak {status['VmHWM']:.0f} MB (target < 500 MB)")
    await bench.client.shutdown_async(None)
    bench.client.exit(None)
    await bench.client.stop()


def print_lint_times(logs, name) -> None:
    """The server's own time per lint of the edited buffer (its `logTimings` log): what the
    latency is made of besides the debounce and the machine's other load."""
    wall, cpu = [], []
    for message in logs:
        found = re.match(r"amplint: lint (\S+) v(\d+): ([\d.]+) ms wall, ([\d.]+) ms CPU", message)
        if found and found.group(1) == name and int(found.group(2)) > 1:
            wall.append(float(found.group(3)))
            cpu.append(float(found.group(4)))
    if wall:
        print(f"  the lint itself, in the server: median {statistics.median(wall):.0f} ms wall, "
              f"{statistics.median(cpu):.0f} ms CPU ({len(wall)} lints)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", help="folder to measure in (default: the monorepo tree)")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    tree = args.tree
    if tree is None:
        import monorepo

        tree = monorepo.TREE
        if not os.path.isdir(tree):
            monorepo.build_tree(tree)
    tree = os.path.abspath(tree)
    pyproject = os.path.join(tree, "pyproject.toml")
    if not os.path.exists(pyproject):
        with open(pyproject, "w", encoding="utf-8") as handle:
            handle.write("[tool.amplint]\n")
    files = sum(f.endswith(".py") for _, _, names in os.walk(tree) for f in names)
    print(f"tree: {tree} ({files} Python files)")
    began = time.perf_counter()
    edited, region, findings = pick_files(tree)  # also warms the cache the server shares
    print(f"CLI `amplint .` (warming the cache): {time.perf_counter() - began:.1f} s, "
          f"{findings} findings")
    options = {"logTimings": True}
    if args.jobs:
        options["jobs"] = args.jobs
    asyncio.run(measure(tree, edited, region, options))


if __name__ == "__main__":
    main()
