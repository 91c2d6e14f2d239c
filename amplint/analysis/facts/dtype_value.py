"""The abstract value of the dtype fact (amplint.analysis.facts.dtypes): a set of possible dtypes,
whether it assumes floating operands, and whether the tensor is known 0-dim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import bound_names

FLOATS = frozenset(R.FLOAT_ORDER) | {"autocast"}
ELIGIBLE = frozenset({"float16", "bfloat16", "float32", "autocast"})  # autocast casts these
PYTHON = frozenset({"pyint", "pyfloat", "pybool"})
MAX_OPTIONS = 4


@dataclass(frozen=True)
class Dtype:
    options: FrozenSet[str]
    conditional: bool = False
    zero_dim: Optional[bool] = None  # known 0-dim / known >= 1-dim / unknown

    @property
    def exact(self) -> Optional[str]:
        return next(iter(self.options)) if len(self.options) == 1 else None

    @property
    def is_tensor(self) -> bool:
        return not (self.options & PYTHON)

    def may_be(self, *names: str) -> bool:
        return bool(self.options & set(names))


def of(name: str, zero_dim: Optional[bool] = None, conditional: bool = False) -> Dtype:
    return Dtype(frozenset({name}), conditional, zero_dim)


def join(a: Optional[Dtype], b: Optional[Dtype]) -> Optional[Dtype]:
    if a is None or b is None:
        return None
    options = a.options | b.options
    if len(options) > MAX_OPTIONS or (options & PYTHON and not options <= PYTHON):
        return None
    dim = a.zero_dim if a.zero_dim == b.zero_dim else None
    return Dtype(options, a.conditional or b.conditional, dim)


def _dims(values: Iterable[Dtype]) -> Optional[bool]:
    dims = [v.zero_dim for v in values if v.is_tensor]
    if any(d is False for d in dims):
        return False
    return True if dims and all(d is True for d in dims) else None


# Module methods that return the module itself and leave its parameters' dtype alone.
MODULE_KEEPS = frozenset({"cuda", "cpu", "train", "eval", "requires_grad_", "share_memory"})


def module_moved(call: cst.Call, frame) -> bool:
    """`module.cuda()`, `.train()`, `.to(device)`: the same module, its dtype kept. A `.to(...)`
    argument that may be a dtype (a variable that does not say it is a device) is not."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value in MODULE_KEEPS:
        return True
    return func.attr.value == "to" and device_only(call, frame)


def device_only(call: cst.Call, frame) -> bool:
    """`x.to(device)`, `x.to("cuda", non_blocking=True)`: a move, not a cast."""
    if not call.args:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value in ("non_blocking", "copy", "device"):
                continue
            return False
        value = arg.value
        if isinstance(value, cst.SimpleString):
            continue
        if isinstance(value, cst.Attribute) and value.attr.value == "device":
            continue
        if isinstance(value, cst.Name) and "device" in value.value and resolve_expr(value, frame) is None:
            continue
        return False
    return True


class Elements:
    """The tuple a split returns (`x.chunk(2)`, `qkv.unbind(0)`, `torch.split(x, n)`): tensors
    of the input's dtype (torch's TUPLE_KEEP ops, under autocast too: no autocast list names
    them). Only an index or an unpacking reads it; never bound to a name (DtypeFacts)."""

    def __init__(self, element: Dtype) -> None:
        self.element = element


def split_input(expr: cst.BaseExpression, frame) -> Optional[cst.BaseExpression]:
    """The tensor `expr` splits into parts of its dtype (R.TUPLE_KEEP), or None: `x` for
    `x.chunk(2)`, `qkv.unbind(0)`, `torch.split(x, n)`; `.split(...)` only with a size or `dim=`
    (a string's `.split(",")` is no tensor). For the walks that follow names without the dtype
    fact's values (half_values, escape)."""
    if not isinstance(expr, cst.Call) or any(
            a.keyword is not None and a.keyword.value == "dtype" for a in expr.args):
        return None
    func = expr.func
    qualified = resolve_expr(func, frame)
    if qualified is not None:
        first = expr.args[0] if expr.args else None
        ok = qualified.startswith("torch.") and qualified[len("torch."):] in R.TUPLE_KEEP
        return first.value if ok and first is not None and first.keyword is None else None
    if not isinstance(func, cst.Attribute) or func.attr.value not in R.TUPLE_KEEP:
        return None
    if func.attr.value == "split":
        first = expr.args[0] if expr.args else None
        sized = first is not None and (
            any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args)
            or first.keyword is None and isinstance(first.value, (cst.Integer, cst.List, cst.Tuple)))
        if not sized:
            return None
    return func.value


class ModuleValue:
    """A local or `self.` attribute bound to a torch.nn module constructor."""

    def __init__(self, op: str) -> None:
        self.op = op


class InstanceValue:
    """An instance of a module class of this file, the class known exactly
    (amplint.analysis.facts.instance_forwards): a call of it returns what its `forward` does."""

    def __init__(self, cls) -> None:
        self.cls = cls  # the class's Frame

    def __eq__(self, other) -> bool:
        return isinstance(other, InstanceValue) and other.cls is self.cls

    def __hash__(self) -> int:
        return id(self.cls)


class Items:
    """The tuple a function returns, item by item (`return logits, None, values`): only an
    unpacking or a literal index reads it, like `Elements`; never bound to a name."""

    def __init__(self, items) -> None:
        self.items = tuple(items)  # Dtype | None each


def join_values(a, b):
    """`join` for any value of the walk: tensors join; instances of one class and item tuples of
    one length keep (item by item); anything else is unknown."""
    if isinstance(a, Items) and isinstance(b, Items):
        if len(a.items) != len(b.items):
            return None
        return Items(join_values(x, y) for x, y in zip(a.items, b.items))
    if isinstance(a, InstanceValue) or isinstance(b, InstanceValue):
        return a if a == b else None
    if isinstance(a, Dtype) and isinstance(b, Dtype):
        return join(a, b)
    return None



def assigned_names(node: cst.CSTNode) -> List[str]:
    """Names the statements under `node` bind in their own scope, read statement by statement
    (nested defs and classes bind only their name; names bound by `:=` are never tracked, see
    DtypeFacts)."""
    names: List[str] = []
    stack = [node]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                names.extend(_small_binds(small))
            continue
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt is not node:
            names.append(stmt.name.value)
            continue
        if isinstance(stmt, cst.For):
            names.extend(bound_names(stmt.target))
        elif isinstance(stmt, cst.With):
            names.extend(n for item in stmt.items if item.asname is not None
                         for n in bound_names(item.asname.name))
        elif isinstance(stmt, cst.ExceptHandler) and stmt.name is not None:
            names.extend(bound_names(stmt.name.name))
        elif isinstance(stmt, (cst.Import, cst.ImportFrom)) or not hasattr(stmt, "body"):
            names.extend(_small_binds(stmt))
            continue
        for part in ("body", "orelse", "handlers", "finalbody", "cases"):
            value = getattr(stmt, part, None)
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, cst.IndentedBlock):
                stack.extend(value.body)
            else:
                stack.append(value)
    return names


def _small_binds(small: cst.CSTNode) -> List[str]:
    if isinstance(small, cst.Assign):
        return [n for target in small.targets for n in bound_names(target.target)]
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        return bound_names(small.target)
    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        found = []
        for alias in small.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            while isinstance(bound, cst.Attribute):
                bound = bound.value
            if isinstance(bound, cst.Name):
                found.append(bound.value)
        return found
    return []
