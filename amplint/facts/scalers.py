"""GradScaler facts: which names and `self.` attributes hold a scaler, with what `enabled=`, and,
per function body (and, within it, per loop body), the order of the scaler protocol's events.

A *scaler* is a name or attribute bound to `GradScaler(...)` under any spelling
(`torch.amp.GradScaler`, `torch.cuda.amp.GradScaler`, `tamp.GradScaler` after
`from torch.cuda import amp as tamp`, `ShardedGradScaler`), or one the file uses as a scaler: a
receiver of `X.unscale_(opt)` or `X.scale(loss).backward()`, or a name containing "scaler" that is
sent `.scale/.step/.update` (a `scaler` parameter). A callable wrapper such as timm's
`loss_scaler(loss, optimizer, clip_grad=...)` is not a GradScaler and is never sent those methods.

The events of a body, in source order (inner calls first): `scale` (`S.scale(x)`, with
`backward=True` when `.backward()` is chained on it or on a name assigned from it), `backward`
(an unscaled `loss.backward()` / `torch.autograd.backward(loss)`), `unscale` (`S.unscale_(opt)`),
`clip` (`clip_grad_norm_/clip_grad_value_` of any spelling, `model.clip_grad_norm_` (FSDP),
`dispatch_clip_grad`, or a same-file function that clips), `step` (`S.step(opt)`), `update`
(`S.update()`), `opt_step` (a plain `optimizer.step()`), and the jumps `continue`, `break`,
`return`, `raise`. Each event carries its context: the loops around it and the branches it sits in
(`if`/`elif`/`else`, `except`, `match` cases), so rules can tell a conditional event, a
micro-step loop, and separate AMP / non-AMP branches (`if use_amp: ... else: ...`, also across two
`if` statements testing the same condition, `X is None` against `X is not None`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from amplint.facts.names import resolve, resolve_expr
from amplint.facts.regions import Enabled, bound_arguments, literal_bool
from amplint.facts.tree import CallSite, Collector, Frame, dotted_name

SCALER_APIS = {
    "torch.amp.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                             "growth_interval", "enabled"),
    "torch.cuda.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                  "growth_interval", "enabled"),
    "torch.cpu.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                 "growth_interval", "enabled"),
    "torch.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                         "growth_interval", "enabled"),
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": (
        "device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled",
        "process_group"),
    "torch.distributed.fsdp.ShardedGradScaler": (
        "device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled",
        "process_group"),
}

ScalerKey = Tuple[str, str]  # ("name", "scaler") or ("self", "scaler")

# Text one of which any file with a scaler holds: `GradScaler`, a name like `scaler`, or the
# methods that make a receiver a scaler. The AMP12x rules use them as their prefilter.
SCALER_TRIGGERS = ("caler", "unscale_", ".scale(")

CLIP_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad_value",
}
# Last names of clipping calls whatever their receiver: `model.clip_grad_norm_` (FSDP),
# timm's `dispatch_clip_grad`, `utils.clip_gradients(model, c)` (DINO and friends).
CLIP_NAMES = {
    "clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grad_value",
    "dispatch_clip_grad", "clip_gradients", "clip_grads",
}
# Receivers whose clipping unscales by itself (accelerate, Lightning, Fabric, DeepSpeed).
_SELF_UNSCALING = ("accelerator", "fabric", "trainer", "strategy", "precision", "engine")
_NOT_SCALER_METHODS = {"fit", "transform", "fit_transform", "inverse_transform", "partial_fit"}


# -- scalers ------------------------------------------------------------------------------------
@dataclass(eq=False)
class Scaler:
    key: ScalerKey
    call: cst.Call
    frame: Frame
    enabled: Enabled


@dataclass(eq=False)
class ScalerInfo:
    """One scaler of the file, keyed by its text and the scope binding it (a ScalerRef)."""

    text: str
    constructions: List[cst.Call] = field(default_factory=list, repr=False)
    enabled: Enabled = Enabled.MAYBE  # MAYBE also when only known from its use
    maybe_none: bool = False  # `= None` somewhere, `X() if amp else None`, a `=None` parameter
    bf16_only: bool = False  # filled by rules that know the regions

    @property
    def constructed(self) -> bool:
        return bool(self.constructions)

    @property
    def disabled(self) -> bool:
        return self.enabled is Enabled.FALSE


class ScalerRef(str):
    """A scaler's text as written ("scaler", "self.scaler"), told apart from the same text bound
    in another scope: a local `scaler` of one function is not another function's."""

    scope: int

    def __new__(cls, text: str, scope: int) -> "ScalerRef":
        ref = super().__new__(cls, text)
        ref.scope = scope
        return ref

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ScalerRef) and str.__eq__(self, other) and self.scope == other.scope
        )

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((str(self), self.scope))


