"""How much of the project pass's share of a cold run is parsing alone (issue 34).

    python benchmarks/parse_floor.py TREE [TREE ...]
    python benchmarks/parse_floor.py --jobs 2 benchmarks/.monorepo/fairseq

For each tree, `amplint TREE --no-cache --exit-zero` and the same with `--isolated-files`, each
in a child process whose `ast.parse` and `libcst.parse_module` are counted (calls and CPU
seconds, in every process of the run: pool workers are forked from the patched process). It
prints the CPU of each run, the parses each made, and two shares:

  * share: 1 - isolated/full, in CPU seconds of all processes (issue 34's target: <= 20 %);
  * parse share: the full run's extra parsing (its parse CPU minus the isolated run's) over the
    full run's CPU. A project pass that reads a file must parse it, so this is what the share
    cannot go below unless the pass reads fewer files (or parses them more cheaply) — the
    rest of the share is summarising, propagating and linting with entries.

Run amplint from a byte-compiled copy (`--amplint DIR`, default: this checkout) so that the
compilation of its own modules is not counted; the numbers are CPU seconds, so other load on
the machine moves them less than wall time, but compare runs taken side by side.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# the child: patches the two parsers (before amplint imports them), logs one line a call
CHILD = r"""
import ast, os, sys, time, libcst
log = open(sys.argv[1], "a", buffering=1)
def counted(module, name, kind):
    real = getattr(module, name)
    def parse(source, *args, **kwargs):
        start = time.process_time()
        try:
            return real(source, *args, **kwargs)
        finally:
            log.write(f"{kind} {time.process_time() - start:.6f}\n")
    setattr(module, name, parse)
counted(ast, "parse", "ast")
counted(libcst, "parse_module", "libcst")
sys.argv = ["amplint"] + sys.argv[2:]
from amplint.cli.main import main
try:
    main()
except SystemExit:
    pass
"""


def measured(amplint_dir: str, tree: str, jobs: int, isolated: bool):
    """(CPU seconds of every process of the run, {parser: (calls, CPU seconds)})."""
    with tempfile.TemporaryDirectory() as scratch:
        log = os.path.join(scratch, "parses.log")
        args = [sys.executable, "-c", CHILD, log, tree, "--no-cache", "--exit-zero", "-j", str(jobs)]
        if isolated:
            args.append("--isolated-files")
        env = dict(os.environ, PYTHONPATH=amplint_dir)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(args, env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        calls, seconds = collections.Counter(), collections.Counter()
        with open(log) as lines:
            for line in lines:
                kind, spent = line.split()
                calls[kind] += 1
                seconds[kind] += float(spent)
    return cpu, {kind: (calls[kind], seconds[kind]) for kind in ("ast", "libcst")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--amplint", default=ROOT, metavar="DIR",
                        help="the folder that holds the amplint package to run (a byte-compiled copy)")
    args = parser.parse_args()
    print(f"{'tree':<14} {'run':<9} {'CPU s':>6}  {'ast parses':>16}  {'LibCST parses':>16}")
    for tree in args.trees:
        name = os.path.basename(os.path.normpath(tree))
        runs = {}
        for isolated in (False, True):
            cpu, parses = runs[isolated] = measured(args.amplint, os.path.abspath(tree), args.jobs, isolated)
            shown = "  ".join(f"{calls:5d} in {seconds:5.2f} s" for calls, seconds in parses.values())
            print(f"{name:<14} {'isolated' if isolated else 'full':<9} {cpu:6.2f}  {shown}")
        (full, full_parses), (alone, alone_parses) = runs[False], runs[True]
        extra_parse = sum(s for _, s in full_parses.values()) - sum(s for _, s in alone_parses.values())
        print(f"{name:<14} share {1 - alone / full:5.0%}, of it parsing alone {extra_parse / full:5.0%}"
              f" ({extra_parse:.2f} of {full - alone:.2f} extra CPU s)")


if __name__ == "__main__":
    main()
