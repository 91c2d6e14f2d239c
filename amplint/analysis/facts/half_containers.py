"""Float16 tensors kept in a local dict or list, for facts/half_values.py: RWKV's
`w = {k: v.half() for k, v in torch.load(path).items()}` then `w["head"] @ x`. A local bound to
a dict or list display or comprehension has the kind of its items when every item has the same
one (float16 or float32); an item read out of it (`w["head"]`, `layers[0]`) then has that kind.

Exact or nothing: a store `w[k] = v` of another kind, a method that may add items (`update`,
`append`, `setdefault`, ...), or passing the container to any call but a few that only read it
(`len`, `torch.stack`, ...) makes its items unknown from there on (in the walk's source order)."""

from __future__ import annotations

from typing import List

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import unparen

CONTAINERS = (cst.Dict, cst.DictComp, cst.List, cst.ListComp)
_ADDERS = frozenset({"update", "append", "extend", "insert", "setdefault", "__setitem__", "fromkeys"})
_READERS = frozenset({"len", "list", "tuple", "sorted", "enumerate", "zip", "isinstance", "print",
                      "torch.stack", "torch.cat", "torch.concat", "torch.concatenate"})
_UNKNOWN = (None, None, None)


def container_items(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The item expressions of a dict/list display or comprehension ([] when one is starred)."""
    if isinstance(expr, cst.DictComp):
        return [expr.value]
    if isinstance(expr, cst.ListComp):
        return [expr.elt]
    if isinstance(expr, cst.Dict):
        if any(not isinstance(e, cst.DictElement) for e in expr.elements):
            return []
        return [e.value for e in expr.elements]
    if any(not isinstance(e, cst.Element) for e in expr.elements):
        return []
    return [e.value for e in expr.elements]


def note_store(values, flow, scope: int, target: cst.Subscript, entry) -> None:
    """`w[k] = v`: the container's items keep their kind only if `v` has it."""
    base = unparen(target.value)
    if not isinstance(base, cst.Name) or (scope, base.value) not in values._containers:
        return
    held = flow.get(base.value)
    if held is None or held[:2] != entry[:2]:
        flow[base.value] = _UNKNOWN


def note_container_call(values, flow, scope: int, call: cst.Call, frame) -> None:
    """A call that may add items to a container of the walk: its items are unknown after it."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _ADDERS:
        base = unparen(func.value)
        if isinstance(base, cst.Name) and (scope, base.value) in values._containers:
            flow[base.value] = _UNKNOWN
    for arg in call.args:
        value = unparen(arg.value)
        if not isinstance(value, cst.Name) or (scope, value.value) not in values._containers:
            continue
        name = func.value if isinstance(func, cst.Name) else None
        qualified = resolve_expr(func, frame)
        if arg.star or not ((name in _READERS and qualified is None) or qualified in _READERS):
            flow[value.value] = _UNKNOWN
