"""The abstract value of the dtype fact (amplint.facts.dtypes): a set of possible dtypes,
whether it assumes floating operands, and whether the tensor is known 0-dim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional

import libcst as cst

from amplint.data import dtype_rules as R
from amplint.facts.syntax import bound_names
from amplint.facts.tree import iter_nodes

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


class ModuleValue:
    """A local or `self.` attribute bound to a torch.nn module constructor."""

    def __init__(self, op: str) -> None:
        self.op = op



def assigned_names(node: cst.CSTNode) -> List[str]:
    """Names a statement binds in its own scope (nested defs and classes bind only their name)."""
    names: List[str] = []
    for child in iter_nodes(node):
        if isinstance(child, (cst.Assign,)):
            for target in child.targets:
                names.extend(bound_names(target.target))
        elif isinstance(child, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            names.extend(bound_names(child.target))
        elif isinstance(child, cst.WithItem) and child.asname is not None:
            names.extend(bound_names(child.asname.name))
        elif isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            names.append(child.name.value)
        elif isinstance(child, cst.ExceptHandler) and child.name is not None:
            names.extend(bound_names(child.name.name))
        elif isinstance(child, (cst.Import, cst.ImportFrom)) and not isinstance(child.names, cst.ImportStar):
            for alias in child.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                if isinstance(bound, cst.Name):
                    names.append(bound.value)
    return names
