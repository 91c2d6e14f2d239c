"""A half model cast back to float32 before it is used: `net_g = upsampler.export()` then
`net_g = net_g.float()` (or `net_g.float()`, `net_g = net_g.to(torch.float32)`) before the
optimizer is built. `nn.Module.float()` casts in place and returns the module, so from that
statement on the model is float32 whatever the cast before it did (the cast was a checkpoint or
export format, not the training precision).

Exact or nothing: the cast back is a statement of the same body as the cast's statement and the
later use's statement (one under an `if`, a loop, a `try` or a `with` may not run), between the
two; its outermost dtype step is a float32 cast whose receiver chain is rooted at the model's
name (`model.cuda().float()`), with `.to(device)` / `.cuda()` / `.train()` steps allowed.
The project pass asks the same of the calls it follows across files (AMP103's returned casts,
project/half_inplace.py `floated_between` / `floated_on_return`); AMP152 asks it here."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import parents_of
from amplint.analysis.facts.tree import dotted_name

_FLOAT32 = ("float32", "float")
_HALF = ("float16", "half", "bfloat16")


def cast_back_between(scope: cst.CSTNode, cast_stmt: cst.CSTNode, use: cst.CSTNode,
                      model: Tuple[str, ...], module: bool = True) -> bool:
    """Whether a statement of the body holding `cast_stmt` (a statement line of `scope`), after
    it and before the statement of that body that holds `use`, casts `model` back to float32.
    `model.float()` as a statement counts only for a `module` (a tensor's `.float()` returns
    a new tensor and leaves the name half)."""
    parents = parents_of(scope)
    body = parents.get(id(cast_stmt))
    if body is None:
        return False
    later = use
    while later is not None and parents.get(id(later)) is not body:
        later = parents.get(id(later))
    if later is None:
        return False
    statements = list(getattr(body, "body", ()))
    try:
        start, end = statements.index(cast_stmt), statements.index(later)
    except ValueError:
        return False
    return any(_casts_back(stmt, model, module) for stmt in statements[start + 1:end])


def _casts_back(stmt: cst.CSTNode, model: Tuple[str, ...], module: bool) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        if len(small.targets) != 1 or dotted_name(small.targets[0].target) != model:
            return False
        value = small.value
    elif isinstance(small, cst.Expr) and module:
        value = small.value
    else:
        return False
    floated: Optional[bool] = None
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if floated is None:
            floated = _dtype_step(value)
        value = value.func.value
    return bool(floated) and dotted_name(value) == model


def _dtype_step(call: cst.Call) -> Optional[bool]:
    """True for a float32 cast, False for a half one, None for anything else."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method == "float":
        return True if not call.args else None
    if method in ("half", "bfloat16"):
        return False if not call.args else None
    if method not in ("to", "type"):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value != "dtype":
            continue
        value = arg.value
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "torch":
            if value.attr.value in _FLOAT32:
                return True
            if value.attr.value in _HALF:
                return False
    return None
