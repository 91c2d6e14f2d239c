"""amplint on a mixed-framework monorepo (issue 14): one run prints every figure side by side.

    python benchmarks/monorepo.py                      # builds benchmarks/.monorepo on first use
    python benchmarks/monorepo.py --parse-every 5      # bare parse of one file in five, scaled
    python benchmarks/monorepo.py --torchfix-sample 0  # skip TorchFix
    python benchmarks/monorepo.py --project-share      # only: the project pass's share per tree
    python benchmarks/monorepo.py --project-share --tree DIR   # per folder of any DIR
    python benchmarks/monorepo.py --project-share --add detectron2=DIR  # one more tree

The tree: `pip download --no-deps` of transformers, timm, lightning, fairseq 0.12.2 and
mmdet 2.28.2 (the wheels' and the sdist's .py and YAML files), so that the settings of several
frameworks (Hugging Face, Lightning, fairseq, mmdet) share one tree, as in a research monorepo.
Nothing downloaded is committed: benchmarks/.monorepo is git-ignored.

Prints:
  * file count; parse-all: a bare `libcst.parse_module` of every file (or of one file in N,
    scaled by bytes; says which), in this process;
  * cold (empty cache) and warm (same cache, back to back) CLI runs, all cores: cold/parse-all,
    warm/cold; then a warm run after a one-line edit of one file (put back afterwards), which
    runs the whole project pass again: what a pre-commit run after an edit costs;
  * CPU seconds of parse-all and of the cold run's processes together (a ratio that other load
    on the machine moves less than the wall-clock one);
  * peak RSS of the largest process of each run (RUSAGE_CHILDREN of a wrapper around the CLI:
    the largest of amplint's main process and its pool workers);
  * files/s against TorchFix 0.7.0's flake8 mode (`flake8 --select TOR -j N`, its fastest) on
    the same files (TorchFix in its own venv, benchmarks/.venv-torchfix; a sample when
    --torchfix-sample is below the file count), and amplint --no-cache on that same sample.
  * with --project-share, instead: for each framework tree (each folder directly under the
    tree), amplint --no-cache with and without --isolated-files, and the project pass's share
    of the cold run: 1 - isolated/full, in CPU seconds of all processes and in wall seconds
    (issue 34's target: <= 20 % on each framework); TorchFix's CPU seconds on each tree beside
    it (unless --torchfix-sample 0), and the trees of --pair (timm, detectron2) linked into
    one folder, amplint and TorchFix side by side on it (issue 34's target: >= 30x).
amplint's modules are byte-compiled first, as those of an installed package are.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

TREE = os.path.join(HERE, ".monorepo")
TORCHFIX_VENV = os.path.join(HERE, ".venv-torchfix")
PACKAGES = ("transformers", "timm", "lightning", "fairseq==0.12.2", "mmdet==2.28.2")
KEEP = (".py", ".yaml", ".yml")


def build_tree(target: str) -> None:
    downloads = os.path.join(target, "_downloads")
    os.makedirs(downloads, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", downloads,
                    *PACKAGES], check=True)
    for archive_path in sorted(os.listdir(downloads)):
        full = os.path.join(downloads, archive_path)
        name = archive_path.split("-")[0].lower()
        if archive_path.endswith(".whl"):
            with zipfile.ZipFile(full) as archive:
                for member in archive.namelist():
                    if member.endswith(KEEP) and ".dist-info/" not in member:
                        archive.extract(member, os.path.join(target, name))
        elif archive_path.endswith((".tar.gz", ".tgz")):
            with tarfile.open(full) as archive:
                members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith(KEEP)]
                archive.extractall(os.path.join(target, name), members=members)
    shutil.rmtree(downloads)


def python_files(root: str):
    out = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(directory, f) for f in sorted(files) if f.endswith(".py"))
    return out


def parse_all(files, every: int):
    """Seconds for a bare LibCST parse of every file, measured on one file in `every` and
    scaled by bytes."""
    import libcst as cst

    sample = files[::every]
    total_bytes = sum(os.path.getsize(f) for f in files)
    sample_bytes = 0
    elapsed = cpu = 0.0
    for path in sample:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        sample_bytes += len(text.encode("utf-8", "replace"))
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            cst.parse_module(text)
        except Exception:
            pass
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
    scale = total_bytes / max(1, sample_bytes)
    return elapsed * scale, len(sample), cpu * scale


_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
    "elapsed = time.perf_counter() - start\n"
    "sys.stderr.buffer.write(proc.stderr)\n"
    "sys.stdout.buffer.write(proc.stdout)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print('@@', elapsed, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime,"
    " file=sys.stderr)\n"
)


def timed(args, env=None):
    """(seconds, peak RSS in MB of the largest process the command started, stdout, CPU
    seconds of all its processes, user + system). A command that fails is an error, not a
    fast time."""
    # from a neutral folder: `python -m amplint` puts the working directory first on sys.path,
    # so a run from this checkout would import it whatever PYTHONPATH names (a --baseline
    # row would time this checkout again)
    if env is None:
        env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir())
    line = [row for row in proc.stderr.splitlines() if row.startswith("@@ ")][-1].split()
    if line[3] != "0":
        raise SystemExit(f"{' '.join(args[:3])} ... exited {line[3]}:\n{proc.stderr[-2000:]}")
    return float(line[1]), int(line[2]) / 1024, proc.stdout, float(line[4])


def torchfix_env():
    """TorchFix runs in its own venv; a PYTHONPATH naming this checkout would make its flake8
    load amplint's plugin from there (without amplint's dependencies) and fail at once."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def edited_run(path: str, args):
    """`timed(args)` with a comment line appended to `path` (a user's edit), which is put back
    byte for byte afterwards."""
    with open(path, "rb") as handle:
        original = handle.read()
    try:
        with open(path, "ab") as handle:
            handle.write(b"\n# edited by benchmarks/monorepo.py\n")
        return timed(args)
    finally:
        with open(path, "wb") as handle:
            handle.write(original)


