"""Where the class flow's CPU goes in the project pass's flow_seeds and propagate phases, in one
cold `-j 1` run of the CLI: the CPU of each top-level `call_targets` question and of each
half-cast value `half_instances` asks (the costliest listed), repeats of a question and what
they cost, and the one-off builds (the call index, the call-word scans before it and the
indirect binders' index, the passed-word scans and index, a
registry's search and registrations, the subclass and class-name scans of site_files) by the
phase that paid them.

`--without flow_seeds` / `--without half_instances` runs the pass without that step (its
answers are lost: CPU only) to show which one-off builds a later phase pays anyway: a build
paid anyway is moved, not saved, by asking fewer questions.

    python benchmarks/flow_questions.py [--without STEP] --no-cache -j 1 --exit-zero [CLI ARGS] TREE
"""

from __future__ import annotations

import collections
import sys
import time

import amplint.analysis.project as project
import amplint.analysis.project.call_words as call_words
import amplint.analysis.project.classflow as classflow
import amplint.analysis.project.registries as registries
import amplint.analysis.project.site_files as site_files
import amplint.run.project_inputs as project_inputs
import amplint.run.runner as runner

PHASES = {project: ("call_seeds", "flow_seeds", "framework_seeds", "propagate", "value_scope", "value_seeds"),
          project_inputs: ("build", "scaler_entries", "imported_entries")}
BUILDS = ((call_words.CallWords, "_index"), (call_words.CallWords, "files_calling"),
          (call_words.CallWords, "binding_indirectly"), (call_words.PassedWords, "files_passing"),
          (registries.Registries, "made_by"), (site_files.SiteFiles, "_text_subclass_files"),
          (site_files.SiteFiles, "_class_named"))

phase = ["-"]
builds: dict = collections.defaultdict(lambda: [0, 0.0])  # (build, phase) -> [calls, CPU]
questions: list = []  # (kind, CPU, question)
depth = [0]


def _in_phase(module, name):
    inner = getattr(module, name)

    def wrapped(*args, **kwargs):
        outer, phase[0] = phase[0], name
        try:
            return inner(*args, **kwargs)
        finally:
            phase[0] = outer
    setattr(module, name, wrapped)


def _build(cls, name):
    inner = getattr(cls, name)

    def wrapped(self, *args, **kwargs):
        begin = time.process_time()
        try:
            return inner(self, *args, **kwargs)
        finally:
            slot = builds[(name, phase[0])]
            slot[0] += 1
            slot[1] += time.process_time() - begin
    setattr(cls, name, wrapped)


def _question(kind, inner):
    def wrapped(self, path, key, value, *rest, **kwargs):
        depth[0] += 1
        begin = time.process_time()
        try:
            return inner(self, path, key, value, *rest, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0 and (kind == "call_targets" or phase[0] == "half_instances"):
                questions.append((kind if kind == "call_targets" else "half value", time.process_time() - begin,
                                  phase[0], (path, key, repr(value)[:80]) + tuple(rest[:1])))
    return wrapped


def main() -> None:
    args = sys.argv[1:]
    without = None
    if args[:1] == ["--without"]:
        without, args = args[1], args[2:]
    for module, names in PHASES.items():
        for name in names:
            _in_phase(module, name)
    runner.project_entries = project_inputs.project_entries
    _in_phase(classflow.ClassFlow, "half_instances")
    for cls, name in BUILDS:
        _build(cls, name)
    classflow.ClassFlow.call_targets = _question("call_targets", classflow.ClassFlow.call_targets)
    classflow.ClassFlow.values = _question("values", classflow.ClassFlow.values)
    if without == "flow_seeds":
        project.flow_seeds = lambda _project: []
    elif without == "half_instances":
        classflow.ClassFlow.half_instances = lambda _flow: {}
    from amplint.cli.main import main as cli
    sys.argv = ["amplint"] + args
    try:
        cli()
    finally:
        _print()


def _print() -> None:
    out = sys.stderr
    for kind in ("call_targets", "half value"):
        asked = [q for q in questions if q[0] == kind]
        seen = collections.Counter()
        repeats = 0.0
        for q in asked:
            repeats += q[1] if seen[q[3]] else 0.0
            seen[q[3]] += 1
        print(f"@@{kind}: {len(asked)} asked, {len(seen)} distinct, {sum(q[1] for q in asked):.2f} s;"
              f" repeats {len(asked) - len(seen)}: {repeats:.3f} s", file=out)
        for q in sorted(asked, key=lambda q: -q[1])[:8]:
            print(f"@@   {q[1]:6.3f} {q[2]:14} {q[3][0].rsplit('/', 1)[-1]} {q[3][1]} {q[3][2:]}", file=out)
    for (name, where), (count, spent) in sorted(builds.items()):
        print(f"@@build {name:22} {where:18} x{count:<4} {spent:6.2f} s", file=out)


if __name__ == "__main__":
    main()
