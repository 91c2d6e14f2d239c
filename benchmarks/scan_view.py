"""What the project pass's scan view (amplint/analysis/project/scan_view.py) costs and saves on a
tree: its Python texts by storage width, the time and memory of the reduced copies (of the
4-byte texts, and what copies of the 2-byte ones would add), and one scan of a few words over
the plain texts and over the view (CPU, best of 3).

    python benchmarks/scan_view.py benchmarks/.monorepo

Round 50 (the mixed monorepo tree, 5,338 texts, 70.4 M characters; a loaded 2-core machine):
3,773 ASCII, 39 1-byte, 254 2-byte, 1,272 4-byte texts; the copies of the 4-byte ones 20.5 MB,
made in ~0.05 s; a scan 57-63 ms plain, 39-43 ms over the view (copies of the 2-byte texts
too: +9.2 MB more, not kept: the memory bar of issue 26's cost work is 10 MB)."""

from __future__ import annotations

import os
import sys
import time

from amplint.analysis.project.scan_view import _wide, reduce

WORDS = ("autocast", "FP16Optimizer", "_stores_attr", ".forward_context(")


def _texts(root: str):
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".py"):
                try:
                    with open(os.path.join(directory, name), encoding="utf-8") as handle:
                        yield handle.read()
                except (OSError, UnicodeDecodeError):
                    pass


def _best(scan) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        scan()
        best = min(best, time.process_time() - start)
    return best


def main(root: str) -> None:
    texts = list(_texts(root))
    wide = [text for text in texts if _wide(text)]
    two = [text for text in texts if not text.isascii() and not _wide(text) and sys.getsizeof(text) >= 2 * len(text)]
    print(f"{len(texts)} texts, {sum(map(len, texts)) / 1e6:.1f} M chars; {len(wide)} 4-byte "
          f"({sum(map(len, wide)) / 1e6:.1f} M), {len(two)} 2-byte")
    start = time.process_time()
    view = [reduce(text) if _wide(text) else text for text in texts]
    print(f"reduced copies: {time.process_time() - start:.3f} s, "
          f"{sum(len(v) for v, t in zip(view, texts) if v is not t) / 1e6:.1f} MB")
    for word in WORDS:
        plain = _best(lambda: sum(word in text for text in texts))
        reduced = _best(lambda: sum(word in text for text in view))
        print(f"{word!r:24} plain {plain * 1e3:6.1f} ms   view {reduced * 1e3:6.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/.monorepo")
