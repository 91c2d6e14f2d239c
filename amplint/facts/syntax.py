"""Small questions about libcst nodes that several facts ask."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst


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
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return ("self", expr.attr.value)
    return None


def params(node: cst.CSTNode) -> List[cst.Param]:
    """A function's named parameters (positional-only, ordinary, keyword-only), in order."""
    if not isinstance(node, cst.FunctionDef):
        return []
    found = node.params
    return list(found.posonly_params) + list(found.params) + list(found.kwonly_params)