def scaler_key(target: cst.BaseExpression) -> Optional[ScalerKey]:
    if isinstance(target, cst.Name):
        return ("name", target.value)
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        if target.value.value == "self":
            return ("self", target.attr.value)
    return None


def key_text(expr: cst.BaseExpression) -> Optional[str]:
    """`scaler` -> "scaler", `self.scaler` -> "self.scaler"; None for anything else."""
    name = dotted_name(expr)
    return ".".join(name) if name else None


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


# -- events -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loop:
    node: cst.CSTNode


@dataclass(frozen=True)
class Branch:
    node: cst.CSTNode  # the If / Try / Match / loop whose alternative this is
    index: int
    cond: Optional[str]  # normalized condition text of an `if` (None: except, match, loop else)
    positive: bool = True


Ctx = Union[Loop, Branch]


@dataclass(eq=False)
class Event:
    kind: str  # scale backward unscale clip step update opt_step continue break return raise
    node: cst.CSTNode
    ctx: Tuple[Ctx, ...]
    order: int
    stmt: Optional[cst.SimpleStatementLine]  # the statement line holding it (None in a suite)
    scaler: Optional[ScalerRef] = None  # the scaler for scale/unscale/step/update
    receiver: Optional[cst.BaseExpression] = None  # the scaler expression as written
    arg: Optional[str] = None  # the optimizer's text (step/unscale); `.backward()` receiver text
    backward: bool = False  # scale: the scaled value is backpropagated
    site: Optional[CallSite] = None

    @property
    def loops(self) -> Tuple[Loop, ...]:
        return tuple(c for c in self.ctx if isinstance(c, Loop))

    @property
    def loop(self) -> Optional[Loop]:
        loops = self.loops
        return loops[-1] if loops else None

    def branches(self, within: Optional[Loop] = None) -> Tuple[Branch, ...]:
        """The branches around the event (only those inside loop `within`, when given)."""
        ctx = self.ctx
        if within is not None and within in ctx:
            ctx = ctx[ctx.index(within) + 1:]
        return tuple(c for c in ctx if isinstance(c, Branch))

    def conditional(self, within: Optional[Loop] = None) -> bool:
        return bool(self.branches(within))

    def inside(self, loop: Optional[Loop]) -> bool:
        return loop is None or loop in self.ctx


def exclusive(a: Event, b: Event) -> bool:
    """True when `a` and `b` cannot run in the same pass: different arms of one `if`, or arms of
    two `if`s testing the same condition with opposite outcomes."""
    for x in a.branches():
        for y in b.branches():
            if x.node is y.node and x.index != y.index:
                return True
            if x.cond is not None and x.cond == y.cond and x.positive != y.positive:
                return True
    return False


def more_conditional(a: Event, b: Event) -> bool:
    """True when `a` sits in a branch that `b` does not (a may run when b does not)."""
    return not set(a.branches()) <= set(b.branches())


