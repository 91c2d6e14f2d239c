"""Scores amplint's call graph (`amplint --call-graph`) against PyCG's micro-benchmark, side by side
with PyCG 0.0.8 itself, in one run.

    python benchmarks/callgraph.py --suite /tmp/pycg-suite/micro-benchmark
    python benchmarks/callgraph.py --suite DIR --pycg-python /tmp/pycgvenv/bin/python -v

The suite: `micro-benchmark/` of the public repository vitsalis/PyCG (119 small programs, each with a
ground-truth `callgraph.json`); read from a local copy, never committed here. Scored edges are those
between functions the snippet defines: both ends inside a module of the snippet's own files
(calls to builtins and to modules outside the snippet are left out, for both tools alike).

PyCG runs in its own environment, as its micro-benchmark harness runs it (entry point `main.py`,
package the snippet's folder): `pip install pycg==0.0.8` there, and, because the wheel installs the
package as `PyCG` while its code imports `pycg`, link `pycg` -> `PyCG` in that site-packages.
Prints per-category recall and precision for both tools, and the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amplint.analysis.project.callgraph import build, call_graph, module_files  # noqa: E402

Edge = Tuple[str, str]


def snippets(suite: str) -> List[Tuple[str, str]]:
    root = os.path.join(suite, "snippets") if os.path.isdir(os.path.join(suite, "snippets")) else suite
    out = []
    for category in sorted(os.listdir(root)):
        folder = os.path.join(root, category)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isfile(os.path.join(path, "callgraph.json")):
                out.append((category, path))
    return out


def edges(graph: Dict[str, List[str]], modules: Set[str]) -> Set[Edge]:
    def inside(name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[:i]) in modules for i in range(1, len(parts) + 1))
    return {(a, b) for a, callees in graph.items() for b in callees if inside(a) and inside(b)}


def run_pycg(python: str, snippet: str) -> Optional[Dict[str, List[str]]]:
    proc = subprocess.run([python, "-m", "pycg", "--package", snippet, os.path.join(snippet, "main.py")],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def ratio(num: int, den: int) -> str:
    return "%.3f" % (num / den) if den else "  -  "


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True, help="the micro-benchmark folder of a PyCG checkout")
    parser.add_argument("--pycg-python", default=None, help="a Python with pycg 0.0.8 installed (skip if absent)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list amplint's missed and extra edges")
    args = parser.parse_args()

    tools = ["amplint"] + (["pycg"] if args.pycg_python else [])
    counts: Dict[Tuple[str, str], List[int]] = {}
    failures: List[str] = []
    for category, path in snippets(args.suite):
        modules = {name for _, name, _ in module_files([path])}
        with open(os.path.join(path, "callgraph.json")) as handle:
            truth = edges(json.load(handle), modules)
        outputs = {"amplint": call_graph(build([path]))}
        if args.pycg_python:
            outputs["pycg"] = run_pycg(args.pycg_python, path)
        for tool in tools:
            graph = outputs[tool]
            if graph is None:
                failures.append("%s failed on %s" % (tool, path))
                graph = {}
            got = edges(graph, modules)
            row = counts.setdefault((tool, category), [0, 0, 0])
            row[0] += len(got & truth)
            row[1] += len(got - truth)
            row[2] += len(truth - got)
            if args.verbose and tool == "amplint" and got != truth:
                rel = os.path.relpath(path, args.suite)
                for a, b in sorted(truth - got):
                    print("  missed %s: %s -> %s" % (rel, a, b))
                for a, b in sorted(got - truth):
                    print("  extra  %s: %s -> %s" % (rel, a, b))

    categories = sorted({c for _, c in counts})
    head = "%-14s %5s" % ("category", "edges")
    for tool in tools:
        head += "  %8s rec  %8s prec" % (tool, tool)
    print(head)
    totals = {tool: [0, 0, 0] for tool in tools}
    for category in categories:
        line = "%-14s %5d" % (category, sum(counts[("amplint", category)][i] for i in (0, 2)))
        for tool in tools:
            tp, fp, fn = counts[(tool, category)]
            totals[tool] = [t + x for t, x in zip(totals[tool], (tp, fp, fn))]
            line += "  %12s  %13s" % (ratio(tp, tp + fn), ratio(tp, tp + fp))
        print(line)
    line = "%-14s %5d" % ("TOTAL", sum(totals["amplint"][i] for i in (0, 2)))
    for tool in tools:
        tp, fp, fn = totals[tool]
        line += "  %12s  %13s" % (ratio(tp, tp + fn), ratio(tp, tp + fp))
    print(line)
    for tool in tools:
        tp, fp, fn = totals[tool]
        print("%s: %d true, %d extra, %d missed" % (tool, tp, fp, fn))
    for failure in failures:
        print(failure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
