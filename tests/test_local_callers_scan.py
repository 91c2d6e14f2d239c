"""local_callers.py's text tests (issue 26's cost line), searched from the name's literal instead of
a pattern led by a lookbehind (tried at every position of every text): the same answers as the
patterns they stand for, on generated texts shaped like huggingface/diffusers' pipeline helpers
(`def retrieve_timesteps(` called again in the file, a `_retrieve_timesteps(` and an
`é_name(` that are other words) and on this repository's own texts."""

from __future__ import annotations

import os
import random
import re

from amplint.analysis.project import local_callers


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
