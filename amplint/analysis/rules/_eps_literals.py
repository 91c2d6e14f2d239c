"""AMP140's literal eps: the value a name or `self.eps` holds when it is bound once, to a literal
or from a parameter's literal default."""

from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from amplint.analysis.facts.dtype_value import assigned_names
from amplint.analysis.facts.half_values import _params
from amplint.analysis.facts.tree import Frame, iter_nodes, self_attr
from amplint.analysis.rules._util import literal_float


def self_attr_literal(expr: cst.BaseExpression, frame: Frame, facts) -> Optional[float]:
    """The value of `self.eps` when the class sets it exactly once, from a literal or from a
    parameter of that method with a literal default (`def __init__(self, eps=1e-12)`)."""
    attr = self_attr(expr)
    cls = frame.class_frame
    if attr is None or cls is None:
        return None
    values = [(a.value, a.frame) for a in facts.index.self_assigns(cls).get(attr, [])]
    if len(values) != 1:
        return None
    value, where = values[0]
    literal = literal_float(value)
    if literal is not None:
        return literal
    if isinstance(value, cst.Name) and where.function is not None:
        for param in _params(where.function.node):
            if param.name.value == value.value and param.default is not None:
                if value.value in _reassigned(where.function, facts):
                    return None
                return literal_float(param.default)
    return None


def local_literal(name: str, frame: Frame, facts) -> Optional[float]:
    """The value of a local `eps` the function binds once, to a literal (`eps = 1e-12`), or
    of a parameter with a literal default it never rebinds (`def dice(x, eps=1e-8)`)."""
    function = frame.function
    if function is None or name in facts.tree.walrus_names:
        return None
    counts = facts.__dict__.setdefault("_amp140_bindings", {})
    if id(function) not in counts:  # every binding statement of the function, counted
        bound: Dict[str, int] = {}
        for bound_name in assigned_names(function.node):
            bound[bound_name] = bound.get(bound_name, 0) + 1
        for node in iter_nodes(function.node):
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    bound[item.name.value] = 2
        counts[id(function)] = bound
    times = counts[id(function)].get(name, 0)
    param = next((p for p in _params(function.node) if p.name.value == name), None)
    if param is not None:
        return literal_float(param.default) if param.default is not None and not times else None
    sites = _sites_in(name, function, facts)
    if times != 1 or len(sites) != 1 or len(sites[0].targets) != 1:
        return None
    return literal_float(sites[0].value)


def _sites_in(name: str, function: Frame, facts) -> list:
    """The assignments to `name` in `function`, in order (grouped once per name per file: a
    scan of every assignment to `name` per function was quadratic, issue 34)."""
    groups = facts.__dict__.setdefault("_amp140_sites", {})
    by_function = groups.get(name)
    if by_function is None:
        by_function = groups[name] = {}
        for assign in facts.index.assigns_to(name):
            by_function.setdefault(id(assign.frame.function), []).append(assign)
    return by_function.get(id(function), [])


def _reassigned(function: Frame, facts) -> Set[str]:
    """The bare names a function assigns (all functions' sets made in one scan of the file)."""
    by_function = facts.__dict__.get("_amp140_reassigned")
    if by_function is None:
        by_function = facts.__dict__["_amp140_reassigned"] = {}
        for assign in facts.tree.assigns:
            names = by_function.setdefault(id(assign.frame.function), set())
            for target in assign.targets:
                if isinstance(target, cst.Name):
                    names.add(target.value)
    return by_function.get(id(function), set())
