"""The methods a class of this file inherits from its bases of this file: what runs on its
instances besides its own methods (a mixin's `forward_tiled` on a half SwinIR). Bases in other
files are the project pass's (project/inherited_halves.py)."""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from amplint.analysis.facts.tree import Collector, Frame, dotted_name


def inherited_methods(tree: Collector, method: Callable[[str, str], Optional[Frame]],
                      name: str) -> Iterator[Frame]:
    """Each method of a base of class `name` (transitively, bases of this file) that the class
    resolves to that base: `method` is the call graph's MRO lookup (first base first), so one
    the class or a nearer base overrides is not yielded."""
    pending, seen = [name], {name}
    while pending:
        node = tree.classes[pending.pop(0)].node
        assert isinstance(node, cst.ClassDef)
        for base in node.bases:
            base_name = dotted_name(base.value)
            if not base_name or len(base_name) != 1 or base_name[0] in seen:
                continue
            base_cls = tree.classes.get(base_name[0])
            if base_cls is None:
                continue
            seen.add(base_name[0])
            pending.append(base_name[0])
            for method_name, frame in base_cls.functions.items():
                if method(name, method_name) is frame:
                    yield frame
