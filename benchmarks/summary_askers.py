"""The project pass's on-demand summaries in one cold `-j 1` run of the CLI: for each file the
pass summarises beyond the first pass's, the CPU of its summary, the question that asked for it
(the caller of ProjectFacts.summarise), and the readers that took it from `project.summaries`
afterwards (`get` / `[]`; loops over every summary are not seen). A summary that only the
asker and the may-run-under-autocast probe read is one a cheaper reading could have answered.

    python benchmarks/summary_askers.py [--rows N] --no-cache -j 1 --exit-zero [CLI ARGS] TREE
"""

from __future__ import annotations

import collections
import sys
import time
import traceback

import amplint.analysis.project as project_package
import amplint.run.project_inputs as project_inputs
import amplint.run.runner as runner

PROBES = ("may_run_under_autocast",)  # a probe for regions: an on-demand summary has none

asked_by = {}  # path -> its asker
spent = {}  # path -> CPU of its summary
readers = collections.defaultdict(collections.Counter)  # path -> reader -> reads


def _caller(depth: int = 2) -> str:
    frames = [f for f in traceback.extract_stack()[:-depth]
              if "/amplint/" in f.filename and not f.filename.endswith("project/__init__.py")]
    return " < ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.name}" for f in frames[-1:-3:-1])


class _Watched(dict):
    def __getitem__(self, path):
        if path in asked_by:
            readers[path][_caller()] += 1
        return dict.__getitem__(self, path)

    def get(self, path, default=None):
        if path in asked_by:
            readers[path][_caller()] += 1
        return dict.get(self, path, default)


def main() -> None:
    rows = 12
    if sys.argv[1:2] == ["--rows"]:
        rows = int(sys.argv[2])
        del sys.argv[1:3]
    init = project_package.ProjectFacts.__init__

    def watched_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.summaries = _Watched(self.summaries)
    project_package.ProjectFacts.__init__ = watched_init
    summarise = project_package.ProjectFacts.summarise

    def logged_summarise(self, paths):
        paths = list(paths)
        missing = [p for p in paths if p not in self.summaries]
        asker = _caller()
        summarise(self, paths)
        for path in missing:
            asked_by.setdefault(path, asker)
    project_package.ProjectFacts.summarise = logged_summarise
    summarize_file = project_inputs.summarize_file

    def timed(path):
        begin = time.process_time()
        try:
            return summarize_file(path)
        finally:
            spent[path] = time.process_time() - begin
    project_inputs.summarize_file = timed
    runner.project_entries = project_inputs.project_entries
    from amplint.cli.main import main as cli
    sys.argv = ["amplint"] + sys.argv[1:]
    try:
        cli()
    finally:
        _report(rows)


def _report(rows: int) -> None:
    by_asker = collections.defaultdict(lambda: [0, 0.0])
    only = [0, 0.0]
    for path, asker in asked_by.items():
        by_asker[asker][0] += 1
        by_asker[asker][1] += spent.get(path, 0.0)
        later = [r for r in readers[path] if r != asker and not any(p in r for p in PROBES)]
        if all(asker.split(" < ")[0] in r for r in later):
            only[0] += 1
            only[1] += spent.get(path, 0.0)
    total = sum(spent.get(p, 0.0) for p in asked_by)
    print(f"on-demand summaries {len(asked_by)} ({total:.2f} s); read only by their asker "
          f"and the region probe: {only[0]} ({only[1]:.2f} s)", file=sys.stderr)
    for asker, (count, cpu) in sorted(by_asker.items(), key=lambda kv: -kv[1][1])[:rows]:
        print(f"  {cpu:6.3f} s {count:4d}  {asker}", file=sys.stderr)


if __name__ == "__main__":
    main()
