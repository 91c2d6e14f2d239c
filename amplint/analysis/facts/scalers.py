"""GradScaler facts: which names and `self.` attributes hold a scaler, with what `enabled=`, and,
per function body (and, within it, per loop body), the order of the scaler protocol's events.

A *scaler* is a name or attribute bound to `GradScaler(...)` under any spelling
(`torch.amp.GradScaler`, `torch.cuda.amp.GradScaler`, `tamp.GradScaler` after
`from torch.cuda import amp as tamp`, `ShardedGradScaler`), or one the file uses as a scaler: a
receiver of `X.unscale_(opt)` or `X.scale(loss).backward()`, or a name containing "scaler" that is
sent `.scale/.step/.update` (a `scaler` parameter). A callable wrapper such as timm's
`loss_scaler(loss, optimizer, clip_grad=...)` is not a GradScaler and is never sent those methods.

The events of each body (the scaler protocol in order, with loops and branches) are in
amplint.analysis.facts.scaler_flow; `ScalerAnalysis.flows` builds them and `walk`/`stepping`/`step_after`
are the walk the AMP12x rules share.
"""

from __future__ import annotations

from functools import cached_property
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data.scaler_apis import (  # noqa: F401  (re-exported for the rules)
    CLIP_FUNCTIONS, CLIP_NAMES, NOT_SCALER_METHODS, SCALER_APIS, SELF_UNSCALING,
)
from amplint.analysis.facts.names import resolve, resolve_expr, visible_scopes
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.framework_verbs import events_of, imported
from amplint.analysis.facts.scaler_flow import (  # noqa: F401  (the event names re-exported for the rules)
    Branch, Ctx, Event, Flow, FlowWalker, Loop, deciding_test, exclusive, key_text, more_conditional,
)
from amplint.analysis.facts.scaler_paths import (  # noqa: F401  (re-exported for the rules)
    arms, cleared_between, expr_line, gates, insert_after, insert_before, jumps_between, parameter_scaler,
    passed_optimizer, runs_whenever, signature,
)
from amplint.analysis.facts.scaler_protocol import composed_flows, quiet_frames, spans, through_place  # noqa: F401
from amplint.analysis.facts.scaler_flags import flag_entries
from amplint.analysis.facts.scaler_wrappers import held_wrapper, other_scaler_class, wrapper_bindings
from amplint.analysis.facts.scaler_remote import (
    caller_updated, caller_updates, inherited_scalers, lambda_updates, scaler_entries,
)
from amplint.analysis.facts.scaler_unhanded import unhanded_scalers
from amplint.analysis.facts.scaler_values import Scaler, ScalerInfo, ScalerKey, ScalerRef  # noqa: F401
from amplint.analysis.facts.syntax import bound_arguments, holder_key, literal_bool
from amplint.analysis.facts.tree import CallSite, Collector, Frame, dotted_name

# Text one of which any file with a scaler holds: `GradScaler`, a name like `scaler`, or the
# methods that make a receiver a scaler. The AMP12x rules use them as their prefilter.
SCALER_TRIGGERS = ("caler", "unscale_", ".scale(")


def _not_grad_scaler_api(calls: List[cst.Call]) -> bool:
    """A name sent `scale()` with no argument (GradScaler.scale takes the outputs to scale) or
    `unscale()` (GradScaler spells it `unscale_`): a torch GradScaler would raise at either, so
    the name holds another kind of object whatever it is called (fairscale's
    `LayerwiseGradientScaler`, whose `scale()` registers backward hooks and `step(optimizer)`
    needs no `update()`)."""
    for call in calls:
        method = call.func.attr.value  # type: ignore[attr-defined]
        if method == "unscale" or (method == "scale" and not call.args):
            return True
    return False


def _enabled_of(call: cst.Call, qualified: str) -> Enabled:
    args = bound_arguments(call, SCALER_APIS[qualified])
    if "enabled" not in args:
        return Enabled.TRUE
    flag = literal_bool(args["enabled"])
    return Enabled.MAYBE if flag is None else (Enabled.TRUE if flag else Enabled.FALSE)


def _combine(values: Iterable[Enabled]) -> Enabled:
    values = set(values)
    if len(values) == 1:
        return values.pop()
    return Enabled.MAYBE


