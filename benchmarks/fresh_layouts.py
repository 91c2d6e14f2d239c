"""Generalisation benchmark for the project flow (issue 26): realistic multi-file projects written
without amplint's project code in view, each imitating the layout of a named public repository,
each with exactly one labelled hazard that a region reaches only across files through a value
construct (a callback, a partial, a factory, a registry string, a container, a wrapper, ...), and a
clean twin (the same files with the hazard fixed) that must stay silent.

    python benchmarks/fresh_layouts.py            # value-flow off and on, side by side
    python benchmarks/fresh_layouts.py -v         # also every finding
    python benchmarks/fresh_layouts.py -k nanogpt
    python benchmarks/fresh_layouts.py --data benchmarks/fresh_layouts_b   # the second blind set
    python benchmarks/fresh_layouts.py --data benchmarks/fresh_layouts_c   # the third blind set (round 6)
    python benchmarks/fresh_layouts.py --data benchmarks/fresh_layouts_d   # the fourth blind set (round 8)
    python benchmarks/fresh_layouts.py --data benchmarks/fresh_layouts_e   # the fifth blind set (round 9)

Data: benchmarks/fresh_layouts/*.txt, our own code. Each file holds a header
(`# imitates:`, `# construct:`, one or more `# fix: OLD => NEW` applied to make the twin), then the
project's files, each after a `### relative/path` line. The hazard line carries `# HAZARD CODE`.
Each project runs through the CLI (`amplint --no-cache --exit-zero --output-format json -j 1`),
once as it is (value-flow off: the default) and once with a pyproject.toml saying
`[tool.amplint] value-flow = true` (added to the project's own `[tool.amplint]` table when it ships a
pyproject.toml with one, e.g. for `autocast-modules`); the twin likewise. Precision counts every finding: a finding
other than the label, in the project or its twin, is a false positive (AMP130, the deprecated-API
rule, is not counted: it is per-file text and true wherever it fires). CPU is the child's
user+sys (getrusage), which includes the interpreter's start: compare the two columns, not the
absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from typing import Dict, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "fresh_layouts")
ROOT = os.path.dirname(HERE)
ON = "[tool.amplint]\nvalue-flow = true\n"
# AMP130 (a deprecated API, e.g. yolov5's torch.cuda.amp.autocast) is per-file text, true wherever it
# fires, and no question of the flow: not counted
IGNORED = {"AMP130"}
Label = Tuple[str, int, str]


def parse(text: str):
    meta: Dict[str, List[str]] = {}
    files: Dict[str, List[str]] = {}
    current = None
    for line in text.splitlines(keepends=True):
        if line.startswith("### "):
            current = line[4:].strip()
            files[current] = []
        elif current is None:
            m = re.match(r"# (\w+): (.*)", line)
            if m:
                meta.setdefault(m.group(1), []).append(m.group(2).rstrip("\n"))
        else:
            files[current].append(line)
    return meta, {path: "".join(lines) for path, lines in files.items()}


def labels(files: Dict[str, str]) -> Set[Label]:
    out = set()
    for path, text in files.items():
        for number, line in enumerate(text.splitlines(), 1):
            m = re.search(r"# HAZARD (AMP\d+)", line)
            if m:
                out.add((path, number, m.group(1)))
    return out


def twin(files: Dict[str, str], fixes: List[str]) -> Dict[str, str]:
    out = dict(files)
    for fix in fixes:
        old, new = (part.strip() for part in fix.split(" => ", 1))
        hits = [path for path, text in out.items() if old in text]
        if len(hits) != 1 or out[hits[0]].count(old) != 1:
            raise SystemExit(f"fix {old!r}: found {len(hits)} files / not exactly once")
        out[hits[0]] = out[hits[0]].replace(old, new)
    return out


def write(root: str, files: Dict[str, str], value_flow: bool) -> None:
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as handle:
            handle.write(text)
    if value_flow:
        own = files.get("pyproject.toml", "")
        if "[tool.amplint]\n" in own:
            text = own.replace("[tool.amplint]\n", ON, 1)
        else:
            text = own + ("\n" if own else "") + ON
        with open(os.path.join(root, "pyproject.toml"), "w") as handle:
            handle.write(text)


def lint(root: str) -> Tuple[Set[Label], float, List[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "amplint", "--no-cache", "--exit-zero", "--output-format", "json", "-j", "1", "."],
        cwd=root, capture_output=True, text=True, env=env,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        items = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"{root}: amplint gave no JSON: {proc.stderr[-2000:]}")
    found, text = set(), []
    for item in items:
        if item["code"] in IGNORED:
            continue
        path = os.path.relpath(os.path.join(root, item["filename"]), root) if not os.path.isabs(item["filename"]) \
            else os.path.relpath(item["filename"], root)
        row = item.get("location", {}).get("row") or item.get("line")
        found.add((path, row, item["code"]))
        text.append(f"{path}:{row}: {item['code']} {item['message']}")
    return found, cpu, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only projects whose name contains this")
    parser.add_argument("-v", action="store_true", help="print every finding")
    parser.add_argument("--data", default=DATA, help="folder of project .txt files (default: %(default)s)")
    args = parser.parse_args()
    data = args.data
    names = sorted(n[:-4] for n in os.listdir(data) if n.endswith(".txt") and args.k in n)
    totals = {False: [0, 0, 0, 0.0], True: [0, 0, 0, 0.0]}  # true positives, false positives, labels, cpu
    print(f"{'project':24} {'construct':58} {'off':>5} {'on':>5}  {'cpu off':>7} {'cpu on':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            with open(os.path.join(data, name + ".txt")) as handle:
                meta, files = parse(handle.read())
            want = labels(files)
            assert len(want) == 1, f"{name}: {len(want)} labels"
            clean = twin(files, meta.get("fix", []))
            cells = {}
            for value_flow in (False, True):
                tag = "on" if value_flow else "off"
                got, cpu, text = set(), 0.0, []
                for kind, source in (("hazard", files), ("twin", clean)):
                    root = os.path.join(tmp, name, tag, kind)
                    write(root, source, value_flow)
                    found, seconds, lines = lint(root)
                    cpu += seconds
                    if kind == "hazard":
                        got |= found
                        tp = len(found & want)
                        fp = len(found - want)
                    else:
                        fp += len(found)
                    text += [f"  [{tag} {kind}] {line}" for line in lines]
                t = totals[value_flow]
                t[0] += tp
                t[1] += fp
                t[2] += len(want)
                t[3] += cpu
                cells[value_flow] = (f"{tp}/{len(want)}" + (f"+{fp}fp" if fp else ""), cpu, text)
            construct = (meta.get("construct", ["?"])[0])[:58]
            print(f"{name:24} {construct:58} {cells[False][0]:>5} {cells[True][0]:>5}  "
                  f"{cells[False][1]:7.2f} {cells[True][1]:7.2f}")
            if args.v:
                want_s = ", ".join(f"{p}:{line}:{c}" for p, line, c in sorted(want))
                print(f"  label {want_s}  ({meta.get('imitates', ['?'])[0]})")
                for line in cells[False][2] + cells[True][2]:
                    print(line)
    print()
    for value_flow in (False, True):
        tp, fp, n, cpu = totals[value_flow]
        precision = tp / (tp + fp) if tp + fp else 1.0
        print(f"value-flow {'on ' if value_flow else 'off'}: recall {tp}/{n} = {tp / n:.2f}, "
              f"precision {precision:.2f} ({fp} false positives), CPU {cpu:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
