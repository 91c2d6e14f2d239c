"""The dtype of tensor values: for each expression of a file, the dtypes it may have, read from
torch's own rules (amplint.data.dtype_rules). Computed once per file as `FileFacts.dtypes`.

Each function body (and the module body) is read in source order with an environment from local
names to values. Branches are read on copies of the environment and joined; a name bound in a
loop, `try` or `match` is unknown inside it and joined after it. Parameters, globals, attributes
and anything not in the table are unknown: unknown stays unknown, never guessed half.

A value (`Dtype`) is a set of possible dtypes: "float16", "bfloat16", "float32", "float64",
"integer", "bool", or "autocast" (the low dtype of a region that names none); Python numbers are
"pyint"/"pyfloat"/"pybool". `conditional`: the value holds when the operands of unknown dtype
are floating tensors (`torch.mm(a, b)` under autocast). In a region that may be off (`enabled=`
not a literal) or that a function inherits from its callers, the result joins the region's and
the plain one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, Iterable, List, Optional

import libcst as cst

from amplint.data import dtype_rules as R
from amplint.facts.frame_walk import frames_by_body
from amplint.facts.names import resolve_expr
from amplint.facts.regions import Enabled, Region
from amplint.facts.syntax import bound_names
from amplint.facts.tree import Frame, iter_nodes

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


class DtypeFacts:
    def __init__(self, facts) -> None:
        self.facts = facts
        self.values: Dict[int, Dtype] = {}  # id(expression) -> its value
        self._bodies = frames_by_body(facts)
        self._default_set = "set_default_dtype" in facts.module.code or \
            "set_default_tensor_type" in facts.module.code
        self._attr_modules: Dict[int, Dict[str, ModuleValue]] = {}
        from amplint.facts.dtype_walk import walk_module

        walk_module(self)

    # -- the query API --------------------------------------------------------------------
    def dtype(self, expr: cst.BaseExpression) -> Optional[Dtype]:
        """The value of `expr` as the walk saw it, or None when unknown (or not walked)."""
        return self.values.get(id(expr))

    def exact(self, expr: cst.BaseExpression) -> Optional[str]:
        value = self.dtype(expr)
        return value.exact if value is not None and not value.conditional else None

    def may_be_half(self, expr: cst.BaseExpression) -> bool:
        """Known evidence that `expr` may be float16/bfloat16 (never guessed)."""
        value = self.dtype(expr)
        return value is not None and value.may_be("float16", "bfloat16", "autocast")

    def is_float32(self, expr: cst.BaseExpression) -> bool:
        return self.exact(expr) == "float32"

    # -- regions --------------------------------------------------------------------------
    def region_state(self, frame: Frame):
        """(region, certain): the active region around `frame` and whether code there surely
        runs under it (a literal enabled region of this function, not inherited from callers)."""
        region: Optional[Region] = self.facts.active_region(frame)
        if region is None:
            return None, True
        certain = region.enabled is Enabled.TRUE and region.kind in ("with", "decorator")
        return region, certain

    def region_dtype(self, region: Region) -> str:
        if region.dtype is not None:
            return region.dtype
        if region.device in R.DEFAULT_REGION_DTYPE:
            return R.DEFAULT_REGION_DTYPE[region.device]
        return "autocast"

    @staticmethod
    def policy(region: Region, op: str) -> Optional[str]:
        devices = [region.device] if region.device is not None else list(R.AUTOCAST_LISTS)
        found = set()
        for device in devices:
            if (device, op) in R.DECOMPOSED_POLICY:
                found.add(R.DECOMPOSED_POLICY[(device, op)])
            else:
                found.add(R.autocast_policy(device, op))
        return found.pop() if len(found) == 1 else None

    def attr_modules(self, cls: Frame) -> Dict[str, ModuleValue]:
        """`self.<attr> = torch.nn.<Module>(...)` in the methods of `cls`, when it is the
        attribute's only assignment in the class."""
        found = self._attr_modules.get(id(cls))
        if found is None:
            found = {}
            for attr, sites in self.facts.tree.self_assigns(cls).items():
                if len(sites) != 1 or not isinstance(sites[0].value, cst.Call):
                    continue
                module = self.module_ctor(sites[0].value, sites[0].frame)
                if module is not None:
                    found[attr] = module
            self._attr_modules[id(cls)] = found
        return found

    def module_ctor(self, call: cst.Call, frame: Frame) -> Optional[ModuleValue]:
        qualified = resolve_expr(call.func, frame)
        op = R.MODULE_OPS.get(qualified or "")
        if op is None or any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args):
            return None
        return ModuleValue(op)


def region_policy(region: Region, op: str) -> Optional[str]:
    """"lower" | "fp32" | "promote" | "none" for aten `op` under `region` (both devices' lists
    must agree when the region's device is unknown), None when it depends."""
    return DtypeFacts.policy(region, op)


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


__all__ = ["Dtype", "DtypeFacts", "ModuleValue", "join", "of", "replace", "FLOATS", "ELIGIBLE"]
