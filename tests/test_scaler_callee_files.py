"""The GradScaler protocol's project side reads which files hold a callee word once per pass
(scaler_methods.callee_files), with the callee words that hold no other one: the method
names a value call is followed for and the methods an attribute's object is composed for are
those the scans of every file gave, and the texts are scanned for the words once."""

import random

from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.project.scaler_methods import (
    CALLEE_TESTS as _CALLEE_TESTS, METHOD_DEF as _METHOD_DEF, callee_files as _callee_files,
    held_methods as _held_methods, method_names as _method_names,
)
from amplint.analysis.project.scaler_summaries import CALLEE_WORDS

# shaped like a Lightning-style trainer package, written here
_TRAINER = {
    "amp.py": "class MixedPrecision:\n    def optimizer_step(self, optimizer):\n"
              "        self.scaler.unscale_(optimizer)\n        return self.scaler.step(optimizer)\n",
    "clipping.py": "class Clipper:\n    def clip_grad_norm_(self, params):\n        return params\n",
    "strategy.py": "class Strategy:\n    def optimizer_step(self, opt):\n        return self.precision_plugin.optimizer_step(opt)\n",
    "data.py": "class Loader:\n    def set_epoch(self, epoch):\n        self.epoch = epoch\n",
    "ema.py": "class EMA:\n    def step(self, model):\n        model.update_params()\n",
}


class _Project:
    def __init__(self, files):
        self.files = files
        self.python = sorted(files)


class _Reads(dict):
    count = 0

    def __getitem__(self, path):
        _Reads.count += 1
        return dict.__getitem__(self, path)


def test_the_tests_are_the_callee_words():
    pieces = list(CALLEE_WORDS) + ["clip_", "unscale", "scale(", ".step", "update_", "x", "\n", "caler"[:3]]
    rng = random.Random(3)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
        assert any(w in text for w in CALLEE_WORDS) == any(w in text for w in _CALLEE_TESTS), text


def test_method_names_and_held_methods_are_those_of_every_file():
    project = _Project(dict(_TRAINER))
    expected = set()
    for path in project.python:
        if any(word in project.files[path] for word in CALLEE_WORDS):
            expected.update(_METHOD_DEF.findall(project.files[path]))
    assert _method_names(project) == expected == {"optimizer_step", "clip_grad_norm_", "step"}
    assert _callee_files(project) == ["amp.py", "clipping.py", "ema.py"]  # (strategy.py: no callee word)
    summary = type("S", (), {"calls": [("Strategy.optimizer_step", "", 0, "held", "precision_plugin.optimizer_step", ""),
                                       ("f", "", 0, "held", "loader.set_epoch", "")]})()
    assert any(w in _TRAINER["amp.py"] for w in SCALER_TRIGGERS)
    assert _held_methods(project, [summary], None) == {"optimizer_step"}


def test_each_text_is_scanned_for_the_words_once():
    project = _Project(_Reads(_TRAINER))
    _callee_files(project)
    read = _Reads.count
    summary = type("S", (), {"calls": [("f", "", 0, "held", "x.step", "")]})()
    _held_methods(project, [summary], None)
    _method_names(project)
    # the second and third readers read only the three files that hold a callee word
    assert _Reads.count - read <= 2 * 3
