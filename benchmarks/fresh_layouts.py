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
rule, is not counted: it is per-file text and true wherever it fires). Two figures: strict (a
finding of the label's code at the labelled path:line; the score of every round before 38) and
chain (also a finding of the label's code whose message cites the labelled path:line as the other
end of its cross-file or cross-function chain: "called at train.py:11", "(at optimizer.py:44,
through this call)", "(line 12, through this call)" in the labelled file; the labels sit on either
end, imagen's on the call, parlai's in the callee). CPU is the child's
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
from typing import Dict, Iterable, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "fresh_layouts")
ROOT = os.path.dirname(HERE)
ON = "[tool.amplint]\nvalue-flow = true\n"
# AMP130 (a deprecated API, e.g. yolov5's torch.cuda.amp.autocast) is per-file text, true wherever it
# fires, and no question of the flow: not counted
IGNORED = {"AMP130"}
Label = Tuple[str, int, str]
Finding = Tuple[str, int, str, Tuple[str, ...]]  # path, line, code, the messages of the findings there
_PATH = r"(?P<path>[\w./\\-]+\.pyi?)"
# the other end of a chain, as the messages cite it: another file's ...
_CITED_FILE = [re.compile(p) for p in (
    r"\bcalled at " + _PATH + r":(?P<line>\d+)",  # a region reached through a call
    _PATH + r":(?P<line>\d+), through (?:this call|the call)",  # an event composed into a call
    r"\bthrough the call at " + _PATH + r":(?P<line>\d+)",
)]
# ... and the same file's
_CITED_LINE = [re.compile(p) for p in (
    r"\bcalled at line (?P<line>\d+)",
    r"\bline (?P<line>\d+), through (?:this call|the call)",
    r"\bthrough the call at line (?P<line>\d+)",
)]


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


def chain_ends(path: str, message: str, paths: Iterable[str] = ()) -> Set[Tuple[str, int]]:
    """The places a finding at `path` names as the other end of its chain. A message cites a file
    relative to the folder holding all the project's files (parlai/core/torch_agent.py is
    "core/torch_agent.py" when every file is under parlai/): a cited path that is not one of
    `paths` (the project's files) stands for the one file of `paths` it ends, if exactly one."""
    out = set()
    for pattern in _CITED_FILE:
        out |= {(_locate(os.path.normpath(m.group("path")), paths), int(m.group("line")))
                for m in pattern.finditer(message)}
    for pattern in _CITED_LINE:
        out |= {(path, int(m.group("line"))) for m in pattern.finditer(message)}
    return out


def _locate(cited: str, paths: Iterable[str]) -> str:
    known = {os.path.normpath(p) for p in paths}
    if cited in known:
        return cited
    ends = [p for p in known if p.endswith(os.sep + cited)]
    return ends[0] if len(ends) == 1 else cited


def matches(finding: Finding, label: Label, chain: bool, paths: Iterable[str] = ()) -> bool:
    path, line, code, messages = finding
    if code != label[2]:
        return False
    if (path, line) == label[:2]:
        return True
    end = (os.path.normpath(label[0]), label[1])
    return chain and any(end in chain_ends(path, message, paths) for message in messages)


def score(found: List[Finding], want: Set[Label], chain: bool, paths: Iterable[str] = ()) -> Tuple[int, int]:
    """(labels found, false positives): strict counts a finding at the label only, chain also one
    whose message cites the label as the other end of its chain; every other finding is false.
    `paths`: the project's files (to place the paths messages cite)."""
    tp = sum(any(matches(f, label, chain, paths) for f in found) for label in want)
    fp = sum(not any(matches(f, label, chain, paths) for label in want) for f in found)
    return tp, fp


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


def lint(root: str) -> Tuple[List[Finding], float, List[str]]:
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
    found: Dict[Tuple[str, int, str], List[str]] = {}
    text = []
    for item in items:
        if item["code"] in IGNORED:
            continue
        path = os.path.relpath(os.path.join(root, item["filename"]), root) if not os.path.isabs(item["filename"]) \
            else os.path.relpath(item["filename"], root)
        row = item.get("location", {}).get("row") or item.get("line")
        found.setdefault((path, row, item["code"]), []).append(item["message"])
        text.append(f"{path}:{row}: {item['code']} {item['message']}")
    return [(path, row, code, tuple(said)) for (path, row, code), said in found.items()], cpu, text


def summary(tp: int, fp: int, n: int) -> str:
    precision = tp / (tp + fp) if tp + fp else 1.0
    return f"recall {tp}/{n} = {tp / n:.2f}, precision {precision:.2f} ({fp} false positives)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only projects whose name contains this")
    parser.add_argument("-v", action="store_true", help="print every finding")
    parser.add_argument("--data", default=DATA, help="folder of project .txt files (default: %(default)s)")
    args = parser.parse_args()
    data = args.data
    names = sorted(n[:-4] for n in os.listdir(data) if n.endswith(".txt") and args.k in n)
    # per value-flow setting: [strict labels found, strict false positives, chain labels found,
    # chain false positives, labels, cpu]
    totals = {False: [0, 0, 0, 0, 0, 0.0], True: [0, 0, 0, 0, 0, 0.0]}
    print(f"{'project':24} {'construct':58} {'off':>7} {'on':>7}  {'chain off':>9} {'chain on':>9}  "
          f"{'cpu off':>7} {'cpu on':>7}")
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
                cpu, text = 0.0, []
                counts = [0, 0, 0, 0]  # strict tp, strict fp, chain tp, chain fp
                for kind, source in (("hazard", files), ("twin", clean)):
                    root = os.path.join(tmp, name, tag, kind)
                    write(root, source, value_flow)
                    found, seconds, lines = lint(root)
                    cpu += seconds
                    expected = want if kind == "hazard" else set()
                    for at, chain in ((0, False), (2, True)):
                        tp, fp = score(found, expected, chain, source)
                        counts[at] += tp
                        counts[at + 1] += fp
                    text += [f"  [{tag} {kind}] {line}" for line in lines]
                t = totals[value_flow]
                for at in range(4):
                    t[at] += counts[at]
                t[4] += len(want)
                t[5] += cpu
                shown = [f"{counts[at]}/{len(want)}" + (f"+{counts[at + 1]}fp" if counts[at + 1] else "")
                         for at in (0, 2)]
                cells[value_flow] = (shown[0], shown[1], cpu, text)
            construct = (meta.get("construct", ["?"])[0])[:58]
            print(f"{name:24} {construct:58} {cells[False][0]:>7} {cells[True][0]:>7}  "
                  f"{cells[False][1]:>9} {cells[True][1]:>9}  {cells[False][2]:7.2f} {cells[True][2]:7.2f}")
            if args.v:
                want_s = ", ".join(f"{p}:{line}:{c}" for p, line, c in sorted(want))
                print(f"  label {want_s}  ({meta.get('imitates', ['?'])[0]})")
                for line in cells[False][3] + cells[True][3]:
                    print(line)
    print()
    for value_flow in (False, True):
        tp, fp, chain_tp, chain_fp, n, cpu = totals[value_flow]
        print(f"value-flow {'on ' if value_flow else 'off'}: {summary(tp, fp, n)}; "
              f"chain {summary(chain_tp, chain_fp, n)}, CPU {cpu:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