def amplint(*args):
    return [sys.executable, "-m", "amplint", "--exit-zero", *args]


def ensure_torchfix() -> str:
    flake8 = os.path.join(TORCHFIX_VENV, "bin", "flake8")
    if not os.path.exists(os.path.join(TORCHFIX_VENV, "bin", "torchfix")):
        subprocess.run([sys.executable, "-m", "venv", TORCHFIX_VENV], check=True)
        subprocess.run([os.path.join(TORCHFIX_VENV, "bin", "pip"), "install", "-q",
                        "torchfix==0.7.0"], check=True)
    return flake8


def project_share(tree: str, jobs: int, extra, torchfix: bool, pair, only=(), baseline=None,
                  pair_sample: int = 0, mixed: bool = True) -> None:
    """The project pass's share of a cold run, per folder directly under `tree` and per
    NAME=DIR of `extra`; with `torchfix`, TorchFix's CPU seconds on the same folder beside
    it; then the trees of `pair` linked into one folder (or `pair_sample` files of them,
    drawn with a fixed seed) and run side by side. `baseline`: another amplint checkout
    (its folder goes on PYTHONPATH), timed the same way in the same run, a row under each."""
    trees = [(name, os.path.join(tree, name)) for name in sorted(os.listdir(tree))
             if os.path.isdir(os.path.join(tree, name)) and not name.startswith((".", "_"))]
    trees += [(name, os.path.abspath(folder)) for name, folder in (item.split("=", 1) for item in extra)]
    trees = [(name, folder) for name, folder in trees if not only or name in only]
    flake8 = ensure_torchfix() if torchfix else None
    print(f"project pass share of a cold run (--no-cache, {jobs} processes; "
          "share = 1 - isolated/full; CPU = user + system of all processes):")
    print(f"{'tree':14} {'files':>6} {'full CPU':>9} {'isolated':>9} {'share':>6} "
          f"{'full wall':>10} {'isolated':>9} {'share':>6}"
          + (f" {'TorchFix CPU':>13} {'amplint x':>10}" if flake8 else ""))
    sides = [("", None)] + ([("  baseline", _baseline_env(baseline))] if baseline else [])
    for name, folder in trees:
        count = len(python_files(folder))
        if not count:
            continue
        for label, env in sides:
            full, _, _, full_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", folder), env)
            alone, _, _, alone_cpu = timed(amplint("--jobs", str(jobs), "--no-cache",
                                                   "--isolated-files", folder), env)
            shown = label or name
            row = (f"{shown[:14]:14} {count:6} {full_cpu:8.1f}s {alone_cpu:8.1f}s "
                   f"{1 - alone_cpu / full_cpu:6.0%} {full:9.1f}s {alone:8.1f}s {1 - alone / full:6.0%}")
            if flake8 and not label and not pair_sample:  # (a sampled pair: TorchFix there only)
                _, _, _, fix_cpu = timed(_torchfix(flake8, jobs, folder), torchfix_env())
                row += f" {fix_cpu:12.1f}s {fix_cpu / full_cpu:9.1f}x"
            print(row, flush=True)
    if mixed:
        mixed_share(tree, jobs, sides)
    chosen = [(name, folder) for name, folder in trees if name in pair]
    if flake8 and len(chosen) > 1:
        work = tempfile.mkdtemp(prefix="amplint-side-by-side-")
        pairs = [(name, folder, path) for name, folder in chosen for path in python_files(folder)]
        if pair_sample and pair_sample < len(pairs):
            pairs = sorted(random.Random(0).sample(pairs, pair_sample))
        try:
            for name, folder, path in pairs:
                dst = os.path.join(work, name, os.path.relpath(path, folder))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.link(path, dst) if _same_device(path, work) else shutil.copyfile(path, dst)
            count = len(python_files(work))
            t_amp, _, _, amp_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", work))
            t_base, _, _, base_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", work),
                                           _baseline_env(baseline)) if baseline else (0, 0, 0, 0)
            t_fix, _, _, fix_cpu = timed(_torchfix(flake8, jobs, work), torchfix_env())
        finally:
            shutil.rmtree(work, ignore_errors=True)
        what = f"a sample of {count} files" if pair_sample and count == pair_sample else f"{count} files"
        print(f"side by side, {' + '.join(n for n, _ in chosen)} in one folder ({what}): "
              f"amplint --no-cache {amp_cpu:.1f} s CPU ({t_amp:.1f} s wall), TorchFix {fix_cpu:.1f} s CPU "
              f"({t_fix:.1f} s wall) = {fix_cpu / amp_cpu:.1f}x in CPU, {t_fix / t_amp:.1f}x in wall "
              "(target >= 30x)")
        if baseline:
            print(f"  baseline amplint on the same folder: {base_cpu:.1f} s CPU ({t_base:.1f} s wall) "
                  f"= {fix_cpu / base_cpu:.1f}x TorchFix in CPU")


