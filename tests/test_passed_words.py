"""The callback search's text index (call_words.PassedWords, read by callback_sites.py): the
files it hands on hold every file whose text passes a name as a whole argument, whether they come
from a scan or from the index, and past the scans it reads no text again however many names are
asked (the mixed monorepo tree asked 22 names of 5,000 texts, each a scan of every text)."""

import random
import re

import pytest

from amplint.analysis.project import call_words

from amplint.analysis.project.call_words import _SCANS_BEFORE_PASSED_INDEX, PassedWords
from amplint.analysis.project.callback_sites import _files_passing

_ALPHABET = ["a", "b", "_", "1", "é", " ", "\t", "\n", "\u00a0", "\u0301", "(", ")", ",", ".", "=",
             "ab", "ba", "step", "forward_step", "(x", ", ", "x.", "k="]

# shaped like Megatron-LM's pretrain_gpt.py and its training loop, written here
_MEGATRON = {
    "pretrain_gpt.py": "def forward_step(data_iterator, model):\n    return model(data_iterator)\n\n"
                       "if __name__ == '__main__':\n    pretrain(model_provider, forward_step)\n",
    "training.py": "def pretrain(model_provider, forward_step_func):\n    train(forward_step_func)\n",
    "schedules.py": "def step(x):\n    return x\nrun(optimizer.step, steps)\n",
    "hooks.py": "callbacks = dict(on_step=trainer.forward_step )\n",
}


def _passes(name, text):
    return re.search(r"[(,]\s*(?:\w+\s*=\s*)?(?:\w+\.)*%s\s*[,)]" % re.escape(name), text) is not None


class _Counting(dict):
    read = 0

    def __getitem__(self, path):
        _Counting.read += 1
        return dict.__getitem__(self, path)


class _Values:
    def __init__(self, texts):
        self.p = type("Project", (), {})()
        self.p.files = texts
        self.p.python = sorted(texts)


def test_every_file_that_passes_a_name_is_a_candidate_from_scans_and_from_the_index():
    rng = random.Random(7)
    texts = {f"f{i}.py": "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 50)))
             for i in range(1500)}
    texts.update(_MEGATRON)
    paths = sorted(texts)
    names = ["a", "b", "ab", "ba", "_", "é", "a1", "step", "forward_step", "x", "k", "forward_step_func", "a\u0301"]
    words = PassedWords(paths, texts)
    for asked, name in enumerate(names + names):
        found = words.files_passing(name)
        assert found == sorted(found)
        assert {p for p in paths if _passes(name, texts[p])} <= set(found), (asked, name)
        assert _files_passing(_Values(texts), name) == [p for p in paths if _passes(name, texts[p])]
    assert words._passed is not None  # the later names came from the index


def test_megatron_callback_files():
    values = _Values(dict(_MEGATRON))
    assert _files_passing(values, "forward_step") == ["hooks.py", "pretrain_gpt.py"]
    assert _files_passing(values, "forward_step_func") == ["training.py"]
    assert _files_passing(values, "step") == ["schedules.py"]


def test_past_the_scans_no_text_is_read_again():
    texts = _Counting({f"m{i}.py": f"def f{i}(x):\n    return run(f{i}, x)\n" for i in range(50)})
    words = PassedWords(sorted(texts), texts)
    for i in range(_SCANS_BEFORE_PASSED_INDEX + 1):  # the scans, then the index
        words.files_passing(f"f{i}")
    read = _Counting.read
    for i in range(50):
        assert words.files_passing(f"f{i}") == [f"m{i}.py"]
    assert _Counting.read == read


def test_passed_words_are_what_the_reversed_pattern_finds():
    from amplint.analysis.project.call_words import _REVERSED_PASSED, passed_words

    rng = random.Random(11)
    wide = _ALPHABET + ["\u2003", "\u3000", "\x1c", "\u00b2", "\u0663", "),", ",)", "))", ",,", "x)"]
    texts = ["".join(rng.choice(wide) for _ in range(rng.randint(0, 60))) for _ in range(4000)]
    for text in texts + ["f(a, b)", "f(x=a.b )", "a)", ",a", "(a\t\n,", "é1 )", "a\u0301)"] + list(_MEGATRON.values()):
        assert passed_words(text) == set(_REVERSED_PASSED.findall(text[::-1])), text


def test_a_text_is_looked_up_once_however_many_names_are_asked():
    """The scans and the index read the texts the view looked up once (the pass's own list)."""
    names = [f"step_{chr(97 + i)}" for i in range(_SCANS_BEFORE_PASSED_INDEX + 2)]  # (none within another)
    texts = _Counting({f"m{i}.py": f"def {name}(x):\n    return run({name}, x)\n" for i, name in enumerate(names)})
    texts.update({f"n{i}.py": "def other(x):\n    return run(x)\n" for i in range(32)})
    words = PassedWords(sorted(texts), texts)
    _Counting.read = 0
    for i, name in enumerate(names):
        assert words.files_passing(name) == [f"m{i}.py"]
    assert words._passed is not None  # (the last names from the index)
    assert _Counting.read == len(texts)


def test_the_names_a_pass_asks_first_are_scanned_for_not_indexed():
    """The index costs 12 to 20 scans (benchmarks/text_indexes.py); the mixed monorepo tree asks
    10 names: no index is built for them."""
    assert _SCANS_BEFORE_PASSED_INDEX >= 10
    texts = {f"m{i}.py": f"def f{i}(x):\n    return run(f{i}, x)\n" for i in range(20)}
    words = PassedWords(sorted(texts), texts)
    for i in range(10):
        assert words.files_passing(f"f{i}") == [f"m{i}.py"]
    assert words._passed is None


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_a_scan_gives_the_files_the_index_gives(monkeypatch, seed):
    """A scan for a name of word characters keeps the files where the name starts a word, as
    `passed_words` has it: `f(xmain, 1)` and `main_main,` do not pass `main`, `f(x.main, 1)` and `f(main )` do."""
    rng = random.Random(seed)
    wide = _ALPHABET + ["\u2003", "\x1c", "\u00b2", "\u0663", "),", ",)", "main", "xmain", "main_", "é"]
    texts = {f"f{i}.py": "".join(rng.choice(wide) for _ in range(rng.randint(0, 40))) for i in range(1200)}
    texts.update({"g1.py": "f(xmain, 1)", "g2.py": "f(x.main, 1)", "g3.py": "f(main )", "g4.py": "main_main,"})
    paths = sorted(texts)
    names = ["a", "b", "ab", "ba", "_", "é", "a1", "step", "forward_step", "x", "k", "main", "ain", "\u0663", "\u00b2"]
    monkeypatch.setattr(call_words, "_SCANS_BEFORE_PASSED_INDEX", 10 ** 6)
    scanning = PassedWords(paths, texts)
    scanned = [scanning.files_passing(name) for name in names]
    assert scanning._passed is None
    monkeypatch.setattr(call_words, "_SCANS_BEFORE_PASSED_INDEX", 0)
    indexing = PassedWords(paths, texts)
    assert [indexing.files_passing(name) for name in names] == scanned
    assert indexing._passed is not None
    main = scanned[names.index("main")]
    assert "g2.py" in main and "g3.py" in main and "g1.py" not in main and "g4.py" not in main
