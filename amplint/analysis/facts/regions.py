"""Autocast regions: where code runs under autocast, enabled or not, on which device and dtype.

A region comes from a `with` item, a decorator, or a framework call (`accelerator.autocast()`),
directly or through a name bound to one (`ctx = torch.amp.autocast(...)`,
`ctx = nullcontext() if cpu else torch.amp.autocast(...)`, `self.amp = partial(autocast, ...)`).
A function of the same file called from an active region inherits it (transitively).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R

from amplint.analysis.facts.class_dtypes import self_dtypes
from amplint.analysis.facts.context_functions import function_region
from amplint.analysis.facts.opener_factories import factory_call
from amplint.analysis.facts.region_entries import (
    Enabled, EntryAttrRegion, EntryContextRegion, EntryParamRegion, EntryRegion,
)
from amplint.analysis.facts.context_properties import property_opened
from amplint.analysis.facts.names import resolve, resolve_expr
from amplint.analysis.facts.syntax import (  # noqa: F401  (bound_arguments, literal_* re-exported)
    bound_arguments, dict_literal, holder_key, literal_bool, literal_str, self_attr,
)
from amplint.analysis.facts.tree import CallSite, Collector, Frame, dotted_name, iter_nodes, scope_key


@dataclass(eq=False)
class Region:
    enabled: Enabled
    device: Optional[str]  # "cuda", "cpu", another literal, or None when unknown
    dtype: Optional[str]  # "float16", "bfloat16", or None when unknown
    origin: cst.CSTNode  # what to cite: the autocast call, decorator or calling expression
    kind: str  # "with" | "decorator" | "framework" | "call"
    device_expr: Optional[cst.BaseExpression] = None  # the device argument as written
    with_node: Optional[cst.With] = None
    via: Optional["Region"] = None  # for kind "call": the caller's region
    # For regions that come from outside this file (kind "project"): how to cite them,
    # e.g. "the autocast region at train.py:12" or "Trainer(precision='16-mixed') at main.py:30".
    external: Optional[str] = None
    enabled_expr: Optional[cst.BaseExpression] = None  # `enabled=` as written, if given
    # a region a context-manager function opens (facts/context_functions.py): its name; the
    # fixes that edit the autocast call or move code out of the `with` leave it alone
    opener: Optional[str] = None
    # the names an opener's parameters reach it by: `torch.autocast(*args, **kwargs)` forwards
    # `kwargs`; `torch.autocast(...) if enabled else None` is gated by `enabled`
    forwards: Optional[str] = None
    gate: Optional[str] = None
    # the autocast passes `cache_enabled=False` (an opener's region: every autocast it may
    # open does), so it keeps no cast of a weight for a later forward
    cache_off: bool = False
    # `dtype=self.<attr>` read through the classes that can be self (facts/class_dtypes.py)
    # when they disagree: (class, dtype) for each, `dtype` then None
    dtype_by_class: Optional[Tuple[Tuple[str, str], ...]] = None

    @property
    def active(self) -> bool:
        return self.enabled is not Enabled.FALSE

    @property
    def may_be_cuda(self) -> bool:
        return self.device in (None, "cuda")

    @property
    def root(self) -> "Region":
        region = self
        while region.via is not None:
            region = region.via
        return region


AUTOCAST_APIS = {
    # qualified name -> (device if fixed by the API, default dtype, positional parameters)
    "torch.amp.autocast": (None, None, ("device_type", "dtype", "enabled", "cache_enabled")),
    "torch.cuda.amp.autocast": ("cuda", "float16", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("cpu", "bfloat16", ("enabled", "dtype", "cache_enabled")),
}
_DEFAULT_DTYPE = _R.DEFAULT_REGION_DTYPE
DTYPES = {name: dtype for name, dtype in _R.DTYPE_NAMES.items() if dtype in _R.FLOAT_ORDER}


class RegionAnalysis:
    def __init__(self, tree: Collector, entries: Tuple["EntryRegion", ...] = ()) -> None:
        from amplint.analysis.facts.callgraph import CallGraph

        self.tree = tree
        self.entries = entries
        self._params = {(e.scope, e.param): e for e in entries if isinstance(e, EntryParamRegion)}
        self._openers = {(e.scope, e.callee): e for e in entries if isinstance(e, EntryContextRegion)
                         and not e.factory}
        self._factories = {(e.scope, e.callee): e for e in entries if isinstance(e, EntryContextRegion)
                           and e.factory}
        self._attrs = {(e.scope, e.attr): e for e in entries if isinstance(e, EntryAttrRegion)}
        self._ctx_aliases: Dict[Tuple[str, str], Tuple[cst.BaseExpression, Frame]] = {}
        self._factory_memo: Dict[int, object] = {}  # opener factories of this file (opener_factories.py)
        self._imports_functools = any(target.split(".")[0] == "functools"
                                      for target in tree.module_frame.imports.values())
        self._memo: Dict[int, Optional[Region]] = {}
        self.callgraph = CallGraph(tree)
        self._with_frames = {id(node): frame for node, frame in tree.withs}
        self._with_memo: Dict[int, Optional[Region]] = {}
        self._opened: Dict[int, object] = {}  # context-manager functions (context_functions.py)
        self._aliases_ready = False  # a context manager's own `with`s are read once they are known
        self._collect_aliases()
        self._aliases_ready = True
        for with_node, body_frame in tree.withs:
            body_frame.region = self.with_region(with_node, body_frame.parent)
        for frame in tree.frames:
            if frame.kind == "function":
                frame.region = self._decorator_region(frame)
        self._seed_entries()
        self._propagate_calls()

    def _seed_entries(self) -> None:
        if not self.entries:
            return
        module = self.tree.module_frame
        for entry in self.entries:
            if not isinstance(entry, EntryRegion):
                continue
            parts = entry.target.split(".")
            frame: Optional[Frame] = None
            if len(parts) == 1:
                frame = module.functions.get(parts[0])
            elif len(parts) == 2 and parts[0] in self.tree.classes:
                frame = self.tree.classes[parts[0]].functions.get(parts[1])
            if frame is None or frame.region is not None or frame.inherited is not None:
                continue
            frame.inherited = Region(
                entry.enabled, entry.device, entry.dtype, frame.node, "project",
                external=entry.cite,
            )

    # -- public ---------------------------------------------------------------------------
    def region_of(self, frame: Frame) -> Optional[Region]:
        """The innermost region around code in `frame` (stopping at the function boundary)."""
        key = id(frame)
        if key not in self._memo:
            self._memo[key] = self._lookup(frame)
        return self._memo[key]

    def active_region(self, frame: Frame) -> Optional[Region]:
        region = self.region_of(frame)
        return region if region is not None and region.active else None

    def explicit_regions(self) -> List[Tuple[cst.With, Frame, Region]]:
        return [
            (with_node, frame, frame.region)
            for with_node, frame in self.tree.withs
            if frame.region is not None
        ]

    def uses_autocast(self) -> bool:
        return any(
            isinstance(frame.region, Region) and frame.region.active for frame in self.tree.frames
        )

    # -- autocast expressions -------------------------------------------------------------
    def _collect_aliases(self) -> None:
        """Names and `self.` attributes bound to an autocast context (or a partial of one).
        An alias may be defined through another (`ctx = self.autocast() if amp else ...`, with
        `self.autocast` bound in a later method), so the classification repeats until it is
        stable; `_sometimes_plain` (bound to something else on another path) is computed once
        the aliases are known, and is empty while they are being found."""
        self._sometimes_plain: Set[Tuple[str, str]] = set()
        other: Set[Tuple[str, str]] = set()
        for _ in range(len(self.tree.assigns) + 1):
            found: Dict[Tuple[str, str], Tuple[cst.BaseExpression, Frame]] = {}
            other = set()
            for site in self.tree.assigns:
                if len(site.targets) != 1:
                    continue
                key = holder_key(site.targets[0])
                if key is None:
                    continue
                if (
                    self._region_of_expr(site.value, site.frame, call_it=False) is not None
                    or self._is_autocast_partial(site.value, site.frame)
                    or factory_call(self, site.value, site.frame) is not None
                ):
                    found[key] = (site.value, site.frame)
                else:
                    other.add(key)
            stable = found.keys() == self._ctx_aliases.keys()
            self._ctx_aliases = found
            if stable:
                break
        # `amp_autocast = suppress` on one path, `= partial(torch.autocast, ...)` on another.
        self._sometimes_plain = other & set(self._ctx_aliases)

    def _is_autocast_partial(self, value: cst.BaseExpression, frame: Frame) -> bool:
        return (
            isinstance(value, cst.Call)
            and bool(value.args)
            and resolve_expr(value.func, frame) == "functools.partial"
            and resolve_expr(value.args[0].value, frame) in AUTOCAST_APIS
        )

    def _region_of_expr(
        self, expr: cst.BaseExpression, frame: Frame, call_it: bool, depth: int = 0
    ) -> Optional[Region]:
        """The region entered by `with <expr>:` (call_it=False: `expr` is the context manager
        itself; call_it=True: `expr` is what gets called, e.g. a partial or a decorator name)."""
        if depth > 4:
            return None
        if isinstance(expr, cst.IfExp):
            # `nullcontext() if cpu else autocast(...)`: the region exists in one branch only.
            for branch in (expr.body, expr.orelse):
                region = self._region_of_expr(branch, frame, call_it, depth + 1)
                if region is not None and region.active:
                    region.enabled = Enabled.MAYBE
                    if branch is expr.body and isinstance(expr.test, cst.Name):
                        region.gate = expr.test.value  # `autocast(...) if enabled else None`
                    return region
            return None
        if isinstance(expr, cst.Call) and not call_it:
            qualified = resolve_expr(expr.func, frame)
            if qualified in AUTOCAST_APIS:
                return self._from_autocast_call(qualified, expr, expr, frame)
            # Calling an alias: `with self.amp_autocast():` where it is a partial(autocast, ...)
            target = self._alias_target(expr.func, frame)
            if target is not None:
                value, value_frame = target
                partial = self._partial_region(value, value_frame, expr)
                if partial is None:
                    partial = self._factory_region(value, value_frame, expr)
                if partial is not None:
                    if holder_key(expr.func) in self._sometimes_plain and partial.active:
                        partial.enabled = Enabled.MAYBE
                    return partial
            param = self._param_region(expr.func, frame) if not expr.args else None
            if param is None and (self._aliases_ready or self._openers):
                param = function_region(self, expr, frame, Region, entries_only=not self._aliases_ready)
            return param if param is not None else self._framework_region(expr)
        if call_it:
            return None
        param = self._param_region(expr, frame)
        if param is not None:
            return param
        target = self._alias_target(expr, frame)
        if target is not None:
            value, value_frame = target
            region = self._region_of_expr(value, value_frame, call_it=False, depth=depth + 1)
            if region is not None and region.active and holder_key(expr) in self._sometimes_plain:
                region.enabled = Enabled.MAYBE
            return region
        attr = self_attr(expr) if self._aliases_ready else None
        found = property_opened(self, frame, attr) if attr is not None else None
        if found is not None:  # `with self.training_ctx:` of a property returning an autocast
            enabled, inner, _param = found
            return Region(enabled, inner.device, inner.dtype, expr, "with", opener=attr)
        return None

    def _param_region(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Region]:
        """A parameter the project pass found bound to an autocast (EntryParamRegion), or a
        `self.<attr>` a base class of another file stores one in (EntryAttrRegion)."""
        if self._attrs and isinstance(expr, cst.Attribute):
            attr = self_attr(expr)
            entry = self._attrs.get((scope_key(frame), attr)) if attr is not None else None
            if entry is None or ("self", attr) in self._ctx_aliases:
                return None
            return Region(entry.enabled, entry.device, entry.dtype, expr, "with", external=entry.cite)
        if not self._params or not isinstance(expr, cst.Name):
            return None
        entry = self._params.get((scope_key(frame), expr.value))
        if entry is None:
            return None
        return Region(entry.enabled, entry.device, entry.dtype, expr, "with", external=entry.cite)

    def _alias_target(self, expr: cst.BaseExpression, frame: Frame):
        key = holder_key(expr)
        if key is None:
            return None
        if key[0] == "name" and resolve((key[1],), frame) is not None:
            return None  # an imported name, not an alias variable
        return self._ctx_aliases.get(key)

    def _factory_region(self, value: cst.BaseExpression, frame: Frame, call: cst.Call) -> Optional[Region]:
        """`with x():` where `x = factory(...)` (facts/opener_factories.py). A call that passes
        arguments may override the partial's `enabled=` or dtype: no answer."""
        found = factory_call(self, value, frame) if not call.args else None
        if found is None:
            return None
        enabled, device, dtype, cite, opener = found
        return Region(enabled, device, dtype, call, "with", external=cite, opener=opener)

    def partial_opens(self, value: cst.BaseExpression, frame: Frame) -> Optional[Region]:
        """The region a call without arguments of `value`, a `partial(torch.amp.autocast, ...)`,
        opens (origin: the partial)."""
        if not (isinstance(value, cst.Call) and value.args and not value.args[0].star):
            return None
        if resolve_expr(value.func, frame) != "functools.partial":
            return None
        inner = resolve_expr(value.args[0].value, frame)
        if inner not in AUTOCAST_APIS:
            return None
        return self._from_autocast_call(inner, cst.Call(func=value.args[0].value, args=tuple(value.args[1:])), value)

    def _partial_region(
        self, value: cst.BaseExpression, frame: Frame, call: cst.Call
    ) -> Optional[Region]:
        if not (isinstance(value, cst.Call) and value.args):
            return None
        if resolve_expr(value.func, frame) != "functools.partial":
            return None
        inner = resolve_expr(value.args[0].value, frame)
        if inner not in AUTOCAST_APIS:
            return None
        merged = cst.Call(func=value.args[0].value, args=tuple(value.args[1:]) + tuple(call.args))
        return self._from_autocast_call(inner, merged, call)

    def _from_autocast_call(self, qualified: str, call: cst.Call, origin: cst.CSTNode,
                            frame: Optional[Frame] = None) -> Region:
        fixed_device, default_dtype, positional = AUTOCAST_APIS[qualified]
        args = bound_arguments(call, positional)
        forwards = None
        for arg in call.args:
            if arg.star == "**":  # `autocast(**get_autocast_args(args))`, `**{"dtype": ...}`
                for key, value in self._star_kwargs(arg.value).items():
                    args.setdefault(key, value)
                if isinstance(arg.value, cst.Name):
                    forwards = arg.value.value
        enabled_expr = args.get("enabled")
        flag = True if enabled_expr is None else literal_bool(enabled_expr)
        enabled = Enabled.MAYBE if flag is None else (Enabled.TRUE if flag else Enabled.FALSE)
        device_expr = args.get("device_type")
        device = fixed_device or literal_str(device_expr)
        if device is not None:
            device = device.split(":")[0]
        dtype_expr = args.get("dtype")
        dtype = default_dtype or _DEFAULT_DTYPE.get(device or "")
        by_class = None
        if dtype_expr is not None:
            name = dotted_name(dtype_expr)
            dtype = DTYPES.get(".".join(name)) if name and name[0] == "torch" else None
            attr = self_attr(dtype_expr) if frame is not None else None
            options = self_dtypes(self.entries, frame, attr) if attr is not None else None
            if options:
                found = {d for _, d in options}
                dtype, by_class = (found.pop(), None) if len(found) == 1 else (None, options)
        kind = "with"
        return Region(enabled, device, dtype, origin, kind, device_expr=device_expr, dtype_by_class=by_class,
                      enabled_expr=enabled_expr, forwards=forwards,
                      cache_off=literal_bool(args["cache_enabled"]) is False if "cache_enabled" in args else False)

    def _star_kwargs(self, expr: cst.BaseExpression) -> Dict[str, cst.BaseExpression]:
        """The keywords `**expr` passes, when the file shows them: a dict literal, or a call of a
        module-level function of this file whose every `return` is a dict literal. A key the
        returns disagree on (or that only some give) maps to an unknown value."""
        if isinstance(expr, cst.Dict):
            return dict_literal(expr) or {}
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
            return {}
        module = self.tree.module_frame
        helper = module.functions.get(expr.func.value)
        if helper is None or expr.func.value in module.imports:
            return {}
        returns = [n for n in iter_nodes(helper.node.body) if isinstance(n, cst.Return)]
        dicts = [dict_literal(r.value) for r in returns if r.value is not None]
        if not dicts or len(dicts) != len(returns) or any(d is None for d in dicts):
            return {}
        merged: Dict[str, cst.BaseExpression] = {}
        code = cst.Module(body=[]).code_for_node
        for entries in dicts:
            for key, value in entries.items():  # type: ignore[union-attr]
                if all(key in d and code(d[key]) == code(value) for d in dicts):  # type: ignore
                    merged[key] = value
                else:
                    merged[key] = cst.Name("__unknown__")
        return merged

    def _framework_region(self, call: cst.Call) -> Optional[Region]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("autocast", "optim_context"):
            root = dotted_name(func.value)
            if root and root[0] == "torch":
                return None
            return Region(Enabled.MAYBE, None, None, call, "framework")
        return None

    def with_region(self, node: cst.With, frame: Frame) -> Optional[Region]:
        """The region `node` opens (computed once: a context-manager function's `with`s are
        asked while the `with`s that call it are read)."""
        key = id(node)
        if key not in self._with_memo:
            self._with_memo[key] = None
            self._with_memo[key] = self._with_region(node, frame)
        return self._with_memo[key]

    def _with_region(self, node: cst.With, frame: Frame) -> Optional[Region]:
        found: Optional[Region] = None
        for item in node.items:
            region = self._region_of_expr(item.item, frame, call_it=False)
            if region is not None:
                region.with_node = node
                found = region  # the last autocast item is the innermost
        return found

    def _decorator_region(self, frame: Frame) -> Optional[Region]:
        node = frame.node
        assert isinstance(node, cst.FunctionDef)
        outer = frame.parent
        assert outer is not None
        for dec in node.decorators:
            expr = dec.decorator
            call = expr if isinstance(expr, cst.Call) else None
            func = call.func if call is not None else expr
            qualified = resolve_expr(func, outer) or ""
            last = qualified.rsplit(".", 1)[-1] or (dotted_name(func) or ("",))[-1]
            if call is not None and qualified in AUTOCAST_APIS:
                region = self._from_autocast_call(qualified, call, dec)
                region.kind = "decorator"
                return region
            if qualified.endswith("custom_fwd") and call is not None:
                cast = bound_arguments(call, ()).get("cast_inputs")
                cast_name = dotted_name(cast) if cast is not None else None
                if cast_name and DTYPES.get(".".join(cast_name)) == "float32":
                    return Region(Enabled.FALSE, None, "float32", dec, "decorator")
            if last == "force_fp32":
                return Region(Enabled.FALSE, None, "float32", dec, "decorator")
            if last == "auto_fp16":
                # mmcv runs the body under autocast once `fp16_enabled` is set on the module.
                return Region(Enabled.MAYBE, "cuda", "float16", dec, "decorator")
        return None

    # -- inheritance through calls --------------------------------------------------------
    def _lookup(self, frame: Frame) -> Optional[Region]:
        current: Optional[Frame] = frame
        while current is not None:
            if current.kind == "with" and current.region is not None:
                return current.region  # type: ignore[return-value]
            if current.kind == "function":
                return current.region or current.inherited  # type: ignore[return-value]
            current = current.parent
        return None

    def _propagate_calls(self) -> None:
        graph = self.callgraph
        pending: List[CallSite] = [
            site for site in self.tree.calls if self._is_active(self._lookup(site.frame))
        ]
        self.region_calls = list(pending)  # calls made under an active region (project pass)
        while pending:
            site = pending.pop()
            region = self._lookup(site.frame)
            if not self._is_active(region):
                continue
            for callee in graph.callees(site):
                if callee.region is not None or callee.inherited is not None:
                    continue
                callee.inherited = Region(
                    region.enabled, region.device, region.dtype, site.node, "call",
                    device_expr=region.device_expr, via=region,
                )
                pending.extend(callee.calls)

    @staticmethod
    def _is_active(region: Optional[Region]) -> bool:
        return region is not None and region.active
