"""CPU of each LibCST escape walk (facts/escape.py EscapeAnalysis), dtype walk
(facts/dtypes.py DtypeFacts) and FileFacts (facts/__init__.py) the project pass makes, per file, with the entry module that asked
for it: runs the CLI (its arguments after the script's) on whichever amplint is on PYTHONPATH
and prints one `@@` line per walk to stderr, then the totals. A dtype walk that an escape walk
builds is counted in both (the escape walk's CPU includes it). Walks of the first, per-file
pass are not counted.

    cd /tmp && PYTHONPATH=<snapshot> python benchmarks/pass_walks.py --exit-zero --jobs 1 \
        --no-cache --config rv.toml TREE 2>&1 >/dev/null | grep @@
"""

from __future__ import annotations

import collections
import sys
import time
import traceback

import amplint.analysis.facts as file_facts
import amplint.analysis.facts.dtypes as dtypes
import amplint.analysis.facts.escape as escape
import amplint.run.project_inputs as project_inputs
import amplint.run.runner as runner

_in_pass = [False]
_walks = []  # (kind, CPU s, characters of the module, the asking project modules)


def _timed(cls, kind: str) -> None:
    inner = cls.__init__

    def init(self, facts, *args, **kwargs):  # (FileFacts: the module)
        if not _in_pass[0]:
            return inner(self, facts, *args, **kwargs)
        began = time.process_time()
        try:
            return inner(self, facts, *args, **kwargs)
        finally:
            spent = time.process_time() - began
            stack = [f"{f.filename.split('/amplint/')[-1]}:{f.lineno}:{f.name}"
                     for f in traceback.extract_stack()[:-1]
                     if "/amplint/" in f.filename and "/facts/" not in f.filename][-3:]
            module = facts if kind == "facts" else facts.module
            _walks.append((kind, spent, len(module.code), " < ".join(reversed(stack))))

    cls.__init__ = init


def _in_project_pass(inner):
    def run(*args, **kwargs):
        _in_pass[0] = True
        try:
            return inner(*args, **kwargs)
        finally:
            _in_pass[0] = False
    return run


def main() -> None:
    _timed(escape.EscapeAnalysis, "escape")
    _timed(dtypes.DtypeFacts, "dtypes")
    _timed(file_facts.FileFacts, "facts")
    runner.project_entries = project_inputs.project_entries = _in_project_pass(project_inputs.project_entries)
    from amplint.cli.main import main as cli

    sys.argv = ["amplint"] + sys.argv[1:]
    try:
        cli()
    finally:
        total = collections.Counter()
        for kind, spent, size, asked_by in _walks:
            total[kind] += spent
            print(f"@@ {kind:7} {spent:6.3f} {size:8d} {asked_by}", file=sys.stderr)
        print("@@ total " + " ".join(f"{k} {v:.3f}" for k, v in sorted(total.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
