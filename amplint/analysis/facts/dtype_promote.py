"""Type promotion of binary ops and the dtype of literal factories, for amplint.analysis.facts.dtypes:
torch's result_type (c10/core/ScalarType.h promoteTypes; aten/src/ATen/native/TypeProperties.cpp:
category first, then dimensioned tensors over 0-dim ones, then Python numbers)."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.dtype_value import FLOATS, MAX_OPTIONS, PYTHON, Dtype, _dims, of


def promote(a: Dtype, b: Dtype, op: str) -> Optional[Dtype]:
    """torch's result_type for a binary op (c10/core/ScalarType.h, TypeProperties.cpp)."""
    conditional = a.conditional or b.conditional
    dim = _dims([a, b])
    options = set()
    for x in a.options:
        for y in b.options:
            options.add(_promote_one(x, y, a.zero_dim, b.zero_dim, op))
    if None in options:
        return None
    if op == "div":
        options = {"float32" if o in ("integer", "bool") else o for o in options}
    flat = set()
    for o in options:
        flat |= set(o) if isinstance(o, frozenset) else {o}
    if len(flat) > MAX_OPTIONS or flat & PYTHON:
        return None
    return Dtype(frozenset(flat), conditional, dim)


def _promote_one(x: str, y: str, x0: Optional[bool], y0: Optional[bool], op: str):
    category = {"bool": 0, "integer": 1, "pybool": 0, "pyint": 1, "pyfloat": 2}
    if x in PYTHON and y in PYTHON:
        return None
    if y in PYTHON:
        x, y, x0, y0 = y, x, y0, x0
    if x in PYTHON:  # a Python number against tensor y
        if y in FLOATS:
            return y
        if category[x] > category.get(y, 3):
            return "float32" if x == "pyfloat" else "integer"
        return y
    if x == y:
        return x
    cx, cy = category.get(x, 2), category.get(y, 2)
    if cx != cy:
        return x if cx > cy else y
    if "autocast" in (x, y):
        return None
    if x in ("integer", "bool") or y in ("integer", "bool"):
        return "integer"
    wide = R.promote_floats(x, y)
    if x0 is not None and y0 is not None:
        if x0 == y0:
            return wide
        return y if x0 else x  # the dimensioned operand wins over a 0-dim one
    return frozenset({x, y, wide})


def literal_tensor(data: cst.BaseExpression, default_set: bool) -> Optional[Dtype]:
    leaves = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.List, cst.Tuple)):
            stack.extend(e.value for e in node.elements)
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        else:
            leaves.append(node)
    zero = not isinstance(data, (cst.List, cst.Tuple))
    if any(not isinstance(leaf, (cst.Integer, cst.Float)) and not (
            isinstance(leaf, cst.Name) and leaf.value in ("True", "False")) for leaf in leaves):
        return None
    if any(isinstance(leaf, cst.Float) for leaf in leaves):
        return None if default_set else of("float32", zero)
    if leaves and all(isinstance(leaf, cst.Name) for leaf in leaves):
        return of("bool", zero)
    if leaves and all(isinstance(leaf, cst.Integer) for leaf in leaves):
        return of("integer", zero)
    return None


def size_dim(call: cst.Call) -> Optional[bool]:
    """Whether a factory's size makes a >= 1-dim tensor: `torch.zeros(3, 4)`, `zeros((2,))`."""
    size = [a.value for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return None
    if size and all(isinstance(s, cst.Integer) for s in size):
        return False
    if len(size) == 1 and isinstance(size[0], (cst.Tuple, cst.List)):
        return False if size[0].elements else True
    return None


def fold(values: List[Dtype], op: str) -> Optional[Dtype]:
    value: Optional[Dtype] = values[0]
    for other in values[1:]:
        value = promote(value, other, op) if value is not None else None  # type: ignore[arg-type]
    return value


def clamped(tensors: List[Optional[Dtype]]) -> Optional[Dtype]:
    """`x.clamp(lo, hi)`: the input's dtype promoted with every bound (R.CLAMP); unknown when
    a bound is."""
    first = tensors[0] if tensors else None
    if first is None or not first.is_tensor or any(t is None for t in tensors):
        return None
    value: Optional[Dtype] = first
    for bound in tensors[1:]:
        value = promote(value, bound, "clamp") if value is not None else None  # type: ignore[arg-type]
    return value


def einsum_policy(device: Optional[str], call: Optional[cst.Call]) -> Optional[str]:
    """CPU autocast casts an einsum only through the bmm it runs when its equation contracts
    operands (R.einsum_contracts); CUDA's list names einsum itself ("lower")."""
    equation = call.args[0].value if call is not None and call.args else None
    contracts = R.einsum_contracts(equation.evaluated_value) if isinstance(
        equation, cst.SimpleString) and isinstance(equation.evaluated_value, str) else None
    if contracts is True:
        return "lower"
    if contracts is False and device == "cpu":
        return "none"
    return None
