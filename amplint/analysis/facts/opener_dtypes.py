"""The dtype of a region an opener (a function or method returning, or yielding under, an
autocast: facts/context_functions.py) opens when its autocast's `dtype=` is a parameter of the
opener (MiniGPT-4's and LAVIS's `BaseModel.maybe_autocast`):

    def maybe_autocast(self, dtype=torch.bfloat16):
        return torch.autocast("cuda", dtype=dtype)

    with model.maybe_autocast():                    # a bfloat16 region
    with model.maybe_autocast(torch.float16):       # a float16 region

Per call, as Python binds it: the call's argument for that parameter (a `torch.<dtype>` as
written), else the parameter's default. Exact or nothing: every active autocast of the opener
writes `dtype=` as the same parameter, the opener never binds that name again, and a call that
passes a `*args` / `**kw`, or anything but a `torch.<dtype>` for it, gives no dtype."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import rebinds
from amplint.analysis.facts.tree import Frame, dotted_name

DtypeParam = Tuple[int, str, Optional[str]]  # (position a call fills it at, -1 keyword-only; name; default's dtype)


def dtype_param(callee: Frame, regions: List[object]) -> Optional[DtypeParam]:
    """The parameter every active region of `callee` takes its `dtype=` from, with its default's
    dtype (None: no default, or not a `torch.<dtype>`), or None."""
    active = [r for r in regions if r is not None and r.active]  # type: ignore[attr-defined]
    node = callee.node
    if not active or not isinstance(node, cst.FunctionDef):
        return None
    written = {r.dtype_expr.value if r.dtype is None and isinstance(r.dtype_expr, cst.Name)  # type: ignore
               else None for r in active}
    if len(written) != 1 or None in written:
        return None
    (name,) = written
    params = node.params
    positional = list(params.posonly_params) + list(params.params)
    if callee.parent is not None and callee.parent.kind == "class":
        if any(resolve_expr(d.decorator, callee.parent) == "staticmethod" for d in node.decorators):
            pass
        elif positional:
            positional = positional[1:]  # `self` / `cls`: the call reaches it through the instance
        else:
            return None
    found: Optional[Tuple[int, cst.Param]] = None
    for index, param in enumerate(positional):
        if param.name.value == name:
            found = (index, param)
    for param in params.kwonly_params:
        if param.name.value == name:
            found = (-1, param)
    if found is None or rebinds(node.body, name):
        return None
    index, param = found
    return index, name, _torch_dtype(param.default) if param.default is not None else None


def call_dtype(call: cst.Call, param: DtypeParam) -> Optional[str]:
    """The dtype the region `call` opens gets through the opener's parameter `param`."""
    index, name, default = param
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return _torch_dtype(arg.value)
            continue
        if position == index:
            return _torch_dtype(arg.value)
        position += 1
    return default


def _torch_dtype(expr: cst.BaseExpression) -> Optional[str]:
    written = dotted_name(expr)
    if not written or written[0] != "torch":
        return None
    dtype = _R.DTYPE_NAMES.get(".".join(written))
    return dtype if dtype in _R.FLOAT_ORDER else None
