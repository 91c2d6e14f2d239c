"""The registry search's alias closure (registry_files.RegistryFiles.names) on a tree where the
registry's names pass MAX_ALIASES through one word with many bindings: a monorepo holding
mmdetection 2.28 (`HEADS`, `TRANSFORMER`, named in `mmdet/models/__init__.py`'s `__all__`)
beside Lightning (27 modules binding names from `__all__`, before mmdet in the tree's order) and
HuggingFace transformers (~2,000 more, after it), `_import_structure`-style blocks. The answer is the closure's, None past the bound, whatever
the order its words are searched in; the search reaches that answer without reading the whole
tree once per word found before the exploding one. Counted in text reads, not time."""

from __future__ import annotations

import random

from amplint.analysis.project.registry_files import MAX_ALIASES, RegistryFiles, names_bound_from


class _CountedTexts(dict):
    """path -> text, counting the reads of a text."""

    reads = 0

    def __getitem__(self, path):
        type(self).reads += 1
        return dict.__getitem__(self, path)


def _monorepo(quiet: int) -> dict:
    texts = {
        "mmdet/models/__init__.py": "from .builder import HEADS, TRANSFORMER\n\n__all__ = ['HEADS', 'TRANSFORMER']\n",
        "mmdet/models/builder.py": "from mmcv.utils import Registry\n\nHEADS = Registry('head')\nTRANSFORMER = Registry('t')\n",
    }
    for k in range(quiet):  # modules that never name a registry
        texts[f"transformers/ops/op{k:03d}.py"] = f"import torch\n\n\ndef op{k}(x):\n    return x * {k}\n"
    for k in range(3 * MAX_ALIASES):  # Lightning's modules, each binding a name from `__all__`
        texts[f"lightning/pkg{k:03d}/__init__.py"] = f"exported{k} = list(__all__)\n"
    return texts


def _closure(texts, name):
    """The closure read naively: every text searched for every name, until nothing is new."""
    names, todo = {name}, [name]
    while todo:
        word = todo.pop()
        for text in texts.values():
            if word in text:
                for bound in names_bound_from(text, word) - names:
                    names.add(bound)
                    todo.append(bound)
    return None if len(names) > MAX_ALIASES else frozenset(names)


def test_a_closure_passing_the_bound_through_a_late_word_reads_less_than_the_tree_per_word():
    texts = _CountedTexts(_monorepo(quiet=600))
    paths = sorted(texts)
    _CountedTexts.reads = 0
    files = RegistryFiles(paths, texts)
    assert files.names("HEADS") is None
    # `HEADS` alone was searched in every text before `__all__` was reached (start: 729 reads of 698 texts)
    assert _CountedTexts.reads < len(paths) // 2
    assert files.names("TRANSFORMER") is None  # its own search stops as soon as `__all__` is reached
    assert _CountedTexts.reads < len(paths)


def test_the_answers_are_the_closures_whatever_the_order_of_the_questions():
    rng = random.Random(26)
    for trial in range(30):
        words = [f"R{i}" for i in range(6)] + ["__all__"]
        texts = {}
        for k in range(rng.randrange(5, 160)):
            lines = []
            for _ in range(rng.randrange(1, 4)):
                source, target = rng.choice(words), f"n{rng.randrange(60)}"
                form = rng.randrange(3)
                lines.append(f"from .b import {source} as {target}\n" if form == 0 else
                             f"{target} = [{source}]\n" if form == 1 else f"def f{k}():\n    {target} = {source}\n")
                if rng.random() < 0.3:
                    words.append(target)
            texts[f"p/m{k:03d}.py"] = "".join(lines)
        asked = [f"R{i}" for i in range(6)] + [f"n{i}" for i in range(0, 60, 7)]
        rng.shuffle(asked)
        files = RegistryFiles(sorted(texts), texts)
        for name in asked:
            assert files.names(name) == _closure(texts, name), (trial, name)