@dataclass(eq=False)
class Flow:
    """The events of one function (or module) body, in source order."""

    node: cst.CSTNode  # FunctionDef or Module
    frame: Frame
    events: List[Event] = field(default_factory=list)

    def of(self, *kinds: str, scaler: Optional[str] = None) -> List[Event]:
        return [
            e for e in self.events
            if e.kind in kinds and (scaler is None or e.scaler == scaler)
        ]

    def between(self, first: Event, last: Event, *kinds: str) -> List[Event]:
        return [e for e in self.events if first.order < e.order < last.order and e.kind in kinds]

    @property
    def stepping_scalers(self) -> List[str]:
        seen: List[str] = []
        for event in self.of("step"):
            if event.scaler not in seen:
                seen.append(event.scaler)  # type: ignore[arg-type]
        return seen


def _normalize(test: cst.BaseExpression, module: cst.Module) -> Tuple[str, bool]:
    """(condition text, polarity): `not x` -> (x, False); `x is None` -> (x is not None, False);
    bare `x` -> (x is not None, True), so `if scaler:` pairs with `if scaler is None:`."""
    positive = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
        positive = not positive
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
    ):
        if isinstance(test.comparisons[0].operator, cst.Is):
            positive = not positive
        return module.code_for_node(test.left).strip() + " is not None", positive
    text = module.code_for_node(test).strip()
    if isinstance(test, (cst.Name, cst.Attribute)):
        return text + " is not None", positive
    return text, positive


class _Calls(cst.CSTVisitor):
    """Calls of an expression in evaluation order (inner first); lambdas are not run here."""

    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _calls_in(node: Optional[cst.CSTNode]) -> List[cst.Call]:
    if node is None:
        return []
    visitor = _Calls()
    node.visit(visitor)
    return visitor.calls


