"""Speed on a mixed-framework monorepo, in one run: cold, warm, peak memory, TorchFix.

    python benchmarks/monorepo.py [--sample-every 5] [--torchfix-trees timm lightning]

The tree: the Python sources of transformers, timm, lightning, fairseq 0.12.2 and mmdet 2.28.2
from the registry (`pip download --no-deps`, unpacked by benchmarks/corpus.py), side by side in
one folder, so that the settings of several frameworks share one project as in a research
monorepo. Printed, measured back to back on this machine:
  * parse-all: a bare `libcst.parse_module` of every file, one process (measured on every
    N-th file and scaled by bytes; N = --sample-every);
  * cold: `amplint --no-cache` through the CLI, all cores, as a ratio of parse-all (target <= 0.5x);
  * warm: the same run with its cache filled, as cold / warm (target >= 20x);
  * peak RSS of the largest process of the cold and warm runs (target < 500 MB);
  * TorchFix 0.7.0's fastest mode (its flake8 plugin, `-j 2`, in its own virtual environment)
    against amplint cold on the same files (target >= 30x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from corpus import python_files, tree_for  # noqa: E402

PACKAGES = ["transformers", "timm", "lightning", "fairseq==0.12.2", "mmdet==2.28.2"]
TORCHFIX_VENV = os.path.join(HERE, ".venv-torchfix")


def build_tree(target: str) -> str:
    os.makedirs(target, exist_ok=True)
    for spec in PACKAGES:
        source = tree_for(spec)
        dest = os.path.join(target, os.path.basename(source))
        if not os.path.isdir(dest):
            shutil.copytree(source, dest, copy_function=os.link)
    return target


def parse_all_seconds(files, every: int) -> float:
    import libcst

    sample = files[::every]
    total_bytes = sum(os.path.getsize(f) for f in files)
    sample_bytes = sum(os.path.getsize(f) for f in sample)
    start = time.process_time()
    for path in sample:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                libcst.parse_module(text)
        except Exception:
            pass
    return (time.process_time() - start) * total_bytes / max(1, sample_bytes)


def timed(args, cwd=None):
    """(seconds, peak RSS in MB of the largest process of this command, process)."""
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
              "sys.stderr.write(p.stderr[-2000:])\n")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    peak_kb, code = proc.stdout.split()
    return elapsed, int(peak_kb) / 1024, int(code), proc.stderr


def amplint(*args):
    return [sys.executable, "-m", "amplint", "--exit-zero", *args]


def ensure_torchfix() -> str:
    flake8 = os.path.join(TORCHFIX_VENV, "bin", "flake8")
    if not os.path.exists(flake8):
        subprocess.run([sys.executable, "-m", "venv", TORCHFIX_VENV], check=True)
        subprocess.run([os.path.join(TORCHFIX_VENV, "bin", "pip"), "install", "-q",
                        "torchfix==0.7.0"], check=True)
    return flake8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=os.path.join(HERE, ".corpus", "monorepo"))
    parser.add_argument("--sample-every", type=int, default=5)
    parser.add_argument("--torchfix-trees", nargs="*", default=["timm", "lightning"])
    parser.add_argument("--no-torchfix", action="store_true")
    opts = parser.parse_args()

    tree = build_tree(opts.tree)
    files = python_files(tree)
    size = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"tree: {tree}: {len(files)} files, {size:.0f} MB ({', '.join(PACKAGES)})")

    parse_all = parse_all_seconds(files, opts.sample_every)
    print(f"parse-all (bare libcst, 1 process, every {opts.sample_every}th file, scaled): {parse_all:8.1f} s")

    cache = tempfile.mkdtemp(prefix="amplint-monorepo-cache-")
    try:
        cold, cold_rss, _, err = timed(amplint("--no-cache", tree))
        fill, fill_rss, _, _ = timed(amplint("--cache-dir", cache, tree))
        warm, warm_rss, _, _ = timed(amplint("--cache-dir", cache, tree))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"amplint cold (--no-cache, all cores): {cold:8.1f} s = {cold / parse_all:.2f}x parse-all "
          f"(target <= 0.5x); peak RSS {cold_rss:.0f} MB")
    print(f"amplint cache fill:                   {fill:8.1f} s; peak RSS {fill_rss:.0f} MB")
    print(f"amplint warm (cache filled):          {warm:8.2f} s = cold / warm {cold / warm:.1f}x "
          f"(target >= 20x); peak RSS {warm_rss:.0f} MB")
    print(f"peak RSS, largest process: {max(cold_rss, fill_rss, warm_rss):.0f} MB (target < 500 MB)")
    if "internal error" in err or "Traceback" in err:
        print("amplint reported internal errors:\n" + err[-1500:])

    if not opts.no_torchfix:
        subset = [os.path.join(tree, name) for name in opts.torchfix_trees]
        count = sum(len(python_files(d)) for d in subset)
        flake8 = ensure_torchfix()
        t_fix, fix_rss, _, _ = timed([flake8, "--select", "TOR", "-j", "2", *subset])
        t_amp, amp_rss, _, _ = timed(amplint("--no-cache", *subset))
        print(f"TorchFix 0.7.0 (flake8 -j 2) on {count} files of {', '.join(opts.torchfix_trees)}: "
              f"{t_fix:8.1f} s  {count / t_fix:7.1f} files/s")
        print(f"amplint cold on the same files:  {t_amp:8.1f} s  {count / t_amp:7.1f} files/s "
              f"= {t_fix / t_amp:.1f}x TorchFix (target >= 30x)")


if __name__ == "__main__":
    main()
