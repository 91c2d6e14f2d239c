"""Modules a class builds from a class its constructor is given, within one file: mamba's
`Block.__init__(self, dim, mixer_cls)` storing `self.mixer = mixer_cls(dim)`, every `Block(...)`
of the file passing `partial(Mamba, layer_idx=i)` (through a local bound once to it) or `Mamba`
itself; then `self.mixer(h)` runs `Mamba.forward`. The function-valued twin is
stored_functions.py (`self.mask_func = mask_func`).

Exact or nothing: the attribute is stored once in the whole file, by `self.attr = param(...)` in
`__init__`, the parameter never rebound there; the class is named only by its definition and by
plain constructor calls (no subclass, alias or `partial` of it), no `setattr` in the file; every
construction passes the same class of this file (by name, or `partial(Cls, ...)` directly or
through a name its scope binds once to one), a default counting when the call leaves it out."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import bound_argument, iter_nodes, self_attr
from amplint.analysis.facts.tree import Collector, Frame

_PARTIALS = {"functools.partial"}


def param_classes(tree: Collector) -> Dict[Tuple[str, str], str]:
    """(class, attr) -> the class of this file whose instance `self.attr` holds."""
    candidates = _candidates(tree)
    if not candidates or any(site.dotted == ("setattr",) for site in tree.calls):
        return {}
    names = {c[0] for c in candidates}
    constructions: Dict[str, List] = {}
    for site in tree.calls:
        func = site.node.func
        if isinstance(func, cst.Name) and func.value in names:
            constructions.setdefault(func.value, []).append(site)
    mentions: Dict[str, int] = {}
    stores: Dict[str, int] = {}
    attrs = {c[1] for c in candidates}
    for node in iter_nodes(tree.module_frame.node):
        if isinstance(node, cst.Name) and node.value in names:
            mentions[node.value] = mentions.get(node.value, 0) + 1
    for site in tree.assigns:
        for target in site.targets:
            if isinstance(target, cst.Attribute) and target.attr.value in attrs:
                stores[target.attr.value] = stores.get(target.attr.value, 0) + 1
    found: Dict[Tuple[str, str], str] = {}
    for cls, attr, index, param in candidates:
        sites = constructions.get(cls, [])
        if stores.get(attr) != 1 or not sites or mentions.get(cls) != 1 + len(sites):
            continue
        passed = {_passed_class(tree, site, index, param) for site in sites}
        if len(passed) == 1 and None not in passed:
            found[(cls, attr)] = passed.pop()
    return found


def _candidates(tree: Collector) -> List[Tuple[str, str, int, cst.Param]]:
    """(class, attribute, positional index without self, parameter) for `self.attr = param(...)`
    in `__init__`."""
    out = []
    module = tree.module_frame
    for site in tree.assigns:
        init = site.frame.scope
        if len(site.targets) != 1 or init.kind != "function" or init.name != "__init__":
            continue
        attr, value = self_attr(site.targets[0]), site.value
        if attr is None or not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            continue
        cls = init.parent
        if cls is None or cls.kind != "class" or cls.parent is not module or not tree.bound_once(module, cls.name):
            continue
        name = value.func.value
        if not tree.bound_once(init, name):
            continue
        node = init.node
        assert isinstance(node, cst.FunctionDef)
        plain = list(node.params.posonly_params) + list(node.params.params)
        for index, param in enumerate(plain):
            if param.name.value == name and index > 0:
                out.append((cls.name, attr, index - 1, param))
        for param in node.params.kwonly_params:
            if param.name.value == name:
                out.append((cls.name, attr, -1, param))
    return out


def _passed_class(tree: Collector, site, index: int, param: cst.Param) -> Optional[str]:
    value = bound_argument(site.node, index, param)
    if value is None:
        return None
    frame = tree.module_frame if value is param.default else site.frame
    return _class_named(tree, value, frame, 0)


def _class_named(tree: Collector, value: cst.BaseExpression, frame: Frame, depth: int) -> Optional[str]:
    """The class of this file `value` is, or a `partial` of (`partial(Mamba, layer_idx=i)`)."""
    if depth > 2:
        return None
    if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None \
            and not value.args[0].star and resolve_expr(value.func, frame) in _PARTIALS:
        return _class_named(tree, value.args[0].value, frame, depth + 1)
    if not isinstance(value, cst.Name):
        return None
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope.kind != "module":
        if value.value in scope.aliases:  # bound once, straight in the body, to a name or partial
            return _class_named(tree, scope.aliases[value.value], scope, depth + 1)
        if value.value in scope.bindings or value.value in scope.imports:
            return None  # a parameter or another local: not known here
        scope = scope.parent
    module = tree.module_frame
    if value.value in module.imports or not tree.bound_once(module, value.value):
        return None
    return value.value if value.value in tree.classes and tree.classes[value.value].parent is module else None