# The pass timed from inside one run: the runner's `project_entries` (the whole project pass, the
# summaries it asks for included: with one job the pool runs them in this process) wrapped with
# a CPU and wall clock, the CLI run in the same process.
_PASS_CLOCK = (
    "import sys, time\n"
    "import amplint.run.runner as runner\n"
    "from amplint.cli.main import main\n"
    "inner = runner.project_entries\n"
    "spent = [0.0, 0.0]\n"
    "def timed_pass(*args, **kwargs):\n"
    "    start, start_cpu = time.perf_counter(), time.process_time()\n"
    "    try:\n"
    "        return inner(*args, **kwargs)\n"
    "    finally:\n"
    "        spent[0] += time.perf_counter() - start\n"
    "        spent[1] += time.process_time() - start_cpu\n"
    "runner.project_entries = timed_pass\n"
    "sys.argv = ['amplint'] + sys.argv[1:]\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    print('@@pass', spent[0], spent[1], time.process_time(), file=sys.stderr)\n"
)


def pass_clock(folder: str, env=None, extra=()):
    """(the pass's wall seconds, its CPU seconds, the CPU seconds of the whole run) of one
    cold `--jobs 1` run, from the runner's own `project_entries` call."""
    env = env if env is not None else dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", _PASS_CLOCK, "--exit-zero", "--jobs", "1",
                           "--no-cache", *extra, folder], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir())
    rows = [row for row in proc.stderr.splitlines() if row.startswith("@@pass ")]
    if not rows:
        raise SystemExit(f"pass clock on {folder} failed:\n{proc.stderr[-2000:]}")
    wall, cpu, total = (float(x) for x in rows[-1].split()[1:])
    return wall, cpu, total


