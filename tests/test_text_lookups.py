"""The project pass's whole-tree text scans read each text from the pass's `files` once, however
many names they scan for (issue 26's cost line): `files` is a Mapping whose lookup is Python code,
and the mixed monorepo tree looked its 5,338 texts up again for every scan (the class flow's call
and callback scans, the stored-attribute scans, the text tests: ~120,000 lookups). And the
lookbehind-led patterns of the called names are read from the reversed text, led by the literal
`(`: the same names, in the same order, on generated texts and on the projects' own.

The projects are small stand-ins shaped like facebookresearch/detectron2's engine (a trainer
calling hooks it is passed, a `self.storage` stored in one file only), written here."""

import random
from types import SimpleNamespace

from amplint.analysis.project.call_words import CallWords, PassedWords
from amplint.analysis.project.return_kinds import _METHOD_CALLED, _methods_called
from amplint.analysis.project.site_files import SiteFiles
from amplint.analysis.project.text_tests import holds
from amplint.analysis.project.text_views import CALLED, names_called

_ALPHABET = ["a", "b", "_", "1", "é", "ß", "\u0663", " ", "\t", "\n", "(", ")", ".", ".", "x", "Z", "9",
             "self", "torch.", "(x", "f("]

_DETECTRON2 = {
    "engine/train_loop.py": "class TrainerBase:\n    def __init__(self):\n        self.storage = None\n"
                            "    def train(self):\n        for h in self._hooks:\n            h.after_step()\n",
    "engine/hooks.py": "class PeriodicCheckpointer:\n    def after_step(self):\n        self.step(1)\n",
    "engine/defaults.py": "def default_setup(cfg, args):\n    launch(main, args)\n    main(args)\n",
    "tools/train_net.py": "def main(args):\n    trainer = DefaultTrainer(cfg)\n    return trainer.train()\n",
}


class _CountedFiles(dict):
    """A text mapping that counts its lookups per path."""

    def __init__(self, texts):
        super().__init__(texts)
        self.lookups = {path: 0 for path in texts}

    def __getitem__(self, path):
        self.lookups[path] += 1
        return super().__getitem__(path)

    def get(self, path, default=None):
        return self[path] if path in self else default


def _texts(seed, count):
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_called_names_are_what_the_forward_pattern_finds():
    for text in _texts(25, 20000) + list(_DETECTRON2.values()):
        assert names_called(text) == frozenset(CALLED.findall(text)), text


def test_methods_called_are_what_the_forward_pattern_finds_in_its_order():
    for text in _texts(26, 20000) + list(_DETECTRON2.values()) + ["a.b(c.d(e.f .g(", "x.y.z(u.v (w)"]:
        assert _methods_called(text) == _METHOD_CALLED.findall(text), text


def test_the_call_and_callback_scans_look_each_text_up_once():
    files = _CountedFiles(_DETECTRON2)
    calls, passes = CallWords(sorted(files), files), PassedWords(sorted(files), files)
    assert calls.files_calling("main") == ["engine/defaults.py", "tools/train_net.py"]  # (`def main(` too)
    assert calls.files_calling("after_step") == ["engine/hooks.py", "engine/train_loop.py"]
    assert calls.files_calling("DefaultTrainer") == ["tools/train_net.py"]
    assert passes.files_passing("main") == ["engine/defaults.py"]
    assert passes.files_passing("args") == ["engine/defaults.py", "tools/train_net.py"]
    assert set(files.lookups.values()) == {2}  # once for each of the two searches, not per name


def test_the_text_tests_and_store_scans_look_each_text_up_once():
    files = _CountedFiles(_DETECTRON2)
    project = SimpleNamespace(files=files, python=sorted(files))
    assert [path for path in project.python if holds(project, path, "self.step")] == ["engine/hooks.py"]
    assert [path for path in project.python if holds(project, path, "launch")] == ["engine/defaults.py"]
    sites = SiteFiles(SimpleNamespace(p=project), None)
    assert sites._stored_anywhere("storage") and not sites._stored_anywhere("after_step")
    assert not sites._stored_anywhere("train")
    assert set(files.lookups.values()) == {1}
