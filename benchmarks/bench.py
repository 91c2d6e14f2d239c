"""amplint speed benchmark: prints throughput and ratios side by side, in one run.

    python benchmarks/bench.py                    # builds benchmarks/.corpus on first use
    python benchmarks/bench.py --corpus DIR       # any tree of Python files
    python benchmarks/bench.py --no-torchfix --no-scaling   # the quick subset

Measures, on the same machine in the same run:
  * bare `libcst.parse_module` over every file, and over the files amplint parses (the
    prefilter lets through only files that mention AMP terms);
  * amplint's own analysis of those files in one process, as a ratio of their parse time;
  * amplint cold (`--no-cache`) and warm (cache filled) through the CLI, all cores;
  * TorchFix 0.7.0 (in its own virtual environment) against amplint on the same sample;
  * peak memory (largest process) of the cold run, and cold time at 1x, 2x, 4x the corpus.
The corpus: the sources of transformers and timm from their wheels on the registry, plus the
installed torch's own Python files.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

CORPUS = os.path.join(HERE, ".corpus")
TORCHFIX_VENV = os.path.join(HERE, ".venv-torchfix")


def build_corpus(target: str) -> None:
    os.makedirs(target, exist_ok=True)
    wheels = os.path.join(target, "_wheels")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", wheels,
                    "transformers", "timm"], check=True)
    for wheel in glob.glob(os.path.join(wheels, "*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.endswith(".py"):
                    archive.extract(name, target)
    shutil.rmtree(wheels)
    try:
        import torch  # noqa: F401  (only its files are read)
        torch_dir = os.path.dirname(torch.__file__)
    except ImportError:
        print("torch not installed: corpus without torch's sources")
        return
    for directory, _, files in os.walk(torch_dir):
        for name in files:
            if name.endswith(".py"):
                src = os.path.join(directory, name)
                dst = os.path.join(target, "torch", os.path.relpath(src, torch_dir))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)


def python_files(root: str):
    out = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(directory, f) for f in sorted(files) if f.endswith(".py"))
    return out


def read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def time_interleaved(files, texts, could_match, rules):
    """Per file, back to back (so a change of machine load hits both alike): the bare LibCST
    parse, and, for the files the prefilter lets through, amplint's whole analysis (its own
    parse included). Files the prefilter stops are parsed one in five and scaled up.
    Returns (parse of every file, parse of the files amplint parses, amplint on those)."""
    import libcst as cst
    from amplint.analysis.engine import Settings, lint_source

    settings = Settings.default()
    parse_passing = parse_others = analysis = 0.0
    for index, (path, text) in enumerate(zip(files, texts)):
        passing = could_match(text, rules)
        if not passing and index % 5:
            continue
        start = time.perf_counter()
        try:
            cst.parse_module(text)
        except Exception:
            pass
        parsed = time.perf_counter() - start
        if not passing:
            parse_others += parsed * 5
            continue
        parse_passing += parsed
        start = time.perf_counter()
        lint_source(path, text, settings)
        analysis += time.perf_counter() - start
    return parse_passing + parse_others, parse_passing, analysis


def run_cli(args, cwd=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before) / 1024, proc


def amplint_cmd(*args):
    return [sys.executable, "-m", "amplint", "--exit-zero", *args]


def ensure_torchfix() -> str:
    exe = os.path.join(TORCHFIX_VENV, "bin", "torchfix")
    if not os.path.exists(exe):
        subprocess.run([sys.executable, "-m", "venv", TORCHFIX_VENV], check=True)
        subprocess.run([os.path.join(TORCHFIX_VENV, "bin", "pip"), "install", "-q",
                        "torchfix==0.7.0"], check=True)
    return exe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=CORPUS)
    parser.add_argument("--sample", type=int, default=300, help="files for the TorchFix comparison")
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--no-scaling", action="store_true")
    opts = parser.parse_args()

    if not os.path.isdir(opts.corpus):
        print(f"building the corpus in {opts.corpus} ...")
        build_corpus(opts.corpus)
    files = python_files(opts.corpus)
    texts = [read(f) for f in files]
    lines = sum(t.count("\n") for t in texts)
    print(f"corpus: {opts.corpus}: {len(files)} files, {lines} lines")

    from amplint.analysis.engine import Settings, could_match
    rules = Settings.default().rules()
    parsed = [(f, t) for f, t in zip(files, texts) if could_match(t, rules)]
    print(f"prefilter: amplint parses {len(parsed)} of {len(files)} files "
          f"({100 * len(parsed) / max(1, len(files)):.1f} %)")

    rng = random.Random(0)
    parse_all, parse_parsed, analysis = time_interleaved(files, texts, could_match, rules)
    print(f"bare libcst parse, every file (1 process): {parse_all:8.2f} s  "
          "(the files the prefilter stops: one in five, scaled)")
    print(f"bare libcst parse, files amplint parses:   {parse_parsed:8.2f} s")
    print(f"amplint analysis of those files (1 process): {analysis:6.2f} s  "
          f"= {analysis / parse_parsed:.2f}x their parse (target <= 1.5x), "
          f"{analysis / parse_all:.2f}x parsing the whole tree (target <= 0.5x)")

    cache_dir = tempfile.mkdtemp(prefix="amplint-bench-cache-")
    try:
        cold, peak, _ = run_cli(amplint_cmd("--no-cache", opts.corpus))
        run_cli(amplint_cmd("--cache-dir", cache_dir, opts.corpus))
        warm, _, _ = run_cli(amplint_cmd("--cache-dir", cache_dir, opts.corpus))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"amplint CLI cold (all cores):  {cold:8.2f} s  {len(files) / cold:8.1f} files/s  "
          f"peak memory {peak:.0f} MB (largest process; target < 500 MB)")
    print(f"amplint CLI warm (cache):      {warm:8.2f} s  {len(files) / warm:8.1f} files/s  "
          f"cold/warm = {cold / warm:.1f}x (target >= 20x)")

    if not opts.no_torchfix:
        sample_files = rng.sample(files, min(opts.sample, len(files)))
        work = tempfile.mkdtemp(prefix="amplint-bench-sample-")
        try:
            for i, path in enumerate(sample_files):
                shutil.copyfile(path, os.path.join(work, f"f{i:05d}.py"))
            torchfix = ensure_torchfix()
            t_fix, _, proc = run_cli([torchfix, work])
            t_amp, _, _ = run_cli(amplint_cmd("--no-cache", work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        n = len(sample_files)
        print(f"TorchFix 0.7.0 on {n} sampled files: {t_fix:8.2f} s  {n / t_fix:8.1f} files/s")
        print(f"amplint on the same {n} files:       {t_amp:8.2f} s  {n / t_amp:8.1f} files/s  "
              f"= {t_fix / t_amp:.1f}x TorchFix (target >= 30x)")

    if not opts.no_scaling:
        base = tempfile.mkdtemp(prefix="amplint-bench-scale-")
        try:
            times = []
            for factor in (1, 2, 4):
                tree = os.path.join(base, f"x{factor}")
                for copy in range(factor):
                    for path in files:
                        dst = os.path.join(tree, f"c{copy}", os.path.relpath(path, opts.corpus))
                        os.makedirs(os.path.dirname(dst), exist_ok=True)
                        os.link(path, dst)
                elapsed, _, _ = run_cli(amplint_cmd("--no-cache", tree))
                times.append(elapsed)
                print(f"scaling {factor}x corpus: {elapsed:8.2f} s  ({elapsed / times[0]:.2f}x the 1x time)")
        finally:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
