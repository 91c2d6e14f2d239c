"""The pass's index of the words written after `def` (text_views.written_after_def, issue 26's
cost line) answers what site_files' per-name scan of the texts answered: a whole-word mention
of the name right after `(?<!\\w)def\\s+`. site_files.member_anywhere reads it instead of
scanning every text once per name (the mixed monorepo tree asked 54 names, ~5 full scans of
its 70M characters). Checked on random texts over an alphabet of the edge cases (`undef`,
`def def f`, tabs, newlines, non-breaking spaces, non-ASCII word characters, the middle dot)
and on this repository's own sources and fixtures."""

from __future__ import annotations

import pathlib
import random
import re

import pytest

from amplint.analysis.project.site_files import SiteFiles, _after_def, _word_uses
from amplint.analysis.project.text_views import defined_names, written_after_def

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_PIECES = ["def", "def ", " ", "\t", "\n", "\u00a0", "(", ")", ":", "f", "g", "_", "1", "é", "\u00b7",
           "un", "#", "'", ".", "=", "async ", "class ", "de", "f(", "self."]


def _scanned(texts, word):
    """What site_files scanned for: a mention of `word` after `def` in some text."""
    return any(_after_def(text, at) for text in texts for at, _ in _word_uses(text, word))


def _words(texts):
    return {word for text in texts for word in re.findall(r"\w+", text)} | {"f", "g", "def", "x"}


def _random_texts(seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 40))) for _ in range(rng.randrange(1, 4))]


@pytest.mark.parametrize("seed", range(300))
def test_the_index_is_the_scan_on_random_texts(seed):
    texts = _random_texts(seed)
    index = written_after_def(texts)
    assert {word for word in _words(texts) if _scanned(texts, word)} == set(index)


@pytest.mark.parametrize("texts, names", [
    (["def f(x):\n    pass\n"], {"f"}),
    (["undef f\nx.def g\n"], {"g"}),  # `.` is no word character: `x.def g` counts
    (["def def f"], {"def", "f"}),  # the name is read without consuming it
    (["def\u00a0f", "def\n\tg", "deff h", "def"], {"f", "g"}),
    (["def é1(x)", "def \u00b7f"], {"é1"}),  # the middle dot is not a word character
    (["async def m(self)", "# def n elsewhere", "'def o'"], {"m", "n", "o"}),  # comments and strings count
])
def test_what_the_index_holds(texts, names):
    assert written_after_def(texts) == names
    assert {word for word in _words(texts) if _scanned(texts, word)} == names


def _sources():
    paths = sorted((_ROOT / "amplint").rglob("*.py")) + sorted((_ROOT / "fixtures").rglob("*.py"))
    return [path.read_text(encoding="utf-8", errors="replace") for path in paths]


def test_the_index_is_the_scan_on_real_sources():
    texts = _sources()[:400]
    index = written_after_def(texts)
    words = sorted(_words(texts))[::7] + sorted(index)[::5]
    assert words
    for word in words:
        assert (word in index) is _scanned(texts, word), word


class _Project:
    def __init__(self, texts):
        self.files = {f"m{i}.py": text for i, text in enumerate(texts)}
        self.files["notes.md"] = "def hidden\nhidden = 1\n"  # not Python: neither reads it
        self.python = sorted(path for path in self.files if path.endswith(".py"))


class _Flow:
    def __init__(self, texts):
        self.p = _Project(texts)


@pytest.mark.parametrize("seed", range(150))
def test_member_anywhere_is_the_scan(seed):
    """member_anywhere (the index for `def`, the store scanned for) answers the one scan it
    replaced: a mention not followed by `(`, or one after `def`."""
    texts = _random_texts(seed)
    sites = SiteFiles(_Flow(texts), None)
    for word in sorted(_words(texts) | {"hidden"}):
        scanned = any(not called or _after_def(text, at) for text in texts for at, called in _word_uses(text, word))
        assert sites.member_anywhere(word) is scanned, (texts, word)


def test_the_index_is_read_once_per_pass():
    flow = _Flow(["def f(x):\n    pass\n", "y = g(1)\n"])
    assert defined_names(flow.p) is defined_names(flow.p) == {"f"}
    sites = SiteFiles(flow, None)
    assert sites.member_anywhere("f") and not sites.member_anywhere("g") and not sites.member_anywhere("hidden")
