"""Loop and comprehension targets for the class flow (flowfacts.py, and ast_flow.py its `ast`
twin): the names a target binds, as LibCST and `ast` spell them, and the ("part", value, i)
values a tuple target takes an item apart into (`for attn, ff in self.layers`)."""

from __future__ import annotations

import ast
from typing import Dict, List, Set

import libcst as cst

from amplint.analysis.project.flowvalues import Val


def cst_target_names(target):
    """A loop's tuple target as nested lists of names (None: a starred or other element)."""
    if isinstance(target, cst.Name):
        return target.value
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    out = []
    for element in target.elements:
        if isinstance(element, cst.StarredElement):
            return None
        inner = cst_target_names(element.value)
        if inner is None:
            return None
        out.append(inner)
    return out


def bind_parts(assigns: Dict[str, List[Val]], names, value: Val) -> None:
    """`names` (a name, or nested lists of names) bound to `value`, a tuple taken apart."""
    if isinstance(names, str):
        assigns.setdefault(names, []).append(value)
        return
    for index, inner in enumerate(names):
        bind_parts(assigns, inner, ("part", value, index))


def cst_bound_names(target) -> List[str]:
    """The plain names an assignment target binds (`m`, `(norm, block)`, `*rest`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in cst_bound_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return cst_bound_names(target.value)
    return []


def comprehended(tree, bound_names) -> Dict[int, Set[str]]:
    """id(scope) -> the names only its comprehensions' `for` clauses bind: neither the scope
    nor the module binds them otherwise, so a read of one is a read of the comprehension's
    (a name the function also binds keeps its own values, never the comprehension's)."""
    out: Dict[int, Set[str]] = {}
    module = tree.module_frame.bindings
    for clause, frame in tree.comprehensions:
        scope = frame.scope
        names = [n for n in bound_names(clause.target) if n not in scope.bindings and n not in module]
        if names:
            out.setdefault(id(scope), set()).update(names)
    return out


def ast_target_names(target):
    """cst_target_names on the `ast` tree."""
    if type(target) is ast.Name:
        return target.id
    if type(target) not in (ast.Tuple, ast.List):
        return None
    out = []
    for element in target.elts:
        inner = None if type(element) is ast.Starred else ast_target_names(element)
        if inner is None:
            return None
        out.append(inner)
    return out


def ast_bound_names(target) -> List[str]:
    """cst_bound_names on the `ast` tree."""
    kind = type(target)
    if kind is ast.Name:
        return [target.id]
    if kind in (ast.Tuple, ast.List):
        return [name for element in target.elts for name in ast_bound_names(element)]
    if kind is ast.Starred:
        return ast_bound_names(target.value)
    return []
