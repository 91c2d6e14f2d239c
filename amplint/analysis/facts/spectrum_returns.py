"""Spectra that are float32 whatever the signal's dtype: `torch.stft(x, window=w.float())`
promotes a float16 signal with the float32 window to complex64, and its real view
(`torch.view_as_real`) is float32; a method of the class that returns such a spectrum
(DeepLearningExamples wav2vec2's `FilterbankFeatures.stft`) does too. Asked by
Float16Values (half_values.py) before it takes a call in float16 code for float16."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.callgraph import own_returns
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import bound_names, calls_in, code_children, keyword, unparen
from amplint.analysis.facts.tree import Frame


def _op(call: cst.Call, frame: Frame) -> Optional[str]:
    """The torch op a call runs: `torch.stft(...)` or the tensor method `x.stft(...)`."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    qualified = resolve_expr(func, frame)
    if qualified is not None:
        return func.attr.value if qualified == f"torch.{func.attr.value}" else None
    return func.attr.value


def float32_window(values, call: cst.Call, frame: Frame, depth: int) -> bool:
    """`call` is a window-promoting op (`stft`) given a window the file shows is float32."""
    if _op(call, frame) not in R.WINDOW_PROMOTE:
        return False
    window = keyword(call, "window")
    return window is not None and values._kind(window.value, frame, depth + 1, False) == "float32"


def _source(call: cst.Call, frame: Frame) -> Optional[cst.BaseExpression]:
    """The tensor a dtype-keeping op or a real view reads: its receiver or first argument."""
    op = _op(call, frame)
    if op not in R.KEEP and op not in R.REAL_VIEWS:
        return None
    func = call.func
    assert isinstance(func, cst.Attribute)
    if resolve_expr(func, frame) is None:
        return func.value
    first = call.args[0] if call.args else None
    return first.value if first is not None and first.keyword is None and not first.star else None


def _assigned_once(function: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """The value of the one `name = value` of `function`, when nothing else binds `name`."""
    found = []
    pending = [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(node.value)
                elif name in bound_names(target.target):
                    return None
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and \
                name in bound_names(node.target):
            return None
        elif isinstance(node, (cst.AsName, cst.NamedExpr)) and name in bound_names(
                node.name if isinstance(node, cst.AsName) else node.target):
            return None
        pending.extend(code_children(node))
    return found[0] if len(found) == 1 else None


def _calls_window_op(values, function: cst.FunctionDef) -> bool:
    """The function calls a window-promoting op (`.stft(...)`) somewhere: without one no
    return of it is such a spectrum (one walk per function and file, not one per call of it)."""
    memo = values.__dict__.setdefault("_window_ops", {})
    found = memo.get(id(function))
    if found is None:
        found = memo[id(function)] = any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value in R.WINDOW_PROMOTE
            for c in calls_in(function.body))
    return found


def returns_float32(values, method: Frame, depth: int) -> bool:
    """Every `return` of `method` gives a float32 spectrum: a window-promoting op with a
    float32 window, read through dtype-keeping ops and real views, or a local assigned once
    from one."""
    function = method.node
    if not isinstance(function, cst.FunctionDef) or not _calls_window_op(values, function):
        return False
    returns = own_returns(function.body)
    return bool(returns) and all(
        r.value is not None and _spectrum(values, r.value, method, depth) for r in returns)


def _spectrum(values, expr: cst.BaseExpression, frame: Frame, depth: int) -> bool:
    for _ in range(16):
        expr = unparen(expr)
        if isinstance(expr, cst.Name):
            value = _assigned_once(frame.node, expr.value)
            if value is None:
                return False
            expr = value
        elif isinstance(expr, cst.Call):
            if float32_window(values, expr, frame, depth):
                return True
            source = _source(expr, frame)
            if source is None:
                return False
            expr = source
        else:
            return False
    return False
