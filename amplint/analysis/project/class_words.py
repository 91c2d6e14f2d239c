"""Which files' text defines a class of a given name: what `^\\s*class\\s+(A|B|...)\\b` (re.M)
finds, from each file's class words, read once per project. The config scope
(config_scope.named_classes) and the registry lookups by name (string_classes) asked it with
a new pattern per question, each trying every line of every file (detectron2: 2,485 searches)."""

from __future__ import annotations

import re
from typing import FrozenSet, Iterable, List

_TAIL = re.compile(r"\s+(\w+)")


def class_words(text: str) -> FrozenSet[str]:
    """The words `NAME` of the text's `class NAME` whose `class` only whitespace precedes on
    its line (or on lines before it): where `^\\s*class\\s+NAME\\b` matches."""
    words = set()
    start = text.find("class")
    while start != -1:
        tail = _TAIL.match(text, start + 5)
        if tail is not None:
            line = text.rfind("\n", 0, start) + 1
            if line == start or text[line:start].isspace():
                words.add(tail.group(1))
        start = text.find("class", start + 5)
    return frozenset(words)


def files_defining(project, names: Iterable[str]) -> List[str]:
    """The project's Python files (in `project.python`'s order) whose text defines a class
    called one of `names`, as the text test above."""
    names = set(names)
    index = project.__dict__.setdefault("_class_words", {})
    found = []
    for path in project.python:
        words = index.get(path)
        if words is None:
            words = index[path] = class_words(project.files[path])
        if not words.isdisjoint(names):
            found.append(path)
    return found
