"""class_words.files_defining: the files whose text defines a class of a given name, as the
config scope (detectron2 LazyConfig / mmdet configs naming model classes) and the registry
lookups by name (`META_ARCH_REGISTRY.get(cfg.MODEL.META_ARCHITECTURE)`) search them. Equal to
the `^\\s*class\\s+(A|B)\\b` search each of them made per question, and each file's text is
scanned once however many questions are asked."""

from __future__ import annotations

import re

from project_files import load

from amplint.analysis.project.class_words import class_words, files_defining

TRICKY = [
    "xclass\n\nclass Foo:\n", "class class Bar:\n", "  \n\t class  Baz(nn.Module):\n", "classy Qux\n",
    "class\nLater:\n", "\fclass Feed:\n", "a.class Dotted\n", "class", "class ", "\u00a0class Nbsp:\n",
    "class FooBar:\n", "# class Commented\n", "'''\nclass InString:\n'''\n",
]


def _regex(text, names):
    pattern = re.compile(r"^\s*class\s+(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.M)
    return pattern.search(text) is not None


def test_equals_the_line_search():
    texts = TRICKY + [text for name in ("d2_roi_heads", "reach_template", "strings_d2_meta_arch")
                      for text in load(name).values()]
    checked = 0
    for text in texts:
        words = class_words(text)
        for name in set(re.findall(r"class\s+(\w+)", text)) | {"Foo", "Bar", "Later", "Nope"}:
            assert _regex(text, {name}) == (name in words), (name, text[:60])
            checked += 1
    assert class_words("class FooBar:\n") == {"FooBar"}  # not "Foo": the word ends at \b
    assert "Commented" not in class_words("# class Commented\n")
    assert checked > 50


class _Counting(dict):
    reads = 0

    def __getitem__(self, path):
        type(self).reads += 1
        return super().__getitem__(path)


class _Project:
    def __init__(self, files):
        self.files = _Counting(files)
        self.python = sorted(files)


def test_each_text_scanned_once():
    files = load("reach_template")
    project = _Project(files)
    for names in ({"RetinaHead"}, {"SSDHead", "MaskRCNN"}, {"Nope"}, {"RetinaHead", "Nope"}):
        assert files_defining(project, names) == [p for p in sorted(files) if _regex(files[p], names)]
    assert _Counting.reads == len(files)