def mixed_share(tree: str, jobs: int, sides) -> None:
    """Issue 26's cost line: the project pass's share of a cold run on the whole mixed tree
    (every framework in one run, as a monorepo is linted), two ways: 1 - isolated/full over
    all processes at `jobs`, and the pass's own CPU in a `--jobs 1` run (pass_clock).
    Every run lints the same files: the tree is a monorepo whose frameworks are its own code,
    so all three runs say `report-vendored = true` (a framework package with its setup.py is
    otherwise set aside as a vendored copy: the isolated run then lints only the rest, while
    the full run still reads the copies for its pass, and 1 - isolated/full measures that)."""
    count = len(python_files(tree))
    folder = tempfile.mkdtemp(prefix="amplint-monorepo-config-")
    config = os.path.join(folder, "pyproject.toml")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write("[tool.amplint]\nreport-vendored = true\n")
    same = ("--config", config)
    try:
        for label, env in sides:
            full, _, _, full_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", *same, tree), env)
            alone, _, _, alone_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", *same,
                                                   "--isolated-files", tree), env)
            pass_wall, pass_cpu, run_cpu = pass_clock(tree, env, same)
            print(f"{(label.strip() or 'mixed tree')[:14]:14} {count:6} {full_cpu:8.1f}s {alone_cpu:8.1f}s "
                  f"{1 - alone_cpu / full_cpu:6.0%} {full:9.1f}s {alone:8.1f}s {1 - alone / full:6.0%}"
                  f"   pass itself (-j 1): {pass_cpu:.1f} of {run_cpu:.1f} s CPU = {pass_cpu / run_cpu:.0%}"
                  " (issue 26's target: <= 20 %)", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _baseline_env(folder: str):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(folder)
    return env


def _torchfix(flake8: str, jobs: int, folder: str):
    return [flake8, "--isolated", "--select", "TOR", "-j", str(jobs), "--exit-zero", folder]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default=TREE)
    parser.add_argument("--parse-every", type=int, default=1,
                        help="bare parse of one file in N, scaled by bytes (default: every file)")
    parser.add_argument("--torchfix-sample", type=int, default=600,
                        help="files for the TorchFix comparison (0: skip it)")
    parser.add_argument("--jobs", type=int, default=0, help="processes for both tools (0: all cores)")
    parser.add_argument("--project-share", action="store_true",
                        help="only the project pass's share of a cold run, per framework tree")
    parser.add_argument("--add", action="append", default=[], metavar="NAME=DIR",
                        help="with --project-share: one more framework tree (e.g. detectron2=DIR)")
    parser.add_argument("--torchfix-venv", default="", metavar="DIR",
                        help="a virtual environment that has torchfix 0.7.0 (default: benchmarks/.venv-torchfix, "
                             "made when missing), e.g. the main checkout's from a worktree")
    parser.add_argument("--baseline", default="", metavar="DIR",
                        help="with --project-share: also time the amplint checkout in DIR (on PYTHONPATH)")
    parser.add_argument("--pair-sample", type=int, default=0,
                        help="with --project-share: side by side on this many files of the pair (0: all); "
                             "TorchFix then runs on that sample only, not on each tree")
    parser.add_argument("--only", default="", help="with --project-share: only these trees (NAME,NAME)")
    parser.add_argument("--no-mixed", action="store_true",
                        help="with --project-share: no mixed-tree row (the whole tree in one run)")
    parser.add_argument("--pair", default="timm,detectron2",
                        help="with --project-share: the trees run side by side with TorchFix")
    global TORCHFIX_VENV
    opts = parser.parse_args()
    opts.tree = os.path.abspath(opts.tree)
    TORCHFIX_VENV = opts.torchfix_venv or TORCHFIX_VENV
    jobs = opts.jobs or len(os.sched_getaffinity(0))

    # amplint's bytecode, as an installed package has it (pip compiles what it installs, and so
    # it did for TorchFix): without it, an environment with PYTHONDONTWRITEBYTECODE recompiles
    # amplint's ~100 modules in every run (0.12 s of each)
    compileall.compile_dir(os.path.join(ROOT, "amplint"), quiet=1)
    if not os.path.isdir(opts.tree):
        print(f"building the tree in {opts.tree} ...")
        build_tree(opts.tree)
    files = python_files(opts.tree)
    size = sum(os.path.getsize(f) for f in files)
    big = sum(os.path.getsize(f) >= 1 << 20 for f in files)
    print(f"tree: {opts.tree}: {len(files)} Python files, {size / 1e6:.1f} MB, {big} of >= 1 MB; "
          f"{jobs} processes, {os.cpu_count()} cores")

    if opts.project_share:
        project_share(opts.tree, jobs, opts.add, opts.torchfix_sample > 0, opts.pair.split(","),
                      [name for name in opts.only.split(",") if name], opts.baseline or None,
                      opts.pair_sample, not opts.no_mixed)
        return

    cache_dir = tempfile.mkdtemp(prefix="amplint-monorepo-cache-")
    try:
        cold, cold_rss, cold_out, cold_cpu = timed(amplint("--jobs", str(jobs), "--cache-dir", cache_dir, opts.tree))
        warm, warm_rss, warm_out, _ = timed(amplint("--jobs", str(jobs), "--cache-dir", cache_dir, opts.tree))
        edited = sorted(files)[len(files) // 2]
        edit, edit_rss, _, edit_cpu = edited_run(edited, amplint("--jobs", str(jobs), "--cache-dir", cache_dir, opts.tree))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    parse, parsed, parse_cpu = parse_all(files, opts.parse_every)
    how = "every file" if opts.parse_every == 1 else f"{parsed} files (one in {opts.parse_every}), scaled by bytes"
    print(f"parse-all (bare libcst, 1 process, {how}): {parse:8.1f} s")
    print(f"cold (empty cache, {jobs} processes): {cold:8.1f} s  {len(files) / cold:7.1f} files/s  "
          f"= {cold / parse:.2f}x parse-all (target <= 0.5x)  peak RSS {cold_rss:.0f} MB")
    print(f"CPU seconds (less sensitive to other load): parse-all {parse_cpu:.1f} s, cold {cold_cpu:.1f} s "
          f"in all its processes = {cold_cpu / parse_cpu:.2f}x")
    print(f"warm (same cache, right after):       {warm:8.1f} s  {len(files) / warm:7.1f} files/s  "
          f"cold/warm = {cold / warm:.1f}x (target >= 20x)  peak RSS {warm_rss:.0f} MB")
    print(f"warm after a one-line edit of {os.path.relpath(edited, opts.tree)}: {edit:8.1f} s wall, "
          f"{edit_cpu:.1f} CPU s, peak RSS {edit_rss:.0f} MB (any edit runs the project pass again)")
    print(f"same findings cold and warm: {cold_out == warm_out}; "
          f"largest process overall {max(cold_rss, warm_rss):.0f} MB (target < 500 MB); "
          f"this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    if opts.torchfix_sample:
        flake8 = ensure_torchfix()
        chosen = files if opts.torchfix_sample >= len(files) else sorted(
            random.Random(0).sample(files, opts.torchfix_sample))
        work = tempfile.mkdtemp(prefix="amplint-monorepo-sample-")
        try:
            for path in chosen:  # keep the layout: imports between the files still resolve
                dst = os.path.join(work, os.path.relpath(path, opts.tree))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.link(path, dst) if _same_device(path, work) else shutil.copyfile(path, dst)
            t_fix, fix_rss, _, fix_cpu = timed(_torchfix(flake8, jobs, work), torchfix_env())
            t_amp, _, _, amp_cpu = timed(amplint("--jobs", str(jobs), "--no-cache", work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        n = len(chosen)
        print(f"TorchFix 0.7.0, flake8 -j {jobs}, {n} files: {t_fix:8.1f} s  {n / t_fix:7.1f} files/s  "
              f"peak RSS {fix_rss:.0f} MB")
        print(f"amplint --no-cache on the same {n} files:   {t_amp:8.1f} s  {n / t_amp:7.1f} files/s  "
              f"= {t_fix / t_amp:.1f}x TorchFix (target >= 30x)")
        print(f"CPU seconds: TorchFix {fix_cpu:.1f} s, amplint {amp_cpu:.1f} s = {fix_cpu / amp_cpu:.1f}x")
        print(f"amplint cold on the whole tree vs TorchFix's files/s: "
              f"{(len(files) / cold) / (n / t_fix):.1f}x")


def _same_device(a: str, b: str) -> bool:
    return os.stat(a).st_dev == os.stat(os.path.dirname(b) if not os.path.isdir(b) else b).st_dev


if __name__ == "__main__":
    main()