class ScalerAnalysis:
    def __init__(self, tree: Collector, callgraph=None) -> None:
        self.tree = tree
        self.callgraph = callgraph
        self.module: cst.Module = tree.module_frame.node  # type: ignore[assignment]
        self.scalers: Dict[ScalerKey, Scaler] = {}
        self.constructions: List[CallSite] = []
        self.sites: Dict[int, CallSite] = {id(site.node): site for site in tree.calls}
        for site in tree.calls:
            qualified = resolve_expr(site.node.func, site.frame)
            if qualified in SCALER_APIS:
                self.constructions.append(site)
        by_call = {id(site.node): site for site in self.constructions}
        for assign in tree.assigns:
            site = by_call.get(id(assign.value))
            if site is None:
                continue
            qualified = resolve_expr(site.node.func, site.frame)
            enabled = _enabled_of(site.node, qualified)  # type: ignore[arg-type]
            for target in assign.targets:
                key = scaler_key(target)
                if key is not None:
                    self.scalers[key] = Scaler(key, site.node, assign.frame, enabled)

    @property
    def any(self) -> bool:
        return bool(self.constructions)

    # -- which texts are scalers ----------------------------------------------------------
    @cached_property
    def infos(self) -> Dict[ScalerRef, ScalerInfo]:
        infos: Dict[ScalerRef, ScalerInfo] = {}
        construction_ids = {id(site.node): site for site in self.constructions}
        enabled: Dict[ScalerRef, List[Enabled]] = {}
        none_assigned: Set[ScalerRef] = set()
        for assign in self.tree.assigns:
            values = [assign.value]
            if isinstance(assign.value, cst.IfExp):
                values = [assign.value.body, assign.value.orelse]
            found = [
                (v, construction_ids[id(v)]) for v in values if id(v) in construction_ids
            ]
            for target in assign.targets:
                text = self.ref(key_text(target), assign.frame)
                if text is None:
                    continue
                if isinstance(assign.value, cst.Name) and assign.value.value == "None":
                    none_assigned.add(text)
                if not found:
                    continue
                info = infos.setdefault(text, ScalerInfo(text))
                for value, site in found:
                    info.constructions.append(site.node)
                    qualified = resolve_expr(site.node.func, site.frame)
                    state = _enabled_of(site.node, qualified)  # type: ignore[arg-type]
                    if len(found) < len(values):  # `GradScaler() if amp else None`
                        state = Enabled.MAYBE if state is not Enabled.FALSE else state
                        info.maybe_none = True
                    enabled.setdefault(text, []).append(state)
        # used as scalers
        methods: Dict[ScalerRef, Set[str]] = {}
        strong: Set[ScalerRef] = set()
        for site in self.tree.calls:
            func = site.node.func
            if not isinstance(func, cst.Attribute):
                continue
            text = self.ref(key_text(func.value), site.frame)
            if text is None or str(text) in ("self", "super"):
                continue
            methods.setdefault(text, set()).add(func.attr.value)
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
        for text, used in methods.items():
            if used & _NOT_SCALER_METHODS:
                infos.pop(text, None)
                continue
            if text in infos:
                continue
            last = text.rsplit(".", 1)[-1].lower()
            if text in strong or (
                "scaler" in last and used & {"scale", "step", "update", "unscale_"}
            ):
                infos[text] = ScalerInfo(text)
        for text, info in infos.items():
            if text in enabled:
                info.enabled = _combine(enabled[text])
            if text in none_assigned:
                info.maybe_none = True
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
        scope: Optional[Frame] = frame.scope
        while scope is not None:
            if scope.kind == "class" and scope is not frame.scope:
                scope = scope.parent
                continue
            if root in scope.bindings or root in scope.imports:
                return ScalerRef(text, id(scope))
            scope = scope.parent
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
        for frame in self.tree.frames:
            if frame.kind not in ("function", "module"):
                continue
            flow = Flow(frame.node, frame)
            walker = _Walker(self, flow)
            body = frame.node.body
            if isinstance(frame.node, cst.Module):
                walker.block(body, ())  # type: ignore[arg-type]
            else:
                walker.suite(body, ())  # type: ignore[arg-type]
            if any(e.scaler is not None for e in flow.events):
                flows.append(flow)
        return flows

    # -- the walk the AMP12x rules share -----------------------------------------------------
    def live(self, ref: Optional[str]) -> bool:
        """A scaler of the file that is not created disabled (`enabled=False`)."""
        info = self.info(ref)
        return info is not None and not info.disabled

    def walk(self, *kinds: str) -> Iterator[Tuple[Flow, Event]]:
        """Each event of these kinds, flow by flow in source order; an event of a scaler
        (`unscale`, `step`, ...) only when that scaler is live."""
        for flow in self.flows:
            for event in flow.of(*kinds):
                if event.scaler is None or self.live(event.scaler):
                    yield flow, event

    def stepping(self) -> Iterator[Tuple[Flow, ScalerRef]]:
        """(flow, scaler) for each live scaler that steps in a flow."""
        for flow in self.flows:
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
        return any(
            e.kind == "update" and str(e.scaler) == str(text) for f in self.flows for e in f.events
        )

    def unscaled_anywhere(self, text: str) -> bool:
        return any(
            e.kind == "unscale" and str(e.scaler) == str(text) for f in self.flows for e in f.events
        )

    # -- what a call is -------------------------------------------------------------------
    def clip_call(self, call: cst.Call, site: Optional[CallSite], depth: int = 0) -> bool:
        name = dotted_name(call.func)
        if site is not None and resolve(name, site.frame) in CLIP_FUNCTIONS:
            return True
        if name is None:
            return False
        if name[-1] in CLIP_NAMES:
            return not any(
                any(token in part.lower() for token in _SELF_UNSCALING) for part in name[:-1]
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


class _Walker:
    """Walks one body's statements in order, recording events with their loops and branches."""

    def __init__(self, analysis: ScalerAnalysis, flow: Flow) -> None:
        self.analysis = analysis
        self.flow = flow
        self.scaled_names: Set[str] = set()

    def emit(self, kind: str, node: cst.CSTNode, ctx, stmt, **extra) -> None:
        self.flow.events.append(Event(kind, node, ctx, len(self.flow.events), stmt, **extra))

    # -- statements -----------------------------------------------------------------------
    def suite(self, suite: cst.BaseSuite, ctx) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.block(suite.body, ctx)
        elif isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.small(small, ctx, None)

    def block(self, stmts, ctx) -> None:
        for stmt in stmts:
            self.statement(stmt, ctx)

    def statement(self, stmt: cst.CSTNode, ctx) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, ctx, stmt)
        elif isinstance(stmt, cst.If):
            self.expr(stmt.test, ctx, None)
            cond, positive = _normalize(stmt.test, self.analysis.module)
            self.suite(stmt.body, ctx + (Branch(stmt, 0, cond, positive),))
            if isinstance(stmt.orelse, cst.Else):
                self.suite(stmt.orelse.body, ctx + (Branch(stmt, 1, cond, not positive),))
            elif isinstance(stmt.orelse, cst.If):  # elif: the first test failed
                self.statement(stmt.orelse, ctx + (Branch(stmt, 1, cond, not positive),))
        elif isinstance(stmt, (cst.For, cst.While)):
            self.expr(stmt.iter if isinstance(stmt, cst.For) else stmt.test, ctx, None)
            self.suite(stmt.body, ctx + (Loop(stmt),))
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, ctx + (Branch(stmt, 1, None),))
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expr(item.item, ctx, None)
            self.suite(stmt.body, ctx)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.suite(stmt.body, ctx)
            for index, handler in enumerate(stmt.handlers):
                self.suite(handler.body, ctx + (Branch(stmt, index + 1, None),))
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, ctx + (Branch(stmt, 0, None),))
            if stmt.finalbody is not None:
                self.suite(stmt.finalbody.body, ctx)
        elif isinstance(stmt, cst.Match):
            self.expr(stmt.subject, ctx, None)
            for index, case in enumerate(stmt.cases):
                self.suite(case.body, ctx + (Branch(stmt, index, None),))
        # FunctionDef / ClassDef: their bodies are flows of their own

    def small(self, small: cst.BaseSmallStatement, ctx, stmt) -> None:
        if isinstance(small, cst.Continue):
            self.emit("continue", small, ctx, stmt)
        elif isinstance(small, cst.Break):
            self.emit("break", small, ctx, stmt)
        elif isinstance(small, cst.Return):
            self.expr(small.value, ctx, stmt)
            self.emit("return", small, ctx, stmt)
        elif isinstance(small, cst.Raise):
            self.expr(small.exc, ctx, stmt)
            self.emit("raise", small, ctx, stmt)
        else:
            self.expr(small, ctx, stmt)
            if isinstance(small, cst.Assign):
                value = small.value
                if self._scale_call(value) is not None:
                    for target in small.targets:
                        text = key_text(target.target)
                        if text is not None:
                            self.scaled_names.add(text)

    # -- calls ----------------------------------------------------------------------------
    def _scale_call(self, expr: cst.BaseExpression) -> Optional[str]:
        """The scaler's text when `expr` is `S.scale(...)` for a scaler S."""
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "scale"
            and expr.args
        ):
            text = self.analysis.ref(key_text(expr.func.value), self.flow.frame)
            if text in self.analysis.infos:
                return text
        return None

    def _is_scaled(self, expr: cst.BaseExpression) -> bool:
        return self._scale_call(expr) is not None or key_text(expr) in self.scaled_names

    def expr(self, node: Optional[cst.CSTNode], ctx, stmt) -> None:
        analysis = self.analysis
        module = analysis.module
        for call in _calls_in(node):
            site = analysis.sites.get(id(call))
            func = call.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                text = analysis.ref(key_text(func.value), self.flow.frame)
                if text in analysis.infos:
                    optimizer = _first_arg(call, "optimizer")
                    opt_text = module.code_for_node(optimizer).strip() if optimizer else None
                    if method == "scale" and call.args:
                        self.emit("scale", call, ctx, stmt, scaler=text, receiver=func.value,
                                  site=site)
                        continue
                    if method in ("unscale_", "step") and optimizer is not None:
                        kind = "unscale" if method == "unscale_" else "step"
                        self.emit(kind, call, ctx, stmt, scaler=text, receiver=func.value,
                                  arg=opt_text, site=site)
                        continue
                    if method == "update":
                        self.emit("update", call, ctx, stmt, scaler=text, receiver=func.value,
                                  site=site)
                        continue
                if method == "backward":
                    if self._is_scaled(func.value):
                        for event in reversed(self.flow.events):
                            if event.kind == "scale":
                                if event.node is func.value or self._scale_call(func.value) is None:
                                    event.backward = True
                                break
                        continue
                    if _tensor_backward(call):
                        self.emit("backward", call, ctx, stmt, site=site,
                                  arg=module.code_for_node(func.value).strip())
                        continue
                if (
                    method == "step"
                    and not call.args
                    and text is not None
                    and "sched" not in text.lower()
                    and text not in analysis.infos
                ):
                    self.emit("opt_step", call, ctx, stmt, site=site)
                    continue
            if site is not None and resolve_expr(func, site.frame) == "torch.autograd.backward":
                first = _first_arg(call, "tensors")
                if first is not None and not self._is_scaled(first):
                    self.emit("backward", call, ctx, stmt, site=site)
                continue
            if analysis.clip_call(call, site):
                self.emit("clip", call, ctx, stmt, site=site)


