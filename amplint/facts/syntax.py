"""Small questions about libcst nodes that several facts ask."""

from __future__ import annotations

from typing import List

import libcst as cst


def unparen(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression without its parentheses (libcst keeps them on the node)."""
    if getattr(expr, "lpar", None) and not isinstance(expr, cst.Tuple):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def params(node: cst.CSTNode) -> List[cst.Param]:
    """A function's named parameters (positional-only, ordinary, keyword-only), in order."""
    if not isinstance(node, cst.FunctionDef):
        return []
    found = node.params
    return list(found.posonly_params) + list(found.params) + list(found.kwonly_params)
