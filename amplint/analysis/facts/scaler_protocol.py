"""Protocol summaries that compose at call sites: a function's scaler events seen through the
functions of the same file it calls.

`train_step()` holds `self.scaler.step(self.optimizer)`, `on_epoch_end()` holds
`self.scaler.update()`, and `fit()` calls the first in its batch loop and the second after it:
the composed flow of `fit` holds the step inside the loop and the update after it, so AMP121
can see the order. Each function's summary is its own events plus, at each call the call graph
resolves to one function of the file (a plain function, a method through `self`, one of a base
class or mixin of the file), the callee's composed events, nested in the call's loops and
branches. Scalers and optimizers are renamed across the call: a parameter becomes the argument
the caller passes (`step(loss, self.opt, self.scaler)`), `self.` attributes stay the caller's
when the call goes through `self`. A composed event sits at the call (its `node`), remembers
the call it came through (`origin`) and its own node in the callee (`inner`); it carries no
statement and no receiver, so no fix ever edits through a call.

A callee that creates its own scaler (a local `scaler = GradScaler()`) is not composed: each
call has a fresh scaler, so its events cannot pair with the caller's or another call's. Where a
callee is not resolved (another file, a framework callback, an attribute of an unknown
object) nothing is composed: the rules stay as silent as they are on one function. A hazard
that lies wholly inside one callee is that callee's to report: `spans(...)` tells the rules
whether the events of a finding come through more than one call (or from the function itself).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.framework_verbs import events_of
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.partial_bindings import bind, bind_remote, partial_callee
from amplint.analysis.facts.scaler_arms import (
    call_truths, cut_after, decided_ctx, decided_out, flag_name, literal_flags, own_ifs, runs,
)
from amplint.analysis.facts.scaler_flow import Event, Flow, FlowWalker, Loop, key_text, renamed_branch
from amplint.analysis.facts.scaler_keys import keyed_text, once_loops, own_single_passes, run_once
from amplint.analysis.facts.scaler_left import note_left_none
from amplint.analysis.facts.scaler_remote import Remote, remote_ctx, remote_entry
from amplint.analysis.facts.scaler_renaming import (
    CallRenamer, bound_receiver, dead_arm, keyword_params, none_defaults, positional_params,
)
from amplint.analysis.facts.scaler_stored import constructed_attrs
from amplint.analysis.facts.subclass_overrides import abstract
from amplint.analysis.facts.tree import CallSite, Frame

PROTOCOL = ("scale", "backward", "unscale", "clip", "step", "update", "opt_step")
PROTOCOL_METHODS = ("scale", "unscale_", "step", "update", "backward")  # FlowWalker.expr's
_DEPTH = 6
_MAX_EVENTS = 200  # inlining copies events: a call graph that explodes is left uncomposed


def spans(*events: Event) -> bool:
    """True when the events do not all come through one and the same call."""
    origins = {id(e.origin) if e.origin is not None else None for e in events}
    return len(origins) > 1 or None in origins


def through_place(event: Event):
    """Where a composed event sits, for the finding a rule reports at its call
    (Diagnostic.through): the callee's node in this file, (path, line) in another file's; None
    for an event of the function itself."""
    if event.remote is not None:
        return event.remote.place
    if event.origin is not None and event.inner is not None:
        return event.inner
    return None


def composed_flows(analysis, only: Optional[Set[int]] = None,
                   skip: Set[int] = frozenset()) -> List[Flow]:
    """One composed Flow per function (and the module body) that has scaler events after
    composition, in the order of the file's frames. `only`: the ids of the frames that can
    hold such events (the others are neither walked nor composed into a caller). `skip`: frames
    not walked for themselves (`quiet_frames`' second set), still composed into a caller."""
    composer = _Composer(analysis, only)
    flows = []
    for frame in analysis.tree.frames:
        if frame.kind not in ("function", "module") or id(frame) in skip:
            continue
        if only is not None and id(frame) not in only:
            continue
        flow = composer.flow(frame, ())
        if any(e.scaler is not None for e in flow.events):
            flows.append(flow)
    return flows


def quiet_frames(analysis) -> Tuple[Set[int], Set[int]]:
    """The ids of the function and module frames whose own statements hold no call on a
    scaler's text and no framework verb, so that their flow holds no scaler's event (issue 34:
    most functions of a large file); and those of them that also call no function of the file
    (nor, with the project's entries, of another): nothing composes into their flow, so it is
    the same whenever it is walked, and a flow that holds no scaler's event after composition
    either need not be walked for itself."""
    texts = {str(ref) for ref in analysis.infos}
    frameworks, module, graph = analysis.frameworks, analysis.module, analysis.callgraph
    module_frame = analysis.tree.module_frame
    loud: Set[int] = set()
    calling: Set[int] = set()
    for site in analysis.tree.calls:
        key = id(site.frame.function or module_frame)
        if key in loud:
            continue
        func = site.node.func
        if (type(func) is cst.Attribute and key_text(func.value) in texts) or events_of(
                site.node, frameworks, module):
            loud.add(key)
        elif key not in calling and graph is not None and (
                graph.callees(site) or partial_callee(analysis, site) is not None):
            calling.add(key)
    quiet = {id(f) for f in analysis.tree.frames if f.kind in ("function", "module")} - loud
    return quiet, set() if analysis.remote else quiet - calling


def function_flows(analysis) -> List[Flow]:
    """The composed flows, events or not, of the functions that can hold a protocol event
    (the project's protocol summaries keep those that do): the others' flows hold none."""
    only = protocol_frames(analysis)
    composer = _Composer(analysis, only)
    return [composer.flow(f, ()) for f in analysis.tree.frames
            if f.kind == "function" and (only is None or id(f) in only)]


def protocol_frames(analysis) -> Optional[Set[int]]:
    """The ids of the frames whose composed flow can hold a protocol event (None: any, with the
    project's entries). The walker emits one only at a call of the frame's own statements that
    names a method `scale`, `unscale_`, `step`, `update` or `backward`, resolves to
    `torch.autograd.backward`, is a framework verb or a clip (`clip_call`; its look into a
    same-file callee makes that callee a holder), or inlines a callee that holds one: so the
    holders of such calls and, transitively, the frames that call a function among them. A
    frame outside never walks one inside, so those inside are walked as they were with all."""
    if analysis.remote:
        return None
    tree, graph = analysis.tree, analysis.callgraph
    frameworks, module, module_frame = analysis.frameworks, analysis.module, tree.module_frame
    found: Set[int] = set()
    callers: Dict[int, Set[int]] = {}  # id(callee) -> ids of the frames that call it
    for site in tree.calls:
        key = id(site.frame.function or module_frame)
        if graph is not None:
            partial = None if graph.callees(site) else partial_callee(analysis, site)
            for callee in graph.callees(site) if partial is None else (partial[0],):
                callers.setdefault(id(callee), set()).add(key)
        if key in found:
            continue
        func = site.node.func
        if (
            (type(func) is cst.Attribute and func.attr.value in PROTOCOL_METHODS)
            or resolve_expr(func, site.frame) == "torch.autograd.backward"
            or events_of(site.node, frameworks, module)
            or analysis.clip_call(site.node, site, 1)
        ):
            found.add(key)
    todo = list(found)
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in found:
                found.add(caller)
                todo.append(caller)
    return found


class _Composer:
    def __init__(self, analysis, only: Optional[Set[int]] = None) -> None:
        self.analysis = analysis
        self.only = only
        self.done: Dict[int, Flow] = {}
        self.nones: Dict[int, Tuple[str, ...]] = {}  # a callee's `none_defaults`

    def flow(self, frame: Frame, stack) -> Flow:
        known = self.done.get(id(frame))
        if known is not None:
            return known
        flow = Flow(frame.node, frame)
        self.done[id(frame)] = flow  # a recursive call back into it sees what is known so far
        walker = _ComposingWalker(self, flow, stack + (id(frame),))
        body = frame.node.body  # type: ignore[attr-defined]
        if isinstance(frame.node, cst.Module):
            walker.block(body, ())
        else:
            walker.suite(body, ())
        # Kept even when recursion cut it short (it then lacks the cyclic call's events, which
        # only makes the rules quieter): each function is walked once, whatever the call graph.
        self.done[id(frame)] = flow
        return flow


class _ComposingWalker(FlowWalker):
    def __init__(self, composer: _Composer, flow: Flow, stack) -> None:
        super().__init__(composer.analysis, flow)
        self.composer = composer
        self.stack = stack

    def call(self, call: cst.Call, site: Optional[CallSite], ctx) -> bool:
        graph = self.analysis.callgraph
        if site is None or graph is None:
            return False
        callees = [f for f in graph.callees(site) if f.kind == "function"]
        partial = None
        if callees and all(abstract(f) for f in callees):  # the subclasses of other files define it
            return self.remote(call, site, ctx)
        if not callees and not graph.callees(site):
            partial = partial_callee(self.analysis, site)
            if partial is None:
                return self.remote(call, site, ctx)
            callees = [partial[0]]
        if len(callees) != 1:
            return False
        callee = callees[0]
        if id(callee) in self.stack or len(self.stack) >= _DEPTH:
            return False
        if self.composer.only is not None and id(callee) not in self.composer.only:
            return False
        inner = self.composer.flow(callee, self.stack)
        events = [e for e in inner.events if e.kind in PROTOCOL]
        if not events or _counted(self.flow.events) + len(events) > _MAX_EVENTS:
            return False
        rename = CallRenamer(self.analysis, call, positional_params(call, callee), keyword_params(callee),
                          self.flow.frame)
        rename.receiver = bound_receiver(self.analysis, call, callee)
        made = graph.closures.of_call(site)
        if made is not None and made.closure is callee:  # `step()` made by `make_step(opt, scaler)`
            rename.outer = CallRenamer(self.analysis, made.call, positional_params(made.call, made.factory),
                                    keyword_params(made.factory), made.caller)
            rename.outer.elsewhere = made.caller is not self.flow.frame
            rename.factory = made.factory
        nones = self.composer.nones.get(id(callee))
        if nones is None:
            nones = self.composer.nones[id(callee)] = none_defaults(callee.node)
        if partial is not None and not bind(partial[1], nones, rename, (
                tuple((b.cond, b.positive) for b in e.branches()) for e in events)):
            return False
        unbound = rename.unbound(nones)
        if any(
            e.scaler is not None and e.scaler.scope == id(callee)
            and str(e.scaler).split(".", 1)[0] not in rename.params
            for e in events
        ):
            return False  # its own local scaler: a new one per call, a protocol of its own
        flags = literal_flags(rename, callee, self.analysis.tree)
        ifs = own_ifs(callee) if flags else set()
        cut = cut_after(inner.events, flags, ifs) if flags else None
        onces = own_single_passes(inner.events, callee, self.analysis.tree)
        once = once_loops(((l.node, onces.get(id(l.node))) for e in inner.events for l in e.loops),
                          call, positional_params(call, callee), keyword_params(callee), ctx) if onces else {}
        for event in (e for e in inner.events if e.kind in PROTOCOL or e.kind == "zero_grad"):
            if flags and (decided_out(event, flags, ifs) or cut is not None and event.order > cut):
                continue  # an arm this call's flag argument never runs (scaler_arms.py)
            dead = dead_arm(((b.cond, b.positive) for b in event.branches()), unbound) if unbound else None
            if dead is not None:
                if event.kind != "zero_grad":
                    step = (event.inner or event.node) if event.kind == "step" else None
                    note_left_none(self.analysis, call, dead, step)
                continue
            scaler = event.scaler
            if scaler is not None:
                scaler = rename.scaler(scaler)
            inner_ctx = decided_ctx(event.ctx, flags, ifs) if flags else event.ctx
            arg = event.arg
            if once:  # a loop this call runs once, with its target the key the call passes
                inner_ctx, arg = run_once(inner_ctx, arg, once)
            self.emit(
                event.kind, call, ctx + tuple(renamed_branch(b, rename.text) for b in inner_ctx), None, scaler=scaler,
                arg=keyed_text(arg, rename) if arg else None, backward=event.backward,
                site=site, origin=call, inner=event.inner or event.node,
                framework=event.framework, remote=event.remote,
            )
        return True

    def remote(self, call: cst.Call, site: CallSite, ctx) -> bool:
        """A callee in another file, as the project pass summarised it (scaler_remote.py)."""
        entry = remote_entry(self.analysis, call)
        if entry is None or _counted(self.flow.events) + _counted_remote(entry.events) > _MAX_EVENTS:
            return False
        rename = CallRenamer(self.analysis, call, entry.positional, entry.keywords, self.flow.frame)
        left: Dict[str, str] = {}
        if entry.method and isinstance(call.func, cst.Attribute):
            rename.receiver = key_text(call.func.value)
            rename.stored, left = constructed_attrs(self.analysis, self.flow.frame, call, entry)
        if entry.factory:  # a closure: its free names through the factory call that made it
            made = self.analysis.callgraph.closures.factory_call(site)
            if made is None:
                return False
            positional, keywords, fixed = entry.factory
            rename.outer = CallRenamer(self.analysis, made[0], positional, keywords, made[1])
            rename.outer.elsewhere = made[1] is not self.flow.frame
            rename.outer_names = set(fixed)
        if not entry.factory and not bind_remote(self.analysis, site, entry, rename):
            return False
        where = entry.callee.split(":", 1)[0]
        tokens: Dict[int, object] = {}
        unbound = rename.unbound(entry.none_defaults) | set(left)
        ctxs = [remote_ctx(e[5], tokens) for e in entry.events]
        flags, ifs = _remote_flags(entry, rename, tokens)
        once = once_loops(((l.node, l.once) for c in ctxs for l in c if isinstance(l, Loop)), call,
                          entry.positional, entry.keywords, ctx)
        for (kind, scaler, arg, backward, framework, inner_ctx, line, text), rebuilt in zip(entry.events, ctxs):
            if once:  # a loop this call runs once, with its target the key the call passes
                rebuilt, arg = run_once(rebuilt, arg, once)
            dead = dead_arm(((i[3], i[4]) for i in inner_ctx if i[0] == "B"), unbound) if unbound else None
            if dead is not None:
                if kind != "zero_grad":
                    note_left_none(self.analysis, call, left.get(dead, dead))
                continue
            if flags:
                if any(runs(b, flags, ifs) is False for b in rebuilt):
                    continue  # an arm this call's flag argument or default never runs
                rebuilt = decided_ctx(rebuilt, flags, ifs)
            ref = None
            if scaler:
                mapped = rename.text(scaler)
                # a scaler the caller cannot name is no scaler of this file's (never live)
                ref = self.analysis.ref(mapped, self.flow.frame) if mapped else None
            if scaler and ref is None:
                ref = self.analysis.ref("<" + entry.callee + ">." + scaler, self.flow.frame)
            self.emit(
                kind, call, ctx + tuple(renamed_branch(b, rename.text) for b in rebuilt),
                None, scaler=ref,
                arg=keyed_text(arg, rename) if arg else None, backward=backward, site=site,
                origin=call, framework=framework or None, remote=Remote(f"{where}:{line}", text, entry.source, line),
            )
        return True


def _remote_flags(entry, rename, tokens):
    """The flags a call of another file's function fixes (scaler_arms.call_truths) and the ids
    of the rebuilt `if`s of the callee's own body that test them."""
    if not entry.flags:
        return {}, set()
    arms, defaults = entry.flags
    ifs = {id(tokens[n]) for n in arms if n in tokens}
    tested = {flag_name(tokens[n]) for n in arms if n in tokens}
    known = dict(defaults)
    return call_truths(rename, ((name, known.get(name)) for name in tested if name)), ifs


def _counted(events) -> int:
    """The events that count toward _MAX_EVENTS (a `zero_grad` is no protocol event)."""
    return sum(1 for e in events if e.kind != "zero_grad")


def _counted_remote(events) -> int:
    """_counted for an EntryScaler's events (tuples, the kind first)."""
    return sum(1 for e in events if e[0] != "zero_grad")
