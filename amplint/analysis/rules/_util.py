"""Small helpers rules share: argument access, node construction, how a region is cited."""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import libcst as cst

from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.tree import argument, keyword, positional  # noqa: F401  (re-exported)

NO_SPACE = cst.SimpleWhitespace("")


def has_star_args(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def with_args(
    call: cst.Call, args: Sequence[cst.Arg], original: Optional[cst.Call] = None
) -> cst.Call:
    """`call` with these arguments; the last one loses a comma that only separated it from an
    argument now gone (`original`: the call the arguments came from, default `call`)."""
    args = list(args)
    source = (original or call).args
    if args and source and args[-1] is not source[-1]:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=NO_SPACE, whitespace_after=NO_SPACE),
    )


def atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` made safe to put in front of `.attr` (parenthesized unless it is an atom)."""
    if isinstance(
        expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString,
               cst.List, cst.Tuple, cst.Dict)
    ) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(receiver: cst.BaseExpression, method: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=atom(receiver), attr=cst.Name(method)), args=list(args))


def dotted_expr(dotted: str) -> cst.BaseExpression:
    parts = dotted.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr


def is_float_literal(expr: cst.BaseExpression) -> bool:
    """`1.5`, `-1e9`, `float("inf")`, `math.inf` and friends."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return is_float_literal(expr.expression)
    if isinstance(expr, cst.Float):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "float":
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("inf", "nan", "pi", "e"):
        return True
    return False


def has_float_data(expr: cst.BaseExpression) -> bool:
    """A list/tuple literal holding at least one float literal (nested lists included)."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(has_float_data(e.value) or is_float_literal(e.value) for e in expr.elements)
    return False


def region_note(region: Region) -> Tuple[str, Dict[str, cst.CSTNode]]:
    """How a message cites the region: "(autocast at line N)" or via a call."""
    root = region.root
    if root.external is not None:
        cite = root.external.replace("{", "{{").replace("}", "}}")
        if region.kind == "call":
            return f"(called at line {{call_line}}; {cite})", {"call_line": region.origin}
        return f"({cite})", {}
    if region.kind == "call":
        return (
            "(called at line {call_line} under the autocast region at line {region_line})",
            {"call_line": region.origin, "region_line": root.origin},
        )
    if region.kind == "framework":
        return "(inside the framework's autocast region at line {region_line})", {
            "region_line": root.origin
        }
    return "(autocast at line {region_line})", {"region_line": root.origin}


def code_of(module: cst.Module, node: cst.CSTNode) -> str:
    return module.code_for_node(node)


# -- float16 code outside autocast (AMP140, AMP141): the analysis lives in the facts --------------

from amplint.analysis.facts.float16_scope import float16_functions, in_float16_scope  # noqa: E402,F401  (re-exported for the rules)
from amplint.analysis.facts.half_values import (  # noqa: E402,F401  (re-exported for the rules)
    FLOAT32_NAMES, data_chain, is_float32_cast,
)


def literal_float(expr: cst.BaseExpression) -> Optional[float]:
    """The value of a float literal (`1e-8`, `-1e9`, `(1e-12)`), else None."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = literal_float(expr.expression)
        if inner is None:
            return None
        return -inner if isinstance(expr.operator, cst.Minus) else inner
    if isinstance(expr, cst.Float):
        try:
            return float(expr.value.replace("_", ""))
        except ValueError:
            return None
    return None
