"""scaler_quiet's `_collect` and `protocol_keys` against another snapshot's (a directory holding
`amplint/`, such as a start snapshot) on every `.py` file of the given trees that holds a
callee word (the files the project pass reads keys of): the files where they differ (must be
none; `_collect`'s lists compared as multisets: no reader depends on their order) and the
CPU of each `_collect`, best of 3 (the `ast` trees parsed once, outside the timing); how many
texts `protocol_keys` answers without parsing them (`_no_event_call`), and any of them `ast`
cannot parse (there the reference says None: any function may).

    python benchmarks/protocol_keys.py SNAPSHOT TREE [TREE ...]
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from amplint.analysis.project import scaler_quiet  # noqa: E402
from amplint.analysis.project.scaler_summaries import CALLEE_WORDS  # noqa: E402
from text_indexes import python_texts  # noqa: E402  (the same walk of the trees)


def _reference(snapshot: str):
    """The snapshot's scaler_quiet module, loaded beside this one (its own imports: ours)."""
    path = os.path.join(snapshot, "amplint", "analysis", "project", "scaler_quiet.py")
    spec = importlib.util.spec_from_file_location("reference_scaler_quiet", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _best(collect, trees) -> float:
    best = float("inf")
    for _ in range(3):
        begin = time.process_time()
        for tree in trees:
            collect(tree)
        best = min(best, time.process_time() - begin)
    return best


def _multisets(found):
    defs, calls, imported, scaler_calls = found
    return Counter(defs), Counter((defs[owner][0], *rest) for owner, *rest in calls), Counter(imported), scaler_calls


def main() -> None:
    reference = _reference(sys.argv[1])
    texts = [(path, text) for path, text in python_texts(sys.argv[2:])
             if any(word in text for word in CALLEE_WORDS)]
    trees, unequal = [], []
    unparsed = sum(map(scaler_quiet._no_event_call, (text for _, text in texts)))
    for path, text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            if scaler_quiet._no_event_call(text):
                print("unparsable, no event call:", path)
            continue
        trees.append(tree)
        if (_multisets(scaler_quiet._collect(tree)) != _multisets(reference._collect(tree))
                or scaler_quiet.protocol_keys(text) != reference.protocol_keys(text)):
            unequal.append(path)
    for path in unequal[:20]:
        print("unequal", path)
    print(f"{len(texts)} callee texts, {unparsed} with no call that can keep a function (not parsed)")
    print(f"{len(trees)} files, unequal {len(unequal)}; _collect: reference "
          f"{_best(reference._collect, trees):.3f} s, this {_best(scaler_quiet._collect, trees):.3f} s")


if __name__ == "__main__":
    main()
