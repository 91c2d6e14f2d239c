"""Expression shapes AMP141 (half-reduction) looks for: reductions, squares, exponentials,
hand-written softmax, and whether an exponent is max-subtracted."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import Frame
from amplint.analysis.rules._util import argument, keyword, literal_float
from amplint.analysis.facts.half_values import _unparen


def _reduced(call: cst.Call, frame: Frame) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(method, operand) for `x.sum(...)` or `torch.sum(x, ...)` style reductions."""
    func = call.func
    qualified = resolve_expr(func, frame)
    if qualified is not None:
        if qualified.startswith("torch.") and qualified.count(".") == 1:
            arg = argument(call, 0, "input")
            if arg is not None:
                return qualified.split(".")[1], arg.value
        return None
    if isinstance(func, cst.Attribute):
        return func.attr.value, func.value
    return None


def _square_base(expr: cst.BaseExpression, frame: Frame) -> Optional[cst.BaseExpression]:
    """`x` of `x.pow(2)`, `x ** 2`, `torch.pow(x, 2)`, `x.square()`, `torch.square(x)`, `x * x`."""
    expr = _unparen(expr)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power) and _is_two(expr.right):
            return expr.left
        if isinstance(expr.operator, cst.Multiply) and expr.left.deep_equals(expr.right):
            return expr.left
        return None
    if isinstance(expr, cst.Call):
        reduced = _reduced(expr, frame)
        if reduced is None:
            return None
        method, base = reduced
        if method == "square" and (isinstance(expr.func, cst.Attribute) or expr.args):
            return base
        if method == "pow":
            offset = 0 if resolve_expr(expr.func, frame) is None else 1
            exponent = argument(expr, offset, "exponent")
            if exponent is not None and _is_two(exponent.value):
                return base
    return None


def _is_two(expr: cst.BaseExpression) -> bool:
    expr = _unparen(expr)
    if isinstance(expr, cst.Integer):
        return expr.value == "2"
    return literal_float(expr) == 2.0


def _exp_argument(expr: cst.BaseExpression, frame: Frame) -> Optional[cst.BaseExpression]:
    """`x` of `x.exp()` / `torch.exp(x)`."""
    expr = _unparen(expr)
    if isinstance(expr, cst.Call):
        reduced = _reduced(expr, frame)
        if reduced is not None and reduced[0] == "exp":
            return reduced[1]
    return None


def _stabilised(exponent: cst.BaseExpression, frame: Frame, values) -> bool:
    """`x - m` (max-subtracted) or `-x`, also through a local assigned from one: exp of it
    cannot overflow for the usual inputs."""
    exponent = _unparen(exponent)
    if isinstance(exponent, cst.Name):
        assigned = values.assigned_value(exponent.value, frame)
        if assigned is not None:
            exponent = _unparen(assigned)
    if isinstance(exponent, cst.BinaryOperation) and isinstance(exponent.operator, cst.Subtract):
        return True
    return isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus)


def _stable_here(exponent: cst.BaseExpression, frame: Frame) -> bool:
    """`_stabilised` without a walk's flow: a local counts only when the function assigns it
    once (from `x - m` or `-x`); assigned more than once, or at module level, it is taken as
    stabilised (not reported)."""
    exponent = _unparen(exponent)
    if isinstance(exponent, cst.Name):
        found = _assigned_values(exponent.value, frame)
        if found is not None and len(found) > 1:
            return True
        if found is None and frame.function is None:
            return True
        if found:
            exponent = _unparen(found[0])
    if isinstance(exponent, cst.BinaryOperation) and isinstance(exponent.operator, cst.Subtract):
        return True
    return isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus)


def _softmax_parts(node: cst.BinaryOperation, frame: Frame):
    """(exponent, dim) of `E / E.sum(dim, keepdim=True)` where E is `exp(x)` or a local
    assigned once from it; dim is None when the fix cannot restate it."""
    numerator = _unparen(node.left)
    denominator = _unparen(node.right)
    if not isinstance(denominator, cst.Call):
        return None
    reduced = _reduced(denominator, frame)
    if reduced is None or reduced[0] != "sum":
        return None
    summed = _unparen(reduced[1])
    if not summed.deep_equals(numerator):
        return None
    exponent = _exp_argument(numerator, frame)
    if exponent is None and isinstance(numerator, cst.Name):
        exponent = _local_exp(numerator.value, frame)
    if exponent is None:
        return None
    keepdim = keyword(denominator, "keepdim")
    offset = 0 if resolve_expr(denominator.func, frame) is None else 1
    dim = argument(denominator, offset, "dim")
    keep = keepdim is not None and isinstance(keepdim.value, cst.Name) and keepdim.value.value == "True"
    if dim is None or not keep:
        return exponent, None
    return exponent, dim.value


def _local_exp(name: str, frame: Frame) -> Optional[cst.BaseExpression]:
    """The exponent when `name` is assigned exactly once in the function, from `exp(x)`."""
    found = _assigned_values(name, frame)
    if found is None or len(found) != 1:
        return None
    return _exp_argument(found[0], frame.function)


def _assignments(name: str, frame: Frame) -> int:
    found = _assigned_values(name, frame)
    return 0 if found is None else len(found)


def _assigned_values(name: str, frame: Frame) -> Optional[List[cst.BaseExpression]]:
    """Every value assigned to `name` in the function around `frame` (augmented assignments
    count twice), or None outside functions."""
    function = frame.function
    if function is None:
        return None
    found: List[cst.BaseExpression] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
            return node is function.node

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(node.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                found.append(node.value)
                found.append(node.value)

    function.node.visit(Finder())
    return found


def _calls_in(node: cst.CSTNode) -> List[cst.Call]:
    calls: List[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            calls.append(call)

    node.visit(Finder())
    return calls


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 48 else code[:45] + "..."
