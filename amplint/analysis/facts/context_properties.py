"""Regions opened through a PROPERTY (speechbrain's `Brain.training_ctx`):

    class Brain:
        @property
        def training_ctx(self):
            return torch.autocast(self.device, dtype=torch.float16, enabled=self.precision == "fp16")

        def fit_batch(self, batch):
            with self.training_ctx:
                loss = self.compute_objectives(self.compute_forward(batch), batch)

`with self.<attr>:` enters what the property returns: read as a returning function is
(facts/context_functions.py). The property is looked up on the class of the method that enters
it, then its bases of this file, depth first; a base of another file before it is found gives no
answer (it may define the attribute), and so does a store `self.<attr> = ...` of the class.
A subclass of this file that overrides it with one that opens less makes the region maybe
enabled (the runtime class may be the subclass). A property of another file's base class:
project/context_attrs.py."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from amplint.analysis.facts.tree import Frame, dotted_name

_MAX_DEPTH = 8


def property_opened(analysis, frame: Frame, attr: str):
    """(enabled, region, None) for `with self.<attr>:` read in `frame`, or None."""
    from amplint.analysis.facts.context_functions import _opened_by

    owner = frame.class_frame
    if owner is None:
        return None
    method = _lookup(analysis, owner, attr, 0)
    if method is None:
        return None
    found = _opened_by(analysis, method)
    if found is None:
        return None
    enabled, inner, _param = found
    for other in _overrides(analysis, owner, attr):
        if other is not method:
            opened = _opened_by(analysis, other) if _is_property(other) else None
            if opened is None or opened[0] is not type(enabled).TRUE:
                enabled = type(enabled).MAYBE
    return enabled, inner, None


def _is_property(method: Frame) -> bool:
    node = method.node
    return isinstance(node, cst.FunctionDef) and any(
        dotted_name(dec.decorator) in (("property",), ("functools", "cached_property"), ("cached_property",))
        for dec in node.decorators)


def _lookup(analysis, cls: Frame, attr: str, depth: int) -> Optional[Frame]:
    if depth > _MAX_DEPTH or not isinstance(cls.node, cst.ClassDef) or _stores(analysis, cls, attr):
        return None
    method = cls.functions.get(attr)
    if method is not None:
        return method if _is_property(method) else None
    for base in cls.node.bases:
        written = dotted_name(base.value)
        name = ".".join(written) if written else None
        if name in ("object", "nn.Module", "torch.nn.Module"):
            continue
        other = analysis.tree.classes.get(name) if name else None
        if other is None or other.parent is not analysis.tree.module_frame:
            return None  # a base of another file (or not a plain name) may define it
        found = _lookup(analysis, other, attr, depth + 1)
        if found is not None or _defines(other, attr):
            return found
    return None


def _defines(cls: Frame, attr: str) -> bool:
    return attr in cls.functions


def _stores(analysis, cls: Frame, attr: str) -> bool:
    from amplint.analysis.facts.syntax import self_attr

    return any(len(site.targets) == 1 and self_attr(site.targets[0]) == attr
               and site.frame.class_frame is cls for site in analysis.tree.assigns)


def _overrides(analysis, owner: Frame, attr: str) -> List[Frame]:
    """The defs of `attr` in classes of this file derived from `owner`."""
    classes = analysis.tree.classes
    derived = {owner.name}
    changed = True
    while changed:
        changed = False
        for name, cls in classes.items():
            if name in derived or not isinstance(cls.node, cst.ClassDef):
                continue
            if any((dotted_name(b.value) or ("",))[-1] in derived for b in cls.node.bases):
                derived.add(name)
                changed = True
    derived.discard(owner.name)
    return [classes[name].functions[attr] for name in sorted(derived) if attr in classes[name].functions]
