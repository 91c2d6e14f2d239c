"""The registry search's reading of one text (registry_files.names_bound_from, issue 26's cost
line) finds the statement around each mention from starts read only as far as needed, with a
pattern led by the newline (`^` with MULTILINE was tried at every position of every text that
names the word: the mixed monorepo tree's ~2,800 files naming `__all__`, 0.34 s -> 0.12 s), and
tries the walrus and `for` patterns only on statements that hold `:=` and `for`. The answers are
those of the reading it replaces (`_reference` below: every start, every pattern), on random
texts over the edge cases (carriage returns, non-breaking spaces, closing brackets and comments
in the first column, continuation lines) and on this repository's own sources and fixtures."""

from __future__ import annotations

import pathlib
import random
import re
from bisect import bisect_right

import pytest

from amplint.analysis.project import registry_files as rf
from amplint.analysis.project.registry_files import names_bound_from, statement_starts

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_PIECES = ["\n", " ", "\t", "\r", "\u00a0", "\x0c", ")", "]", "}", "#", "x", "HEADS", "__all__", " = ", ":=",
           "for ", " in ", " as ", "import ", "def ", "class ", "async ", "@", "(", ",", "\\\n", "N", "y.z"]


def _reference_bound(segment):
    if "=" not in segment and "for" not in segment:
        return set()
    found = set(rf._WALRUS.findall(segment))
    for targets in rf._for_targets(segment):  # (prose dropped: test_registry_prose_for.py)
        found.update(rf._IDENT.findall(targets))
    for line in segment.split("\n"):
        if "=" in line:
            found |= rf._targets(line)
    return found


def _reference(text, word):
    """names_bound_from as it read before: every statement start first, every pattern tried."""
    found, starts, statements = set(), None, {}
    for at in rf._occurrences(text, word):
        after = rf._AS_AFTER.match(text, at + len(word))
        if after is not None:
            found.add(after.group(1))
        if starts is None:
            starts = [m.start() for m in re.finditer(r"^[^\s)\]}#]", text, re.M)]
        index = bisect_right(starts, at) - 1
        start = starts[index] if index >= 0 else 0
        if text.startswith(("def ", "class ", "async ", "@"), start):
            line = text.rfind("\n", 0, at) + 1
            stop = text.find("\n", at)
            found |= _reference_bound(text[line:stop if stop != -1 else len(text)])
            continue
        if start not in statements:
            end = starts[index + 1] if index + 1 < len(starts) else len(text)
            statements[start] = _reference_bound(text[start:end])
        found |= statements[start]
    return found


def _random_text(rng):
    return "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 60)))


@pytest.mark.parametrize("seed", range(400))
def test_the_reading_is_the_reference_on_random_texts(seed):
    rng = random.Random(seed)
    text = _random_text(rng)
    assert list(statement_starts(text)) == [m.start() for m in re.finditer(r"^[^\s)\]}#]", text, re.M)]
    for word in ("HEADS", "__all__", "x", "N"):
        assert names_bound_from(text, word) == _reference(text, word), (text, word)


@pytest.mark.parametrize("text, word, names", [
    ("from .builder import HEADS as H\nREG = HEADS\n", "HEADS", {"H", "REG"}),
    ("__all__ = ['a']\nif True:\n    x = 1\n__all__ += ['b']\n", "__all__", {"__all__"}),
    ("if c:\n    A = HEADS\n    B = 2\n)\nC = 3\n", "HEADS", {"A", "B"}),  # `)` in column 0 starts nothing
    ("class Net:\n    m = HEADS\n    k = 1\n", "HEADS", {"m"}),  # in a class: its line only
    ("\u00a0X = HEADS\n", "HEADS", {"X"}),  # no statement starts: the text from 0
    ("for a, b in HEADS:\n    pass\n(n := HEADS)\n", "HEADS", {"a", "b", "n"}),
])
def test_what_a_text_binds(text, word, names):
    assert names_bound_from(text, word) == names == _reference(text, word)


def test_the_reading_is_the_reference_on_real_sources():
    paths = sorted((_ROOT / "amplint").rglob("*.py")) + sorted((_ROOT / "fixtures").rglob("*.py"))
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in paths]
    checked = 0
    for text in texts:
        assert list(statement_starts(text)) == [m.start() for m in re.finditer(r"^[^\s)\]}#]", text, re.M)]
        for word in ("__all__", "MODELS", "HEADS", "found", "self"):
            if word in text:
                checked += 1
                assert names_bound_from(text, word) == _reference(text, word), word
    assert checked > 100
