"""Which doors of the project pass ask the class flow its value questions, what each question
costs, and how many answers can reach an entry, in one cold `-j 1` run of the CLI.

A door is the step that asks a top-level (depth 0) `ClassValues.values` question: flow_seeds'
call targets, the half casts of `half_instances`, `halfspread.submodules` (every `self.x = ...`
store of each half class), the scaler protocol's `_value_target`, and so on (the first frame
outside the class flow's own modules). Per door: questions asked and distinct, CPU, values
computed, files parsed against the pass's parse budget (flowindex.py), and answers that hold a
project instance or container (the only ones `call_targets` and `modules_held` can use). Then
the questions asked again (by any door) and their CPU, the costliest questions, and for the
half classes: how many classes the questions of each door were the first to find (each is one
EntryHalf; a question whose answer finds none new still had to be asked to know it), and how
many of callback_sites' questions (classbinding `_bound`) found a call through a parameter.

    python benchmarks/flow_doors.py --no-cache -j 1 --exit-zero [CLI ARGS] TREE
"""

from __future__ import annotations

import collections
import sys
import time

import amplint.analysis.project.classbinding as classbinding
import amplint.analysis.project.classflow as classflow
import amplint.analysis.project.classvalues as classvalues
import amplint.run.runner  # noqa: F401  (loaded before the patches, as the CLI loads it)

halfspread = sys.modules["amplint.analysis.project.halfspread"]
_FLOW = ("classvalues", "classflow", "classbinding", "classcalls", "rebinding", "flowindex",
         "halfspread", "callback_sites", "flow_doors", "dataclass_fields", "string_classes")
door = ["-"]
callbacks = [0, 0, 0.0]  # callback_sites asked, answered with a site, CPU
asked: list = []  # (door, question, CPU, computed, parses, holds an instance, holds a container, classes)


def _asker() -> str:
    if door[-1] != "-":
        return door[-1]
    frame = sys._getframe(3)
    while frame is not None:
        name = frame.f_code.co_filename
        if "amplint" in name and not any(part in name for part in _FLOW):
            return f"{name.rsplit('/', 1)[-1][:-3]}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def _values(inner):
    def values(self, path, key, value, depth=0):
        if depth:
            return inner(self, path, key, value, depth)
        begin, parses, computed = time.process_time(), self._parses, self.computed
        found = inner(self, path, key, value, depth)
        classes = tuple(sorted((thing[1], thing[2]) for thing in found if thing[0] == "inst"))
        asked.append((_asker(), (path, key, value), time.process_time() - begin, self.computed - computed,
                      self._parses - parses, bool(classes), any(thing[0] == "tup" for thing in found), classes))
        return found
    return values


def _callback_sites(inner):
    def callback_sites(values, path, key, depth):
        begin = time.process_time()
        found = inner(values, path, key, depth)
        callbacks[0] += 1
        callbacks[1] += bool(found)
        callbacks[2] += time.process_time() - begin
        return found
    return callback_sites


def _door(owner, name: str, label: str) -> None:
    inner = getattr(owner, name)

    def wrapped(*args, **kwargs):
        door.append(label)
        try:
            return inner(*args, **kwargs)
        finally:
            door.pop()
    setattr(owner, name, wrapped)


def main() -> None:
    classvalues.ClassValues.values = _values(classvalues.ClassValues.values)
    classbinding.callback_sites = _callback_sites(classbinding.callback_sites)
    _door(classflow.ClassFlow, "half_instances", "half_instances.casts")
    _door(halfspread, "submodules", "halfspread.submodules")
    from amplint.cli.main import main as cli
    sys.argv = ["amplint"] + sys.argv[1:]
    try:
        cli()
    finally:
        _print()


def _print() -> None:
    out = sys.stderr
    doors: dict = collections.defaultdict(lambda: [0, set(), 0.0, 0, 0, 0, 0])
    for where, question, spent, computed, parses, instance, container, _ in asked:
        row = doors[where]
        row[0] += 1
        row[1].add(question)
        row[2] += spent
        row[3] += computed
        row[4] += parses
        row[5] += instance
        row[6] += container
    for where, row in sorted(doors.items(), key=lambda item: -item[1][2]):
        print(f"@@door {where:40} asked {row[0]:4} distinct {len(row[1]):4} {row[2]:6.2f} s computed {row[3]:5}"
              f" parses {row[4]:3} instance {row[5]:3} container {row[6]:3}", file=out)
    seen: set = set()
    repeats = [spent for _, question, spent, *_ in asked if question in seen or seen.add(question)]
    print(f"@@repeats {len(repeats)} of {len(asked)}: {sum(repeats):.4f} s", file=out)
    for where, question, spent, computed, parses, *_ in sorted(asked, key=lambda q: -q[2])[:10]:
        print(f"@@  {spent:6.3f} {where:28} computed {computed:4} parses {parses:3}"
              f" {question[0].rsplit('/', 1)[-1]} {question[1]} {repr(question[2])[:70]}", file=out)
    first: dict = {}
    for where, *_, classes in asked:
        if where.startswith(("half_instances", "halfspread")):
            for cls in classes:
                first.setdefault(cls, where)
    for where, count in sorted(collections.Counter(first.values()).items()):
        print(f"@@half classes first found by {where}: {count}", file=out)
    print(f"@@callback_sites asked {callbacks[0]}, answered with a site {callbacks[1]}, {callbacks[2]:.2f} s"
          " (its passed-name search included)", file=out)


if __name__ == "__main__":
    main()
