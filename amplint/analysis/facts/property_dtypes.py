"""`self.X` read through a property: a property's value is what its getter returns. For AMP111 the
getter that matters returns the dtype of the module's own parameters,
`return next(self.parameters()).dtype` (transformers' `ModuleUtilsMixin.dtype`, BLIP's and
many repositories' copies of it): `torch.finfo(self.dtype).min` is then the range of the
parameters' dtype, float32 for a float32 module under autocast, while the scores it fills are
float16 there.

The property is found on the class itself (this file) or, through the class's bases in their
order, in another file of the project (EntryParamsDtype, from
amplint.analysis.project.property_entries). A class that stores `self.X = ...` itself is not
read: the name may then hold something else. Nothing else is guessed: another getter body, a
base outside the project other than `nn.Module`/`object` before the one that defines it, a
setter, give no answer."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from amplint.analysis.facts.tree import Frame

# bases that define no `dtype`/`device`-style attribute of their own: the walk goes past them
PLAIN_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "object"})


@dataclass(frozen=True)
class EntryParamsDtype:
    """Attribute `attr` of class `cls` (of this file) is a property of a base class in another
    file that returns the dtype of the module's parameters."""

    cls: str
    attr: str
    cite: str  # "the property `dtype` of ModuleUtilsMixin at models/module_utils.py:14"


def params_dtype_property(facts, cls_frame: Frame, attr: str) -> Optional[str]:
    """Where `self.<attr>` of this class is a property returning its parameters' dtype (the
    citation), or None."""
    node = cls_frame.node
    if not isinstance(node, cst.ClassDef):
        return None
    if facts.index.self_assigns(cls_frame).get(attr):
        return None
    own = [s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == attr]
    if own:
        if len(own) == 1 and _is_property(own[0]) and cst_returns_params_dtype(own[0]):
            return f"the property `{attr}` of {node.name.value}"
        return None
    if any(_binds(s, attr) for s in node.body.body):
        return None
    for entry in facts.entries:
        if isinstance(entry, EntryParamsDtype) and entry.cls == node.name.value and entry.attr == attr:
            return entry.cite
    return None


def _is_property(function: cst.FunctionDef) -> bool:
    return len(function.decorators) == 1 and isinstance(function.decorators[0].decorator, cst.Name) \
        and function.decorators[0].decorator.value == "property"


def _binds(stmt, attr: str) -> bool:
    """A class-body statement that binds `attr` otherwise (`dtype = ...`, a nested class)."""
    if isinstance(stmt, cst.ClassDef):
        return stmt.name.value == attr
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
            if any(isinstance(t, cst.Name) and t.value == attr for t in targets):
                return True
    return False


def cst_returns_params_dtype(function: cst.FunctionDef) -> bool:
    """The body is `return next(self.parameters()).dtype` (or `next(iter(...))`), a docstring
    allowed before it; `self` is the first parameter."""
    params = function.params.params
    if not params or not isinstance(function.body, cst.IndentedBlock):
        return False
    me = params[0].name.value
    body = list(function.body.body)
    if body and _docstring(body[0]):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    ret = body[0].body[0]
    if not isinstance(ret, cst.Return) or ret.value is None:
        return False
    value = ret.value
    if not (isinstance(value, cst.Attribute) and value.attr.value == "dtype"):
        return False
    call = value.value
    if not (isinstance(call, cst.Call) and _name(call.func) == "next" and len(call.args) == 1):
        return False
    inner = call.args[0].value
    if isinstance(inner, cst.Call) and _name(inner.func) == "iter" and len(inner.args) == 1:
        inner = inner.args[0].value
    return (isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute)
            and inner.func.attr.value == "parameters" and _name(inner.func.value) == me)


def _docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
        stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _name(expr) -> Optional[str]:
    return expr.value if isinstance(expr, cst.Name) else None


def ast_returns_params_dtype(function) -> bool:
    """cst_returns_params_dtype for an `ast.FunctionDef` (the project pass reads other files
    with `ast`), with the single `@property` decorator."""
    if len(function.decorator_list) != 1 or not (
        isinstance(function.decorator_list[0], ast.Name) and function.decorator_list[0].id == "property"
    ):
        return False
    args = function.args.args
    if not args:
        return False
    me = args[0].arg
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    value = body[0].value
    if not (isinstance(value, ast.Attribute) and value.attr == "dtype"):
        return False
    call = value.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "next"
            and len(call.args) == 1 and not call.keywords):
        return False
    inner = call.args[0]
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "iter" \
            and len(inner.args) == 1:
        inner = inner.args[0]
    return (isinstance(inner, ast.Call) and not inner.args and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "parameters" and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id == me)
