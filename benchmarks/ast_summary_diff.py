"""The `ast` summaries against LibCST's on whole trees: for every .py file the project pass
would summarise on demand from `ast` (`needs_summary(text)` False), both summaries are made
and compared. Prints files, refused %, unequal (must be 0) and the CPU seconds of each path.

    python benchmarks/ast_summary_diff.py DIR... [--show N] [--reasons]
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


def diff(paths, show: int = 5, out=sys.stdout):
    counts = collections.Counter()
    reasons = collections.Counter()
    unequal = []
    cpu = {"ast": 0.0, "libcst": 0.0}
    for path in python_files(paths):
        try:
            text = read_source(path).text
        except ReadError:
            continue
        if needs_summary(text) or large_files.split(text) is not None:
            counts["first pass (LibCST)"] += 1
            continue
        counts["files"] += 1
        start = time.process_time()
        fast = ast_summary(path, text)
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
    print(f"files summarised on demand: {counts['files']} (first-pass files skipped: "
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
    args = parser.parse_args(argv)
    _, unequal, _ = diff(args.paths, args.show)
    return 1 if unequal else 0


if __name__ == "__main__":
    sys.exit(main())
