"""Autocast regions: where code runs under autocast, enabled or not, on which device and dtype.

A region comes from a `with` item, a decorator, or a framework call (`accelerator.autocast()`),
directly or through a name bound to one (`ctx = torch.amp.autocast(...)`,
`ctx = nullcontext() if cpu else torch.amp.autocast(...)`, `self.amp = partial(autocast, ...)`).
A function of the same file called from an active region inherits it (transitively).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.autocast_calls import (
    AUTOCAST_APIS, Region, autocast_call_region, decorator_region, framework_region,
)
from amplint.analysis.facts.context_functions import function_region
from amplint.analysis.facts.context_properties import property_opened
from amplint.analysis.facts.names import resolve, resolve_expr
from amplint.analysis.facts.opener_factories import factory_call
from amplint.analysis.facts.region_entries import (
    Enabled, EntryAttrRegion, EntryContextRegion, EntryParamRegion, EntryRegion,
)
from amplint.analysis.facts.syntax import holder_key, self_attr
from amplint.analysis.facts.tree import CallSite, Collector, Frame, scope_key


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
                frame.region = decorator_region(frame, tree.module_frame, self.entries)
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
                external=entry.cite, cache_off=entry.cache_off,
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
                return autocast_call_region(qualified, expr, expr, self.tree.module_frame, self.entries, frame)
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
            return param if param is not None else framework_region(expr)
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
        return autocast_call_region(inner, cst.Call(func=value.args[0].value, args=tuple(value.args[1:])), value,
                                    self.tree.module_frame, self.entries)

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
        return autocast_call_region(inner, merged, call, self.tree.module_frame, self.entries)

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