def _first_arg(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
    return None


def _tensor_backward(call: cst.Call) -> bool:
    """`loss.backward()`, `loss.backward(retain_graph=True)`, `(l1 + l2).backward()`: a tensor's
    backward (no positional argument), not `accelerator.backward(loss)` or `self.backward(...)`."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    if any(arg.keyword is None for arg in call.args):
        return False
    receiver = func.value
    if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
        return False
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):
        if receiver.func.value == "super":
            return False
    return True


# -- helpers for the AMP12x rules --------------------------------------------------------------
def signature(branch: Branch):
    """What makes two branches the same arm: one `if`'s arm, or the same tested condition."""
    if branch.cond is not None:
        return ("cond", branch.cond, branch.positive)
    return ("node", id(branch.node), branch.index)


def arms(event: Event, within: Optional[Loop] = None) -> Set[tuple]:
    return {signature(b) for b in event.branches(within)}


def runs_whenever(a: Event, b: Event, within: Optional[Loop] = None) -> bool:
    """True when `a` is no more conditional than `b` (every arm around `a` also holds `b`)."""
    return arms(a, within) <= arms(b, within)


def gates(a: Event, b: Event, within: Optional[Loop] = None) -> List[Branch]:
    """The `if` bodies around `a` (inside loop `within`) that `b` is not in: the tests `a` waits
    for when `b` does not (`if not skip_step:`, `if grad_norm.isfinite():`). `elif`/`else` arms
    are left out: they say an earlier test failed, which is a split of paths, not a skip."""
    around_b = arms(b, within)
    return [
        branch for branch in a.branches(within)
        if isinstance(branch.node, cst.If) and branch.index == 0
        and signature(branch) not in around_b
    ]


def jumps_between(flow: Flow, first: Event, last: Event) -> List[Event]:
    """`continue`/`break` of the loop around `first`, or `return`, between the two events that
    can run on the same pass as `first`: they leave the iteration before `last` runs."""
    loop = first.loop
    found = []
    for event in flow.between(first, last, "continue", "break", "return"):
        if exclusive(event, first):
            continue
        if event.kind == "return" or event.loop == loop:
            found.append(event)
    return found


def expr_line(call: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(call)])


def insert_before(stmt: cst.SimpleStatementLine, new: cst.SimpleStatementLine):
    """Edits that put `new` on its own line before `stmt` (comments above stay on top)."""
    return {
        stmt: cst.FlattenSentinel([
            new.with_changes(leading_lines=stmt.leading_lines),
            stmt.with_changes(leading_lines=()),
        ])
    }


def insert_after(stmt: cst.SimpleStatementLine, new: cst.SimpleStatementLine):
    return {stmt: cst.FlattenSentinel([stmt, new])}
