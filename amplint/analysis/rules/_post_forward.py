"""AMP104's fix: which statements after the backward belong after the forward pass (moving
them out of the autocast block is what the AMP docs ask), and which would take forward work
with them."""

from __future__ import annotations

from typing import List

import libcst as cst

from amplint.analysis.facts.tree import dotted_name, iter_nodes

# Calls that belong after the forward pass: moving them out of autocast is what the docs ask.
POST_FORWARD_METHODS = {
    "backward", "step", "zero_grad", "update", "unscale_", "clip_grad_norm_", "clip_grad_value_",
    "item", "log", "log_dict", "info", "debug", "warning", "add_scalar", "add_scalars",
    "set_postfix", "set_description", "manual_backward", "detach", "cpu", "append", "grad",
}
POST_FORWARD_FUNCTIONS = {"print", "clip_grad_norm_", "clip_grad_value_", "float", "len"}


def post_forward(stmt: cst.BaseStatement) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(_post_forward_small(small) for small in stmt.body)
    if isinstance(stmt, cst.If):
        blocks: List[cst.BaseSuite] = [stmt.body]
        orelse = stmt.orelse
        while orelse is not None:
            blocks.append(orelse.body)
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        return all(
            isinstance(block, cst.IndentedBlock) and all(post_forward(s) for s in block.body)
            for block in blocks
        )
    return False


def _post_forward_small(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, (cst.Pass, cst.Continue, cst.Break)):
        return True
    if isinstance(small, cst.Expr):
        return _post_forward_expr(small.value)
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        value = small.value
        return value is not None and _bookkeeping(value)
    return False


def _post_forward_expr(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute):
        # `model(x).sum().backward()` runs a forward: moving it would change its precision
        return func.attr.value in POST_FORWARD_METHODS and not _runs_other_calls(expr)
    if isinstance(func, cst.Name):
        return func.value in POST_FORWARD_FUNCTIONS
    return False


def _runs_other_calls(call: cst.Call) -> bool:
    """True when the receiver or arguments of `call` hold a call that is not bookkeeping
    (`scaler.scale(loss)` and the post-forward methods are)."""
    parts = [call.func.value] + [a.value for a in call.args]  # type: ignore[attr-defined]
    for part in parts:
        for node in iter_nodes(part):
            if isinstance(node, cst.Call):
                name = dotted_name(node.func)
                if not name or name[-1] not in POST_FORWARD_METHODS | {"scale"}:
                    return True
    return False


def _bookkeeping(expr: cst.BaseExpression) -> bool:
    """Values like `loss.item()`, `total + loss.item() * n`, `clip_grad_norm_(...)`."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _bookkeeping(expr.left) and _bookkeeping(expr.right)
    if isinstance(expr, cst.Call):
        return _post_forward_expr(expr)
    return False
