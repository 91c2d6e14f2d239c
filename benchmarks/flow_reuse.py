"""Is the work of two class-flow doors ever reused? One cold `-j 1` CLI run.

halfspread.submodules asks `ClassValues.values` for every `self.x = ...` store of each half
class; most answers hold no module. If a later question of the pass took those answers (or the
values they settled) from the memo, skipping them would only move their cost. This counts the
depth-0 questions submodules asks, how many hold no module and their CPU, the memo keys they
settle, and how many later questions (outside submodules) hit those keys. It also times each
callback_sites text search (call_words.PassedWords.files_passing: the first name builds the
passed-word index) and how many files each name gave.

    cd /tmp && PYTHONPATH=<tree> python <wt>/benchmarks/flow_reuse.py --no-cache -j 1 --exit-zero \
        --config /tmp/r22/rv.toml /work/main/benchmarks/.monorepo 2>&1 >/dev/null | grep @@
"""

from __future__ import annotations

import atexit
import sys
import time

from amplint.analysis.project import call_words, classvalues, halfspread

_asked = {}  # (file, function, value) -> [cpu, later depth-0 asks, holds no module, keys settled]
_settled = set()
_later = {"asks": 0, "hits": 0}
_inside = [0]
_searches = []


def _values(inner):
    def values(self, path, key, val, depth=0):
        memo_key = (path, key, val)
        if not _inside[0] and _settled:
            _later["asks"] += 1
            _later["hits"] += memo_key in _settled and memo_key in self._memo
            if depth == 0 and memo_key in _asked:
                _asked[memo_key][1] += 1
        if not (_inside[0] and depth == 0):
            return inner(self, path, key, val, depth)
        known = set(self._memo)
        start = time.process_time()
        found = inner(self, path, key, val, depth)
        spent = time.process_time() - start
        made = set(self._memo) - known
        _settled.update(made)
        _asked.setdefault(memo_key, [spent, 0, not halfspread.modules_held(self, found), len(made)])
        return found
    return values


def _submodules(inner):
    def submodules(flow, path, cls):
        _inside[0] += 1
        try:
            return inner(flow, path, cls)
        finally:
            _inside[0] -= 1
    return submodules


def _files_passing(inner):
    def files_passing(self, word):
        start = time.process_time()
        found = inner(self, word)
        _searches.append((word, len(found), time.process_time() - start))
        return found
    return files_passing


@atexit.register
def _report() -> None:
    empty = [v for v in _asked.values() if v[2]]
    out = sys.stderr
    print("@@ submodules: %d questions, %d hold no module; CPU %.3f s, of the empty ones %.3f s"
          % (len(_asked), len(empty), sum(v[0] for v in _asked.values()), sum(v[0] for v in empty)), file=out)
    print("@@ submodules: %d memo keys settled; later questions %d, hits on those keys %d, depth-0 re-asks %d"
          % (len(_settled), _later["asks"], _later["hits"], sum(v[1] for v in _asked.values())), file=out)
    for (path, key, val), (spent, again, none, made) in sorted(_asked.items(), key=lambda kv: -kv[1][0])[:6]:
        print("@@   %.3f s %s %s %.60s (no module: %s, settled %d, asked again %d)"
              % (spent, path.rsplit("/", 1)[-1], key, val, none, made, again), file=out)
    for word, files, spent in _searches:
        print("@@ callback text search %s: %d files, %.3f s" % (word, files, spent), file=out)


classvalues.ClassValues.values = _values(classvalues.ClassValues.values)
halfspread.submodules = _submodules(halfspread.submodules)
call_words.PassedWords.files_passing = _files_passing(call_words.PassedWords.files_passing)

if __name__ == "__main__":
    from amplint.cli.main import main
    sys.argv = ["amplint"] + sys.argv[1:]
    try:
        main()
    except SystemExit:
        pass
