"""scaler_methods.method_defs (nested defs found from the literal `def`) against METHOD_DEF's
line-led `findall` on every `.py` file of the given trees: the files where they differ (must
be none) and the CPU of each, best of 3.

    python benchmarks/method_defs.py TREE [TREE ...]
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from amplint.analysis.project.scaler_methods import METHOD_DEF, method_defs
from text_indexes import python_texts  # noqa: E402  (the same walk of the trees)


def _best(function, texts):
    best = float("inf")
    for _ in range(3):
        begin = time.process_time()
        for _, text in texts:
            function(text)
        best = min(best, time.process_time() - begin)
    return best


def main() -> None:
    texts = list(python_texts(sys.argv[1:]))
    unequal = [path for path, text in texts if method_defs(text) != set(METHOD_DEF.findall(text))]
    for path in unequal[:20]:
        print("unequal", path)
    chars = sum(len(text) for _, text in texts)
    print(f"{len(texts)} files, {chars} chars, unequal {len(unequal)}; findall "
          f"{_best(lambda t: set(METHOD_DEF.findall(t)), texts):.3f} s, method_defs {_best(method_defs, texts):.3f} s")


if __name__ == "__main__":
    main()
