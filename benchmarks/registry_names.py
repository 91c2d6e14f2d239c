"""CPU and answers of the registry search's alias closures (registry_files.RegistryFiles.names)
on real trees: every registration head of a tree (up to 40, sorted) asked in order, on whichever
amplint is on PYTHONPATH. Prints per tree: heads asked, answers past MAX_ALIASES, a digest of
the answers (equal across versions when a change keeps them), and the total CPU.

    PYTHONPATH=<snapshot> python benchmarks/registry_names.py TREE [TREE ...]
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

from amplint.analysis.project.registry_files import RegistryFiles


def main(roots) -> None:
    spent = 0.0
    for root in roots:
        paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
        texts = {}
        for path in paths:
            with open(path, encoding="utf-8", errors="replace") as handle:
                texts[path] = handle.read()
        files = RegistryFiles(paths, texts)
        heads = set()
        for path in paths:
            if "register" in texts[path]:
                heads |= files.heads(path) or set()
        asked = sorted(heads)[:40]
        start = time.process_time()
        answers = [(name, files.names(name)) for name in asked]
        spent += time.process_time() - start
        digest = hashlib.md5(repr([(n, None if v is None else sorted(v)) for n, v in answers]).encode()).hexdigest()
        print(f"{os.path.basename(root.rstrip('/'))}: {len(asked)} heads, "
              f"{sum(v is None for _, v in answers)} past the bound, answers {digest[:10]}")
    print(f"cpu {spent:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
