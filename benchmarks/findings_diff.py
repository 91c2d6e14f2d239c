"""What a change does to the findings on real trees: every finding that one amplint checkout
reports and another does not, per tree, to read before a change lands ("read every new finding
on real code").

    python benchmarks/findings_diff.py --baseline /tmp/base TREE [TREE ...]
    python benchmarks/findings_diff.py --baseline /tmp/base --current /tmp/head TREE ...
    python benchmarks/findings_diff.py --baseline /tmp/base --baseline-cache /tmp/base-findings TREE ...

Each tree is linted whole (`--no-cache`, its own project pass) by both checkouts (each put on
PYTHONPATH, so a snapshot made with `git archive REV | tar -x -C DIR` works as well as a
worktree), and the findings are compared by (file, line, column, code, message). The trees
are local folders: fetched repositories or `pip download --no-deps` packages (nothing of theirs
is committed). Exit status: 0 when every tree has the same findings, 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
Finding = Tuple[str, int, int, str, str]


def findings(checkout: str, tree: str, jobs: int) -> Tuple[Set[Finding], List[str]]:
    """The findings of `checkout` on `tree`, and the files it could not check (errors)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    out = subprocess.run(
        [sys.executable, "-m", "amplint", "--no-cache", "--jobs", str(jobs), "--exit-zero",
         "--output-format", "json", "."],
        cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{checkout} on {tree}: exit {out.returncode}: {out.stderr.strip()[-500:]}")
    found, errors = set(), []
    for item in json.loads(out.stdout or "[]"):
        if item.get("code"):
            found.add((item.get("filename", ""), item.get("line", 0), item.get("column", 0),
                       item["code"], item.get("message", "")))
        else:
            errors.append(f"{item.get('filename', '')}: {item.get('message', '')}")
    return found, errors


def cached_findings(checkout: str, tree: str, jobs: int, cache: str) -> Set[Finding]:
    """The baseline's findings on `tree`, read from `cache` when an earlier run stored them (a
    fixed baseline snapshot gives the same findings every time; several branches diffed against
    it then lint each tree once, not once per branch)."""
    if not cache:
        return findings(checkout, tree, jobs)[0]
    os.makedirs(cache, exist_ok=True)
    key = os.path.abspath(tree).strip(os.sep).replace(os.sep, "+") + ".json"
    stored = os.path.join(cache, key)
    if os.path.exists(stored):
        with open(stored) as handle:
            return {tuple(row) for row in json.load(handle)}
    found = findings(checkout, tree, jobs)[0]
    with open(stored + ".tmp", "w") as handle:
        json.dump(sorted(found), handle)
    os.replace(stored + ".tmp", stored)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", metavar="TREE")
    parser.add_argument("--baseline", required=True, metavar="DIR", help="the amplint checkout to compare with")
    parser.add_argument("--current", default=os.path.dirname(HERE), metavar="DIR",
                        help="the amplint checkout under test (default: this one)")
    parser.add_argument("--baseline-cache", default="", metavar="DIR",
                        help="keep the baseline's findings per tree in DIR and reuse them (the baseline "
                             "must be a fixed snapshot)")
    parser.add_argument("--jobs", type=int, default=2)
    opts = parser.parse_args()
    differs = False
    for tree in opts.trees:
        before = cached_findings(opts.baseline, tree, opts.jobs, opts.baseline_cache)
        after, errors = findings(opts.current, tree, opts.jobs)
        added, lost = sorted(after - before), sorted(before - after)
        differs = differs or bool(added or lost)
        print(f"{os.path.basename(os.path.abspath(tree))}: {len(after)} findings "
              f"({len(added)} new, {len(lost)} gone){', %d not checked' % len(errors) if errors else ''}")
        for sign, rows in (("+", added), ("-", lost)):
            for path, line, column, code, message in rows:
                print(f"  {sign} {path}:{line}:{column}: {code} {message}")
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
