"""Crash sweep over whole real repositories: lint, then `--fix --unsafe-fixes`, per repository.

    python benchmarks/crash_sweep.py [--packages NAME ...] [--extra DIR ...] [--inject]

Downloads the source of each registry package (`pip download --no-deps`, wheel or sdist) into
benchmarks/.corpus/sweep/ (git-ignored, never committed), unpacks its `.py` files as one tree
per package, and runs benchmarks/fix_corpus.py on each tree as a whole (the project pass sees
the whole repository, as `amplint .` would). `--extra DIR` adds local trees, e.g. fetched
training repositories. It prints one row per tree: files, crashes (tracebacks, exit codes
other than 0/1, internal errors, rejected fixes), broken files, non-idempotent files, and
changes outside the fixed regions. Every one of these must be 0; the exit status is 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from corpus import tree_for  # noqa: E402

PACKAGES = ["transformers", "timm", "lightning", "fairseq==0.12.2", "mmdet==2.28.2",
            "accelerate", "diffusers", "torchvision"]
COLUMNS = ("crash", "broken", "non-idempotent", "mismatch", "outside", "ast-outside")


def sweep(tree: str, inject: bool) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report_path = handle.name
    command = [sys.executable, os.path.join(HERE, "fix_corpus.py"), tree, "--json", report_path]
    if inject:
        command.append("--inject")
    proc = subprocess.run(command, capture_output=True, text=True)
    try:
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, ValueError):
        report = {"error": proc.stderr[-2000:]}
    finally:
        os.unlink(report_path)
    report["exit"] = proc.returncode
    return report


def count(report: dict, key: str) -> int:
    if key == "crash":
        return len(report.get("crashes", []))
    return report.get("counts", {}).get(key, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="*", default=PACKAGES)
    parser.add_argument("--extra", nargs="*", default=[], help="local trees to sweep as well")
    parser.add_argument("--inject", action="store_true", help="plant hazards (fix_corpus --inject)")
    parser.add_argument("--json", metavar="FILE", help="write every tree's report")
    args = parser.parse_args()
    trees = [(spec.split("==")[0], tree_for(spec)) for spec in args.packages]
    trees += [(os.path.basename(os.path.normpath(d)), d) for d in args.extra]
    print(f"{'tree':<16}{'files':>7}" + "".join(f"{c:>16}" for c in COLUMNS) + f"{'seconds':>9}")
    reports, bad = {}, False
    for name, tree in trees:
        report = sweep(tree, args.inject)
        reports[name] = report
        if "error" in report:
            print(f"{name:<16} failed to run: {report['error'][-300:]}")
            bad = True
            continue
        row = [count(report, c) for c in COLUMNS]
        bad = bad or any(row)
        seconds = sum(report.get("seconds", {}).values())
        print(f"{name:<16}{report.get('files', 0):>7}" + "".join(f"{n:>16}" for n in row)
              + f"{seconds:>9.0f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(reports, handle, indent=2)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
