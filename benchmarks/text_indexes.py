"""The project pass's text indexes against their definitions on whole trees: for every .py file,
`call_words.called_words(text)` (the class flow's call-word index) against the words the regex
`\\b(\\w+)\\s*\\(` finds. Prints files, unequal files (must be 0) and the CPU seconds of each.

    python benchmarks/text_indexes.py DIR...
"""

from __future__ import annotations

import os
import re
import sys
import time

from amplint.analysis.project.call_words import called_words

_CALL = re.compile(r"\b(\w+)\s*\(")


def python_texts(roots):
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    try:
                        with open(path, encoding="utf-8") as handle:
                            yield path, handle.read()
                    except (OSError, UnicodeDecodeError):
                        continue


def main(argv) -> int:
    texts = list(python_texts(argv))
    start = time.process_time()
    indexed = [called_words(text) for _, text in texts]
    index_s = time.process_time() - start
    start = time.process_time()
    expected = [{m.group(1) for m in _CALL.finditer(text)} for _, text in texts]
    regex_s = time.process_time() - start
    unequal = [path for (path, _), a, b in zip(texts, indexed, expected) if a != b]
    print(f"files {len(texts)}  call words unequal {len(unequal)}  "
          f"CPU s: index {index_s:.2f}, regex {regex_s:.2f}")
    for path in unequal[:10]:
        print("  unequal:", path)
    return 1 if unequal else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
