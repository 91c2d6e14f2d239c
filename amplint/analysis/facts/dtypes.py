"""The dtype of tensor values: for each expression of a file, the dtypes it may have, read from
torch's own rules (amplint.analysis.data.dtype_rules). Computed once per file as `FileFacts.dtypes`.

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

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.frame_walk import frames_by_body
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.dtype_value import (  # noqa: F401 (the value API, re-exported)
    ELIGIBLE, FLOATS, PYTHON, Dtype, ModuleValue, assigned_names, join, module_moved, of,
)
from amplint.analysis.facts.tree import Frame

# how amplint.analysis.project cites a region `autocast-modules` declares, around the function itself
# ("declared to run under autocast by autocast-modules = [...]") or around its callers ("called
# at f.py:3 in code that runs under autocast-modules = [...]"): either way its arguments come
# from declared code
DECLARED_CITE = "autocast-modules = ["


class DtypeFacts:
    def __init__(self, facts) -> None:
        self.facts = facts
        self.values: Dict[int, Dtype] = {}  # id(expression) -> its value
        # the calls and binary operations the walk valued under an active autocast region,
        # with their frames, in source order: the rules about autocast values read these
        # instead of walking the module again
        self.region_nodes: List[Tuple[cst.BaseExpression, Frame]] = []
        self._bodies = frames_by_body(facts)
        self._default_set = any(
            qualified in ("torch.set_default_dtype", "torch.set_default_tensor_type")
            for qualified, _ in facts.qualified_calls
        )
        # names bound by `:=` are never tracked (the walk binds statements only)
        self.untracked = frozenset(facts.tree.walrus_names)
        self._attr_modules: Dict[int, Dict[str, ModuleValue]] = {}
        self.global_env: dict = {}  # module-level torch.nn modules the functions see
        self.calling: List[str] = []  # the file's functions being read for a call's return
        self.bindings = None  # parameters bound at call sites (amplint.analysis.facts.dtype_params)
        self._module_counts: Optional[Dict[str, int]] = None
        self.returns_value: Dict[int, bool] = {}  # id(def) -> dtype_calls' answer, per file
        # id(function frame) of those read along the call that brings them under a region
        # (amplint.analysis.facts.dtype_paths)
        self.path_functions: Dict[int, object] = {}
        from amplint.analysis.facts.dtype_params import read_with_bindings
        from amplint.analysis.facts.dtype_walk import walk_module

        read_with_bindings(self, walk_module)

    def module_counts(self) -> Dict[str, int]:
        """How many times the module's statements bind each name (`assigned_names`), read once
        per file: the walk's module-level modules (each reading), the bindable functions, the
        module forwards and the callees of calls all ask (issue 34)."""
        if self._module_counts is None:
            counts: Dict[str, int] = {}
            for name in assigned_names(self.facts.module):
                counts[name] = counts.get(name, 0) + 1
            self._module_counts = counts
        return self._module_counts

    def bound_once(self, name: str) -> bool:
        """The module binds `name` once and no `global`/`nonlocal` statement may rebind it."""
        return self.module_counts().get(name) == 1 and name not in self.facts.tree.declared_names

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

    def float16_in_region(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """"float16" when `expr` is float16 under the active region at `frame`; "may" when it
        is float16 or float32 in code `autocast-modules` declares (its inputs may be the
        region's float16); else None. What AMP140/141 read about autocast values."""
        value = self.dtype(expr)
        if value is None or self.facts.active_region(frame) is None:
            return None
        if value.options == {"float16"}:
            return "float16"
        if "float16" in value.options and value.options <= {"float16", "float32"} \
                and self.declared_region(frame) is not None:
            return "may"
        return None

    def on_region_path(self, frame: Frame) -> bool:
        """Whether `frame`'s values were read along the call that brings its function under
        its region (amplint.analysis.facts.dtype_paths): a finding there cites that region."""
        function = frame.function
        return function is not None and id(function) in self.path_functions

    def path_call(self, frame: Frame) -> Optional[cst.CSTNode]:
        """The call a finding in `frame` must cite when its function was read along the call
        that brings it under its region (its values hold on that path only), else None."""
        function = frame.function
        if function is None or id(function) not in self.path_functions or getattr(
                function.inherited, "kind", None) != "call":
            return None  # a region of another file: cited as the project pass words it
        return function.inherited.origin  # type: ignore[union-attr]

    # -- regions --------------------------------------------------------------------------
    def region_state(self, frame: Frame):
        """(region, certain): the active region around `frame` and whether code there surely
        runs under it (a literal enabled region of this function, not inherited from callers)."""
        region: Optional[Region] = self.facts.active_region(frame)
        if region is None:
            return None, True
        certain = region.enabled is Enabled.TRUE and region.kind in ("with", "decorator")
        if not certain and region.kind in ("call", "project") and self.bindings is not None:
            # every call of the function in the file surely runs under this region
            # (amplint.analysis.facts.dtype_params), or the function is read along the call
            # that brings it under the region (amplint.analysis.facts.dtype_paths)
            function = frame.function
            certain = function is not None and function.inherited is region \
                and id(function) in self.bindings.certain and frame.function is frame.scope
        return region, certain

    def declared_region(self, frame: Frame) -> Optional[Region]:
        """The region `autocast-modules` declares around the function of `frame` (its
        floating tensor parameters may carry the region's dtype), else None."""
        function = frame.function
        region = getattr(function, "inherited", None) if function is not None else None
        if region is not None and region.kind == "project" and DECLARED_CITE in (
                region.external or ""):
            return region
        return None

    def declared_param(self, frame: Frame) -> Optional[Dtype]:
        """The value a parameter of a declared function starts with: the region's dtype or
        float32 (what its callers pass), holding if it is a floating tensor (`conditional`)."""
        region = self.declared_region(frame)
        if region is None:
            return None
        return Dtype(frozenset({self.region_dtype(region), "float32"}), True, None)

    def returned(self, name: str, call: cst.Call, args, frame: Frame,
                 method: Optional[Frame] = None) -> Optional[Dtype]:
        """The value `name(...)` (or `self.name(...)` of the private `method`) returns when it
        is a function of this file whose body shows it for this call's arguments
        (amplint.analysis.facts.dtype_calls)."""
        from amplint.analysis.facts.dtype_calls import returned

        return returned(self, name, call, args, frame, method)

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
            for attr, sites in self.facts.index.self_assigns(cls).items():
                if len(sites) != 1 or not isinstance(sites[0].value, cst.Call):
                    continue
                module = self.module_ctor(sites[0].value, sites[0].frame)
                if module is not None:
                    found[attr] = module
            self._attr_modules[id(cls)] = found
        return found

    def module_ctor(self, call: cst.Call, frame: Frame) -> Optional[ModuleValue]:
        """`torch.nn.<Module>(...)`, also moved before it is bound (`nn.Conv2d(3, 8, 3).cuda()`,
        `.to(device)`, `.train()`): those return the module itself with its dtype unchanged."""
        while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
                and module_moved(call, frame):
            call = call.func.value
        qualified = resolve_expr(call.func, frame)
        op = R.MODULE_OPS.get(qualified or "")
        if op is None or any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args):
            return None
        return ModuleValue(op)


def region_policy(region: Region, op: str) -> Optional[str]:
    """"lower" | "fp32" | "promote" | "none" for aten `op` under `region` (both devices' lists
    must agree when the region's device is unknown), None when it depends."""
    return DtypeFacts.policy(region, op)


__all__ = ["Dtype", "DtypeFacts", "ModuleValue", "join", "of", "region_policy", "FLOATS", "ELIGIBLE"]
