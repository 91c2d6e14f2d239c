"""The project pass's text indexes against their definitions on whole trees: for every .py file,
`call_words.called_words(text)` (the class flow's call-word index) against the words the regex
`\\b(\\w+)\\s*\\(` finds; `text_views.written_after_def([text])` (the words written after `def`)
against `(?<!\\w)def(?=\\s+(\\w+))`; `registry_files.statement_starts(text)` against
`^[^\\s)\\]}#]` (MULTILINE). Prints files, unequal files (must be 0) and the CPU seconds of each.

    python benchmarks/text_indexes.py DIR...
"""

from __future__ import annotations

import os
import re
import sys
import time

from amplint.analysis.project.call_words import called_words
from amplint.analysis.project.registry_files import statement_starts
from amplint.analysis.project.text_views import written_after_def

_CALL = re.compile(r"\b(\w+)\s*\(")
_DEF = re.compile(r"(?<!\w)def(?=\s+(\w+))")  # (a lookahead: `def def f` names both, as the scan does)
_STATEMENT = re.compile(r"^[^\s)\]}#]", re.M)


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
    failed = bool(unequal)
    for name, index, definition in (
            ("def names", lambda text: written_after_def([text]), lambda text: set(_DEF.findall(text))),
            ("statement starts", lambda text: list(statement_starts(text)),
             lambda text: [m.start() for m in _STATEMENT.finditer(text)])):
        start = time.process_time()
        indexed = [index(text) for _, text in texts]
        index_s = time.process_time() - start
        start = time.process_time()
        expected = [definition(text) for _, text in texts]
        regex_s = time.process_time() - start
        unequal = [path for (path, _), a, b in zip(texts, indexed, expected) if a != b]
        print(f"files {len(texts)}  {name} unequal {len(unequal)}  CPU s: index {index_s:.2f}, regex {regex_s:.2f}")
        for path in unequal[:10]:
            print("  unequal:", path)
        failed = failed or bool(unequal)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
