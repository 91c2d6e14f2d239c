"""The project pass's text indexes against their definitions on whole trees: for every .py file,
`call_words.called_words(text)` (the class flow's call-word index) against the words the regex
`\\b(\\w+)\\s*\\(` finds; `text_views.written_after_def([text])` (the words written after `def`)
against `(?<!\\w)def(?=\\s+(\\w+))`; `registry_files.statement_starts(text)` against
`^[^\\s)\\]}#]` (MULTILINE); `call_words.passed_words(text)` (the callback search's index) against
`[,)]\\s*(\\w+)` on the reversed text; `text_views.names_called(text)` and
`return_kinds._methods_called(text)` (read from the reversed text) against the lookbehind-led
patterns they stand for (`CALLED`, `_METHOD_CALLED`: the same names, in the same order); `call_words.indirect_binders` told what
the text's called words say (no word ending in `partial`, no `super`, no `\\)\\s*\\(`: CallWords'
`_indirect_callers`) against the full search; `config_dtypes.holds_shape(text)` (the shape
search tried at the lines writing a half dtype) against `config_dtypes._SHAPES.search`. Prints
files, unequal files (must be 0) and the CPU seconds of each, then what the call and passed indexes cost in scans of one name (call_words'
`_SCANS_BEFORE_INDEX` and `_SCANS_BEFORE_PASSED_INDEX` are chosen from these).

    python benchmarks/text_indexes.py DIR...
"""

from __future__ import annotations

import os
import re
import sys
import time

from amplint.analysis.project.call_words import (
    _CALLED_GROUP, _REVERSED_PASSED, CallWords, PassedWords, called_words, indirect_binders, passed_words,
)
from amplint.analysis.project.config_dtypes import _SHAPES, holds_shape
from amplint.analysis.project.registry_files import statement_starts
from amplint.analysis.project.return_kinds import _METHOD_CALLED, _methods_called
from amplint.analysis.project.text_views import CALLED, names_called, written_after_def

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
             lambda text: [m.start() for m in _STATEMENT.finditer(text)]),
            ("passed words", passed_words, lambda text: set(_REVERSED_PASSED.findall(text[::-1]))),
            ("called names", names_called, lambda text: frozenset(CALLED.findall(text))),
            ("methods called", _methods_called, _METHOD_CALLED.findall),
            ("indirect binders", _hinted_binders, indirect_binders),
            ("half dtype lines", holds_shape, lambda text: _SHAPES.search(text) is not None)):
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
    print_index_costs([text for _, text in texts])
    return 1 if failed else 0


def _hinted_binders(text):
    words = called_words(text)  # (its CPU is counted with the binders')
    return indirect_binders(text, any(word.endswith("partial") for word in words), "super" in words,
                            _CALLED_GROUP.search(text) is not None)


_ASKED = ["forward_step", "main", "build_model", "Trainer", "apply_half", "register"]


def print_index_costs(texts) -> None:
    """CPU of each index over the CPU of one scan for a name (the mean over `_ASKED`)."""
    by_path = {str(i): text for i, text in enumerate(texts)}
    paths = list(by_path)

    def spent(work):
        start = time.process_time()
        work()
        return time.process_time() - start

    for name, scan, index in (
            ("call", lambda word: CallWords(paths, by_path).files_calling(word),
             lambda: CallWords(paths, by_path)._index()),
            ("passed", lambda word: PassedWords(paths, by_path)._scan(word),
             lambda: [passed_words(text) for text in texts])):
        one_scan = min(spent(lambda: [scan(word) for word in _ASKED]) for _ in range(3)) / len(_ASKED)
        built = min(spent(index) for _ in range(3))
        print(f"{name} index: {built / max(one_scan, 1e-9):.1f} scans (one scan {one_scan * 1000:.1f} ms)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
