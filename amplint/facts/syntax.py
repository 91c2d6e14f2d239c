"""Small questions about libcst nodes that several facts ask."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from amplint.facts.tree import self_attr


def unparen(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression without its parentheses (libcst keeps them on the node)."""
    if getattr(expr, "lpar", None) and not isinstance(expr, cst.Tuple):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def holder_key(expr: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """What a value is held in, as a key: `x` -> ("name", "x"), `self.x` -> ("self", "x");
    None for anything else (`a.b`, `d[k]`)."""
    if isinstance(expr, cst.Name):
        return ("name", expr.value)
    attr = self_attr(expr)
    return ("self", attr) if attr is not None else None


def params(node: cst.CSTNode) -> List[cst.Param]:
    """A function's named parameters (positional-only, ordinary, keyword-only), in order."""
    if not isinstance(node, cst.FunctionDef):
        return []
    found = node.params
    return list(found.posonly_params) + list(found.params) + list(found.kwonly_params)


def bound_names(target: cst.BaseExpression) -> List[str]:
    """The names an assignment target binds: `a`, `a, (b, *c)` -> a, b, c; none for `x.y`/`x[i]`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return bound_names(target.value)
    return []


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def calls_in(node: Optional[cst.CSTNode]) -> List[cst.Call]:
    """The calls of an expression in evaluation order (inner arguments before the outer call);
    a lambda's body does not run there and is skipped."""
    if node is None:
        return []
    visitor = _Calls()
    node.visit(visitor)
    return visitor.calls
