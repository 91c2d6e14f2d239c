"""A fill value that a function of this file returns from `torch.finfo` of its PARAMETER's dtype
(ldm's and x-transformers' `max_neg_value(t)`: `return -torch.finfo(t.dtype).max`), read per
call through the same-file return summary (facts/function_returns.py): `max_neg_value(x)` is
`-torch.finfo(x.dtype).max` with the call's argument substituted. AMP111 asks it where the
fill is not a finfo written inline. A helper of ANOTHER file (ControlNet's ldm/util.py) is read
through the project pass's summary of that file (`FunctionReturns.remote`)."""

from __future__ import annotations

import libcst as cst

from amplint.analysis.facts.device_values import plain_bindings


def helper_finfo(facts, expr: cst.BaseExpression, frame):
    """(finfo call, its argument, the call's argument `x`, "min"/"max", False, the call, the
    parameter) for a call of a function of this file every `return` of which is
    `[-]torch.finfo(p.dtype).min/max` of one parameter `p` it never rebinds (ldm's
    `max_neg_value(t)`): the finfo reads the dtype of what the call passes for `p`."""
    found = facts.function_returns.of_call(expr, frame)
    if found is None:
        return _remote_finfo(facts, expr, frame)
    shapes = set()
    finfo_call = None
    for value in found.values:
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if not (isinstance(value, cst.Attribute) and value.attr.value in ("min", "max")):
            return None
        call = value.value
        if not (isinstance(call, cst.Call) and len(call.args) == 1 and call.args[0].keyword is None
                and facts.resolve(call.func, found.function) == "torch.finfo"):
            return None
        arg = call.args[0].value
        if not (isinstance(arg, cst.Attribute) and arg.attr.value == "dtype" and isinstance(arg.value, cst.Name)):
            return None
        shapes.add((arg.value.value, value.attr.value))
        finfo_call = finfo_call or call
    if len(shapes) != 1 or finfo_call is None:
        return None
    ((param, bound),) = shapes
    if plain_bindings(found.function.node, param) != 1:
        return None  # not a parameter, or rebound in the function
    x = found.argument(param)
    if not isinstance(x, cst.Name):
        return None
    return finfo_call, finfo_call.args[0].value, x, bound, False, expr, param


def _remote_finfo(facts, expr: cst.BaseExpression, frame):
    """The same for a function of another file (the project pass's EntryReturn "finfo", from
    project/return_values.py): (the call, the call, `x`, bound, False, the call, the parameter,
    "util.py: max_neg_value" and the line of its `def`, for the message)."""
    entry = facts.function_returns.remote(expr, frame)
    if entry is None or entry.kind != "finfo" or any(a.star for a in expr.args):
        return None
    x = None
    for position, arg in enumerate(expr.args):
        if arg.keyword is None and position == entry.index or \
                arg.keyword is not None and arg.keyword.value == entry.param:
            x = arg.value
    if not isinstance(x, cst.Name):
        return None
    return expr, expr, x, entry.bound, False, expr, entry.param, (entry.callee, entry.line)
