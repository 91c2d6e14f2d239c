"""Where halfspread.submodules' CPU goes, one cold `-j 1` CLI run (round 53, r29-cost-submodules).

Prints (lines starting `@@`): submodules' CPU; its depth-0 questions by kind of value (a
parameter `local`, an attribute `attr`, a call of a ref, ...) and whether the answer holds a
module, with CPU; the 8 costliest; and the constructor call-site searches it starts
(`FlowIndex._call_sites` misses, outermost only), split into the first search of a
(callee, target) and the repeats that differ only in the slots asked for, with CPU. The
repeats are what one search per class with the union of slots could save.

    cd /tmp && PYTHONPATH=<tree> python <wt>/benchmarks/submodules_sites.py --no-cache -j 1 \
        --exit-zero --config /tmp/r22/rv.toml /work/main/benchmarks/.monorepo 2>&1 >/dev/null | grep @@
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import sys
import time

from amplint.analysis.project import classvalues, flowindex, halfspread

inside = [0]
sub_cpu = [0.0]
kind_cpu: collections.Counter = collections.Counter()
kind_count: collections.Counter = collections.Counter()
costly = []
search_count: collections.Counter = collections.Counter()
search_cpu: collections.Counter = collections.Counter()
searched: dict = {}
searching = [0]

original_submodules = halfspread.submodules
original_values = classvalues.ClassValues.values
original_call_sites = flowindex.FlowIndex._call_sites


@contextlib.contextmanager
def _clocked(depth: list, record):
    """`record(CPU)` of the outermost call (depth[0] counts the calls open)."""
    depth[0] += 1
    start = time.process_time()
    try:
        yield
    finally:
        depth[0] -= 1
        if depth[0] == 0:
            record(time.process_time() - start)


def _add(counter, key):
    def record(spent):
        counter[key] += spent
    return record


def submodules(flow, path, cls):
    with _clocked(inside, _add(sub_cpu, 0)):
        return original_submodules(flow, path, cls)


def values(self, path, key, val, depth=0):
    if not inside[0] or depth != 0 or val is None:
        return original_values(self, path, key, val, depth)
    start = time.process_time()
    found = original_values(self, path, key, val, depth)
    spent = time.process_time() - start
    empty = not halfspread.modules_held(self, found)
    kind = (val[0] if val[0] != "call" else "call-" + str(val[1][0])) + (" empty" if empty else " module")
    kind_cpu[kind] += spent
    kind_count[kind] += 1
    costly.append((spent, key, str(val)[:60], empty))
    return found


def call_sites(self, name, question=None):
    memo = name if question is None else (name, question)
    if memo in self._calls or searching[0] or not inside[0]:
        return original_call_sites(self, name, question)
    base = (name,) + tuple(question[:3]) if question else (name,)
    kind = "repeat" if base in searched else "first"
    searched[base] = searched.get(base, 0) + 1
    search_count[kind] += 1
    with _clocked(searching, _add(search_cpu, kind)):
        return original_call_sites(self, name, question)


halfspread.submodules = submodules
classvalues.ClassValues.values = values
flowindex.FlowIndex._call_sites = call_sites


@atexit.register
def report() -> None:
    out = sys.stderr
    print("@@ submodules CPU %.3f" % sub_cpu[0], file=out)
    for kind in sorted(kind_cpu, key=lambda k: -kind_cpu[k]):
        print("@@ questions %-22s n %3d CPU %.3f" % (kind, kind_count[kind], kind_cpu[kind]), file=out)
    for spent, key, val, empty in sorted(costly, reverse=True)[:8]:
        print("@@ costly %.3f %s %s empty=%s" % (spent, key, val, empty), file=out)
    for kind in ("first", "repeat"):
        print("@@ call-site searches %s: %d, CPU %.3f" % (kind, search_count[kind], search_cpu[kind]), file=out)


from amplint.cli.main import main  # noqa: E402

sys.argv = ["amplint"] + sys.argv[1:]
try:
    main()
except SystemExit:
    pass
