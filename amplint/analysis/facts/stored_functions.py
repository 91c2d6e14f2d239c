"""Functions a class holds on `self` from its constructor: `self.mask_func = mask_func` in
`__init__`, where every construction of the class in this file passes the same module-level
function of the file (`Attn(mask_func)`), so `self.mask_func(s, mask)` calls that function
(gpt-neox keeps its attention-mask function this way); or `self.disc_loss = vanilla_d_loss`,
the module's def itself (sgm's discriminator loss).

Exact or nothing: the attribute is written once in the whole file and read only as
`self.attr(...)` in the class's own methods; the parameter is never rebound; the class is
named only by its definition and by plain constructor calls (no subclass, no alias, no
`partial(Attn, ...)`); no `setattr` in the file; every call passes a name that resolves to one
module-level def bound once (a default counts when it is such a name)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import bound_argument, iter_nodes, self_attr
from amplint.analysis.facts.tree import Collector, Frame

Stored = Dict[Tuple[str, str], Frame]  # (class name, attribute) -> the function it holds


def stored_functions(tree: Collector) -> Stored:
    candidates = _candidates(tree)
    if not candidates or any(_called_name(site.node) == "setattr" for site in tree.calls):
        return {}
    # the file's calls read once, by (class frame, `self.attr`) and by called name: a query per
    # candidate over every call grew with the square of a file of many classes (test_scale_ops)
    self_calls: Dict[Tuple[int, str], int] = {}
    by_name: Dict[str, list] = {}
    for site in tree.calls:
        attr = self_attr(site.node.func)
        if attr is not None and site.frame.class_frame is not None:
            key = (id(site.frame.class_frame), attr)
            self_calls[key] = self_calls.get(key, 0) + 1
        name = _called_name(site.node)
        if name is not None:
            by_name.setdefault(name, []).append(site)
    # only an attribute the class calls is asked for (CallGraph.callees): `self.config = config`
    # is not, and the walk over every node (_mentions) is skipped for a file with none called
    candidates = [c for c in candidates if self_calls.get((id(tree.classes[c[0]]), c[1]))]
    if not candidates:
        return {}
    counts = _mentions(tree, candidates)
    found: Stored = {}
    for cls, attr, index, param in candidates:
        stores_and_calls = 1 + self_calls.get((id(tree.classes[cls]), attr), 0)
        if counts.get(("attr", attr)) != stores_and_calls:
            continue  # written or read elsewhere: `m.mask_func = other`, `f = self.mask_func`
        constructions = by_name.get(cls, [])
        if not constructions or counts.get(("name", cls)) != 1 + len(constructions):
            continue  # subclassed, aliased or passed on as a value
        if isinstance(param, Frame):  # `self.disc_loss = vanilla_d_loss`: the module's def
            passed = [param]
        else:
            passed = [_passed(tree, site, index, param) for site in constructions]
        first = passed[0]
        if first is not None and all(f is first for f in passed):
            found[(cls, attr)] = first
    return found


def _candidates(tree: Collector) -> List[Tuple[str, str, int, object]]:
    """(class, attribute, positional index without self, parameter) for `self.attr = param`;
    (class, attribute, -1, the def) for `self.attr = module_def`."""
    out = []
    module = tree.module_frame
    by_scope: Dict[int, list] = {}
    for site in tree.assigns:
        by_scope.setdefault(id(site.frame.scope), []).append(site)
    for name, cls in tree.classes.items():
        init = cls.functions.get("__init__")
        if init is None or cls.parent is not module or not tree.bound_once(module, name):
            continue
        node = init.node
        assert isinstance(node, cst.FunctionDef)
        plain = list(node.params.posonly_params) + list(node.params.params)
        for site in by_scope.get(id(init), ()):
            if len(site.targets) != 1:
                continue
            attr = self_attr(site.targets[0])
            value = site.value
            if attr is None or not isinstance(value, cst.Name):
                continue
            if value.value not in init.bindings and value.value not in init.imports:
                function = _module_def(tree, value.value)
                if function is not None:
                    out.append((name, attr, -1, function))
                continue
            if not tree.bound_once(init, value.value):
                continue
            for index, param in enumerate(plain):
                if param.name.value == value.value and index > 0:
                    out.append((name, attr, index - 1, param))
            for param in node.params.kwonly_params:
                if param.name.value == value.value:
                    out.append((name, attr, -1, param))
    return out


def _mentions(tree: Collector, candidates) -> Dict[Tuple[str, str], int]:
    names = {c[0] for c in candidates}
    attrs = {c[1] for c in candidates}
    counts: Dict[Tuple[str, str], int] = {}
    for node in iter_nodes(tree.module_frame.node):
        if isinstance(node, cst.Name) and node.value in names:
            key = ("name", node.value)
        elif isinstance(node, cst.Attribute) and node.attr.value in attrs:
            key = ("attr", node.attr.value)
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


def _passed(tree: Collector, site, index: int, param: cst.Param) -> Optional[Frame]:
    value = bound_argument(site.node, index, param)
    if not isinstance(value, cst.Name):
        return None
    scope: Optional[Frame] = site.frame.scope if value is not param.default else tree.module_frame
    while scope is not None and scope.kind != "module":
        if value.value in scope.bindings or value.value in scope.imports:
            return None  # a local or a parameter: not known here
        scope = scope.parent
    return _module_def(tree, value.value) if scope is not None else None


def _module_def(tree: Collector, name: str) -> Optional[Frame]:
    module = tree.module_frame
    if name in module.imports or not tree.bound_once(module, name):
        return None
    return module.functions.get(name)


def _called_name(call: cst.Call) -> Optional[str]:
    return call.func.value if isinstance(call.func, cst.Name) else None
