"""Text tests of the project pass searched from their literal instead of a pattern led by a
lookbehind or `\\b` (tried at every position of every text; issue 26's cost line): local_callers.py's
whole-word tests, class_dtype_entries.py's `dtype=self.X` reading, scaler_quiet.py's seed names and
site_text.py's triple-quoted f-string test give the answers of the patterns they stand for, on
generated texts shaped like huggingface/diffusers' pipeline helpers (`def
retrieve_timesteps(` called again in the file, a `_retrieve_timesteps(` and an `éretrieve_timesteps(`
that are other words; `torch.zeros(n, dtype=self.dtype)` in a module under autocast, beside
`xdtype=self.a,`) and on this repository's own texts."""

from __future__ import annotations

import os
import random
import re

from amplint.analysis.project import local_callers
from amplint.analysis.project.class_dtype_entries import self_dtype_attrs


def _calls_twice(name: str, text: str) -> bool:
    return len(re.findall(r"(?<!\w)" + name + r"\s*\(", text)) >= 2


def _mentions(name: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + name + r"(?!\w)", text) is not None


def _generated():
    rng = random.Random(53)
    pieces = ["retrieve_timesteps", "retrieve_timesteps(", "retrieve_timesteps (", "_retrieve_timesteps(",
              "xretrieve_timesteps(", "retrieve_timestepsx", "\u00e9retrieve_timesteps(", "retrieve_timesteps\u00e9",
              "retrieve_timestepsretrieve_timesteps(", "def retrieve_timesteps(", "(", " ", "\n", "\t", "a", "_"]
    for _ in range(400):
        yield "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))


def _own_texts():
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "amplint", "analysis")
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    yield handle.read()


def _texts(seed: int, pieces, count: int):
    """`count` texts glued from `pieces` at random, then this repository's own texts."""
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 10))) for _ in range(count)] + list(_own_texts())


def _agree(ours, pattern, texts) -> int:
    """`ours(text)` answers `pattern.search(text) is not None` on every text; how many hold it."""
    found = 0
    for text in texts:
        theirs = pattern.search(text) is not None
        assert ours(text) == theirs, text
        found += theirs
    return found


def test_the_literal_led_tests_answer_as_the_lookbehind_patterns():
    cases = 0
    for text in _generated():
        for name in ("retrieve_timesteps", "retrieve_timestepsretrieve_timesteps", "a"):
            assert local_callers._calls_twice(name, text) == _calls_twice(name, text), (name, text)
            assert local_callers._mentions(name, text) == _mentions(name, text), (name, text)
            cases += 1
    kept = 0
    for text in _own_texts():
        for name in sorted(set(re.findall(r"def[ \t]+([A-Za-z]\w*)[ \t]*\(", text)))[:20]:
            assert local_callers._calls_twice(name, text) == _calls_twice(name, text), name
            assert local_callers._mentions(name, text) == _mentions(name, text), name
            kept += _calls_twice(name, text)
    assert cases >= 1000 and kept >= 50


def test_the_dtype_attributes_read_as_the_word_bounded_pattern():
    pieces = ["dtype=self.dtype,", "dtype = self.half_dtype)", "xdtype=self.a,", "_dtype=self.b)",
              "\u00e9dtype=self.c,", "dtype=self.dtype=self.d,", "dtype= self.e  )", "dtype=self.", "f,",
              "(", " ", "\n", "torch.zeros(n, ", ")"]
    pattern = re.compile(r"\bdtype\s*=\s*self\.(\w+)\s*[,)]")
    texts = _texts(26, pieces, 500)
    assert all(self_dtype_attrs(text) == set(pattern.findall(text)) for text in texts)
    assert _agree(lambda text: bool(self_dtype_attrs(text)), pattern, texts) >= 100


def test_the_scaler_seed_names_read_as_the_lookaround_pattern():
    """scaler_quiet's test for a call name that can keep a function (`backward`, `clip_grad_norm_`,
    `step`, ...), as NVIDIA/apex-style and fairseq-style texts write them (`loss.backward()`,
    `torch.nn.utils.clip_grad_norm_(`, `backward_compatible`, `xstep(`)."""
    from amplint.analysis.project import scaler_quiet

    names = sorted(scaler_quiet._SEED_NAMES)
    pattern = re.compile(r"(?<!\w)(?:%s)(?!\w)" % "|".join(map(re.escape, names)))
    pieces = names + ["x", "_", ".", "(", " ", "\n", "\u00e9", "clip_grad", "backward_compatible"]
    texts = _texts(124, pieces, 2000)
    assert 200 <= _agree(scaler_quiet._names_a_seed, pattern, texts) < len(texts)


def test_the_triple_quoted_f_string_test_reads_as_its_pattern():
    """site_text's test for a triple-quoted f-string (its lines may start at column 0), on
    generated texts with every prefix case: f, F, fr, Rf, a word character before (xf), a run of
    four quotes, rb (no f-string)."""
    from amplint.analysis.project import site_text

    pattern = re.compile(r"(?<![\w])(?:[fF][rR]?|[rR][fF])(?:\"\"\"|\'\'\')")
    pieces = ['"""', "'''", '"', "'", "f", "F", "r", "R", "b", "x", "_", " ", "\n", "(", "\u00e9"]
    texts = _texts(41, pieces, 4000)
    assert 150 <= _agree(site_text._triple_f, pattern, texts) < len(texts)
