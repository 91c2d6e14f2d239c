"""The `ast` summaries against LibCST's on whole trees: for every .py file the project pass
would summarise on demand from `ast` (`needs_summary(text)` False), and every first-pass file
the first pass may summarise from `ast` (first_pass_ast: no region, no setting), both
summaries are made and compared. Prints files, refused %, unequal (must be 0) and the CPU
seconds of each path. `--first-pass-only`: only the first-pass files.

    python benchmarks/ast_summary_diff.py DIR... [--show N] [--first-pass-only]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

from amplint.analysis import large_files
from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.project import needs_summary
from amplint.analysis.project.ast_summary import Refusal, ast_summary
from amplint.analysis.project.first_pass_ast import ast_first_pass, framework_call
from amplint.analysis.project.summary import portable_summary
from amplint.workspace.files import ReadError, read_source


def libcst_summary(path: str, text: str):
    try:
        module = parse(text)
        return portable_summary(path, text, module, FileFacts(module))
    except Exception:  # as summarize_file: unparsable or an analysis bug -> None
        return None


def python_files(roots):
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(".py"):
                    yield os.path.join(directory, name)


def diff(paths, show: int = 5, out=sys.stdout, first_pass_only: bool = False):
    counts = collections.Counter()
    reasons = collections.Counter()
    unequal = []
    cpu = {"ast": 0.0, "libcst": 0.0}
    for path in python_files(paths):
        try:
            text = read_source(path).text
        except ReadError:
            continue
        if large_files.split(text) is not None:
            counts["first pass (LibCST)"] += 1
            continue
        first = needs_summary(text)
        if first:
            if not ast_first_pass(text):
                counts["first pass (LibCST)"] += 1
                continue
            counts["first pass (ast)"] += 1
        elif first_pass_only:
            continue
        counts["files"] += 1
        start = time.process_time()
        fast = ast_summary(path, text, check=framework_call if first else None)  # as per_file does
        cpu["ast"] += time.process_time() - start
        start = time.process_time()
        slow = libcst_summary(path, text)
        cpu["libcst"] += time.process_time() - start
        if isinstance(fast, Refusal):
            counts["refused"] += 1
            reasons[fast.reason] += 1
        elif fast != slow:
            unequal.append(path)
    files = counts["files"] or 1
    print(f"files summarised from ast: {counts['files']} (of them first-pass files: "
          f"{counts['first pass (ast)']}; first-pass files skipped: "
          f"{counts['first pass (LibCST)']})", file=out)
    print(f"refused: {counts['refused']} ({100 * counts['refused'] / files:.1f} %)", file=out)
    print(f"unequal: {len(unequal)}", file=out)
    print(f"CPU s: ast path {cpu['ast']:.2f} (refusals included), LibCST path {cpu['libcst']:.2f}, "
          f"ratio {cpu['libcst'] / max(cpu['ast'], 1e-9):.1f}x", file=out)
    for reason, count in reasons.most_common():
        print(f"  refused {count:5d}: {reason}", file=out)
    for path in unequal[:show]:
        print(f"  UNEQUAL {path}", file=out)
    return counts, unequal, cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--show", type=int, default=10, help="unequal files to name")
    parser.add_argument("--first-pass-only", action="store_true",
                        help="compare only the first-pass files the first pass may summarise from ast")
    args = parser.parse_args(argv)
    _, unequal, _ = diff(args.paths, args.show, first_pass_only=args.first_pass_only)
    return 1 if unequal else 0


if __name__ == "__main__":
    sys.exit(main())