class ScalerAnalysis:
    def __init__(self, tree: Collector, callgraph=None, entries=(), chosen=None) -> None:
        self.tree = tree
        self.callgraph = callgraph
        # callees in other files (the project pass's EntryScaler entries), by call
        self.remote = scaler_entries(entries) if entries else {}
        # the flags callers in other files enable a scaler parameter by (scaler_flags.py)
        self.flag_entries = flag_entries(entries) if entries else {}
        # the `self.` scalers of a class here that its callers in other files update
        self.caller_updates = caller_updates(entries) if entries else {}
        # `self.` scalers of a class here that no construction in the project hands one
        self.unhanded = unhanded_scalers(entries, tree) if entries else []
        self.module: cst.Module = tree.module_frame.node  # type: ignore[assignment]
        self.scalers: Dict[ScalerKey, Scaler] = {}
        self.constructions: List[CallSite] = []
        self.sites: Dict[int, CallSite] = {id(site.node): site for site in tree.calls}
        self._chosen: Dict[int, str] = {}  # `AMP[name](...)`: the scaler class a string picks
        for site in tree.calls:
            qualified = resolve_expr(site.node.func, site.frame)
            if qualified is None and chosen is not None:
                picked = chosen.constructed(site.node, site.frame, helpers=False)
                if picked is not None and picked.direct:  # the call's arguments are the scaler's
                    qualified = self._chosen[id(site.node)] = picked.qualified
            if qualified in SCALER_APIS:
                self.constructions.append(site)
        by_call = {id(site.node): site for site in self.constructions}
        for assign in tree.assigns:
            site = by_call.get(id(assign.value))
            if site is None:
                continue
            qualified = self._qualified(site)
            enabled = _enabled_of(site.node, qualified)  # type: ignore[arg-type]
            for target in assign.targets:
                key = holder_key(target)
                if key is not None:
                    self.scalers[key] = Scaler(key, site.node, assign.frame, enabled)

    def _qualified(self, site: CallSite) -> Optional[str]:
        return self._chosen.get(id(site.node)) or resolve_expr(site.node.func, site.frame)

    @property
    def any(self) -> bool:
        return bool(self.constructions)

    def enabled_arg(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The `enabled=` a construction of the file passes (None: none, or `*args`)."""
        site = self.sites.get(id(call))
        if site is None or any(a.star for a in call.args):
            return None
        positional = SCALER_APIS.get(self._qualified(site) or "")
        return bound_arguments(call, positional).get("enabled") if positional is not None else None

    # -- which texts are scalers ----------------------------------------------------------
    @cached_property
    def infos(self) -> Dict[ScalerRef, ScalerInfo]:
        infos: Dict[ScalerRef, ScalerInfo] = {}
        construction_ids = {id(site.node): site for site in self.constructions}
        enabled: Dict[ScalerRef, List[Enabled]] = {}
        none_assigned: Set[ScalerRef] = set()
        other_class: Set[ScalerRef] = set()
        for assign in self.tree.assigns:
            values = [assign.value]
            if isinstance(assign.value, cst.IfExp):
                values = [assign.value.body, assign.value.orelse]
            found = [
                (v, construction_ids[id(v)]) for v in values if id(v) in construction_ids
            ]
            foreign = any(other_scaler_class(v, assign.frame) for v in values
                          if id(v) not in construction_ids)
            for target in assign.targets:
                text = self.ref(key_text(target), assign.frame)
                if text is None:
                    continue
                if isinstance(assign.value, cst.Name) and assign.value.value == "None":
                    none_assigned.add(text)
                if foreign:
                    other_class.add(text)
                if not found:
                    continue
                info = infos.setdefault(text, ScalerInfo(text))
                for value, site in found:
                    info.constructions.append(site.node)
                    qualified = self._qualified(site)
                    state = _enabled_of(site.node, qualified)  # type: ignore[arg-type]
                    if len(found) < len(values):  # `GradScaler() if amp else None`
                        state = Enabled.MAYBE if state is not Enabled.FALSE else state
                        info.maybe_none = True
                    enabled.setdefault(text, []).append(state)
        # used as scalers
        methods: Dict[ScalerRef, Set[str]] = {}
        sent: Dict[ScalerRef, List[cst.Call]] = {}
        strong: Set[ScalerRef] = set()
        for site in self.tree.calls:
            func = site.node.func
            if not isinstance(func, cst.Attribute):
                continue
            text = self.ref(key_text(func.value), site.frame)
            if text is None or str(text) in ("self", "super"):
                continue
            methods.setdefault(text, set()).add(func.attr.value)
            sent.setdefault(text, []).append(site.node)
            if func.attr.value == "unscale_":
                strong.add(text)
            if func.attr.value == "backward":
                inner = func.value
                if (
                    isinstance(inner, cst.Call)
                    and isinstance(inner.func, cst.Attribute)
                    and inner.func.attr.value == "scale"
                    and len(inner.args) == 1
                ):
                    inner_text = self.ref(key_text(inner.func.value), site.frame)
                    if inner_text is not None:
                        strong.add(inner_text)
        wrapped = {self.ref(key_text(target), frame) for target, frame in wrapper_bindings(self.tree)}
        for text, used in methods.items():
            if used & NOT_SCALER_METHODS:
                infos.pop(text, None)
                continue
            if text in infos or text in wrapped:
                continue  # a GradScaler made here, or the file's own wrapper class's instance
            if _not_grad_scaler_api(sent[text]):
                continue  # `x.scale()`, `x.unscale()`: calls a torch GradScaler cannot take
            last = text.rsplit(".", 1)[-1].lower()
            if text in strong or (
                "scaler" in last and used & {"scale", "step", "update", "unscale_"}
            ):
                if not held_wrapper(self, sent[text]):
                    infos[text] = ScalerInfo(text, used_only=True)
        for text, frame in inherited_scalers(self.remote, self.tree) if self.remote else ():
            ref = self.ref(text, frame)
            if ref is not None and ref not in infos and not methods.get(ref, set()) & NOT_SCALER_METHODS:
                infos[ref] = ScalerInfo(ref)
        for text, frame in self.unhanded:
            infos.pop(ScalerRef(text, id(frame)), None)
        for text, info in infos.items():
            if text in enabled:
                info.enabled = _combine(enabled[text])
            if text in none_assigned:
                info.maybe_none = True
            info.other_class = text in other_class
        for frame in self.tree.frames:  # `def step(loss, opt, scaler=None)`
            if frame.kind != "function":
                continue
            params = frame.node.params  # type: ignore[attr-defined]
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if isinstance(param.default, cst.Name) and param.default.value == "None":
                    info = infos.get(ScalerRef(param.name.value, id(frame)))
                    if info is not None:
                        info.maybe_none = True
        return infos

    def ref(self, text: Optional[str], frame: Frame) -> Optional[ScalerRef]:
        """`text` as seen from `frame`: tagged with the scope that binds its root name (the class
        for `self.` attributes)."""
        if text is None:
            return None
        root = text.split(".", 1)[0]
        if root == "self":
            cls = frame.class_frame
            return ScalerRef(text, id(cls if cls is not None else frame.scope))
        for scope in visible_scopes(frame):
            if root in scope.bindings or root in scope.imports:
                return ScalerRef(text, id(scope))
        return ScalerRef(text, id(self.tree.module_frame))

    def info(self, ref: Optional[str]) -> Optional[ScalerInfo]:
        return self.infos.get(ref) if isinstance(ref, ScalerRef) else None

    # -- flows ----------------------------------------------------------------------------
    @cached_property
    def flows(self) -> List[Flow]:
        """One Flow per function body and one for the module body, those with scaler events."""
        if not self.infos:
            return []
        flows = []
        quiet = self._quiet[0]
        for frame in self.tree.frames:
            if frame.kind not in ("function", "module") or id(frame) in quiet:
                continue
            flow = Flow(frame.node, frame)
            walker = FlowWalker(self, flow)
            body = frame.node.body
            if isinstance(frame.node, cst.Module):
                walker.block(body, ())  # type: ignore[arg-type]
            else:
                walker.suite(body, ())  # type: ignore[arg-type]
            if any(e.scaler is not None for e in flow.events):
                flows.append(flow)
        return flows

    @cached_property
    def composed(self) -> List[Flow]:
        """The flows with same-file callees' events composed in (amplint.analysis.facts.scaler_protocol)."""
        return composed_flows(self, skip=self._quiet[1]) if self.infos else []

    @cached_property
    def _quiet(self) -> Tuple[Set[int], Set[int]]:
        return quiet_frames(self)

    @cached_property
    def frameworks(self) -> Set[str]:
        """The top-level packages the file imports (gates amplint.analysis.data.scaler_vocab)."""
        return imported(self.tree)

    @cached_property
    def framework_flows(self) -> List[Flow]:
        """The composed flows when the file calls a framework's protocol verbs (accelerate's
        `unscale_gradients`, `clip_grad_norm_`, ...): their events carry `framework`."""
        if self.infos:
            return self.composed
        holders = {
            id(site.frame.function or self.tree.module_frame) for site in self.tree.calls
            if events_of(site.node, self.frameworks, self.module)
        }
        return composed_flows(self, self._callers_of(holders)) if holders else []

    def _callers_of(self, frames: Set[int]) -> Set[int]:
        """`frames` and the functions of the file that call them, transitively (a call is
        looked up in the call graph only when its name is one of theirs)."""
        by_id = {id(f): f for f in self.tree.frames}
        found = set(frames)
        while True:
            names = {getattr(by_id[i].node, "name", None) for i in found if i in by_id}
            names = {n.value for n in names if isinstance(n, cst.Name)}
            added = set()
            for site in self.tree.calls:
                caller = id(site.frame.function or self.tree.module_frame)
                if caller in found or self.callgraph is None:
                    continue
                name = dotted_name(site.node.func)
                if not name or name[-1] not in names:
                    continue
                if any(id(c) in found for c in self.callgraph.callees(site)):
                    added.add(caller)
            if not added:
                return found
            found |= added

    # -- the walk the AMP12x rules share -----------------------------------------------------
    def live(self, ref: Optional[str]) -> bool:
        """A scaler of the file that is not created disabled (`enabled=False`)."""
        info = self.info(ref)
        return info is not None and not info.disabled

    def walk(self, *kinds: str, composed: bool = False) -> Iterator[Tuple[Flow, Event]]:
        """Each event of these kinds, flow by flow in source order; an event of a scaler
        (`unscale`, `step`, ...) only when that scaler is live."""
        for flow in self.composed if composed else self.flows:
            for event in flow.of(*kinds):
                if event.scaler is None or self.live(event.scaler):
                    yield flow, event

    def stepping(self, composed: bool = False) -> Iterator[Tuple[Flow, ScalerRef]]:
        """(flow, scaler) for each live scaler that steps in a flow."""
        for flow in self.composed if composed else self.flows:
            for scaler in flow.stepping_scalers:
                if self.live(scaler):
                    yield flow, scaler  # type: ignore[misc]

    def step_after(self, flow: Flow, event: Event) -> Optional[Event]:
        """The first `scaler.step` after `event` that can run on the same pass, when its scaler
        is live and no plain `optimizer.step()` comes between (the event then belongs to that
        optimizer): the step a clip or a backward feeds."""
        steps = [s for s in flow.of("step") if s.order > event.order and not exclusive(s, event)]
        if not steps or not self.live(steps[0].scaler):
            return None
        step = steps[0]
        if [e for e in flow.between(event, step, "opt_step") if not exclusive(e, event)]:
            return None
        return step

    def updated_anywhere(self, text: str) -> bool:
        return self._anywhere("update", text)

    def updated_by_callers(self, flow, text: str) -> bool:
        """A method of a class here whose `self.` scaler `text` a calling class or function in
        another file updates (EntryCallerUpdate), or a function of this file that calls the
        method on an instance and updates that instance's scaler (StyleTTS2's
        `optimizer.step(key)` per key, then `optimizer.scaler.update()`): the update is the
        caller's, whose composed flow holds the step and is checked for the order."""
        return caller_updated(self.caller_updates, flow.frame, str(text)) or \
            self._updated_through_instance(flow, text)

    def _updated_through_instance(self, flow, text) -> bool:
        if not str(text).startswith("self.") or flow.frame.class_frame is None:
            return False
        own = {id(e.node) for e in flow.of("step", scaler=text) if e.origin is None}
        for other in self.composed if own else ():
            if other is flow:
                continue
            renamed = {str(e.scaler) for e in other.of("step") if e.origin is not None
                       and e.remote is None and id(e.inner) in own and e.scaler is not None}
            renamed.discard(str(text))  # through `self.`: the same object's, updated_anywhere's
            if renamed and any(u.origin is None and str(u.scaler) in renamed for u in other.of("update")):
                return True
        return False

    def unscaled_anywhere(self, text: str) -> bool:
        return self._anywhere("unscale", text)

    def _anywhere(self, kind: str, text: str) -> bool:
        """An event of the file, or of another file's function it calls (self.remote); an update
        also in a lambda's body (`add_event_handler(..., lambda engine: scaler.update())`): the
        lambda runs whenever what it is handed to calls it, an order no flow of the file shows."""
        flows = self.flows + (self.composed if self.remote else [])
        if any(e.kind == kind and str(e.scaler) == str(text) for f in flows for e in f.events):
            return True
        return kind == "update" and str(text) in self._lambda_updates

    @cached_property
    def _lambda_updates(self) -> Set[str]:
        return lambda_updates(self.tree)

    # -- what a call is -------------------------------------------------------------------
    def clip_call(self, call: cst.Call, site: Optional[CallSite], depth: int = 0) -> bool:
        name = dotted_name(call.func)
        if site is not None and resolve(name, site.frame) in CLIP_FUNCTIONS:
            return True
        if name is None:
            return False
        if name[-1] in CLIP_NAMES:
            return not any(
                any(token in part.lower() for token in SELF_UNSCALING) for part in name[:-1]
            )
        # a same-file function that clips (`clip_grad(model)`), one level deep
        if site is not None and depth == 0 and self.callgraph is not None:
            for callee in self.callgraph.callees(site):
                if any(
                    self.clip_call(inner.node, inner, depth + 1)
                    for inner in callee.calls
                    if inner.frame.function is callee
                ):
                    return True
        return False
