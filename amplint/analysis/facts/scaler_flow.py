"""The scaler protocol's events of one body, in order, with their loops and branches (the
walk the AMP12x rules read through `ScalerAnalysis.flows` / `.walk`), and the questions rules
ask of them: can two events run on the same pass, which arms gate one, what jumps between two.

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

from dataclasses import dataclass, field, replace
from typing import List, Optional, Set, Tuple, Union

import libcst as cst

from amplint.analysis.facts.framework_verbs import events_of, receiver_text
from amplint.analysis.facts.gradient_backward import gradient_backward
from amplint.analysis.facts.names import resolve_expr, uncast
from amplint.analysis.facts.syntax import calls_in
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name

# The scaler facts (amplint.analysis.facts.scalers) build on this module; their types are named here
# only in annotations, as strings, so that the import runs one way.
ScalerRef = "amplint.analysis.facts.scalers.ScalerRef"
ScalerAnalysis = "amplint.analysis.facts.scalers.ScalerAnalysis"


def key_text(expr: cst.BaseExpression) -> Optional[str]:
    """`scaler` -> "scaler", `self.scaler` -> "self.scaler"; None for anything else."""
    name = dotted_name(expr)
    return ".".join(name) if name else None


# -- events -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loop:
    node: cst.CSTNode
    # another file's loop that runs once when a call passes a parameter a value: (target,
    # parameter), loop_bindings.single_pass as the callee's summary carries it
    once: Optional[Tuple[str, str]] = field(default=None, compare=False)


@dataclass(frozen=True)
class Branch:
    node: cst.CSTNode  # the If / Try / Match / loop whose alternative this is
    index: int
    cond: Optional[str]  # normalized condition text of an `if` (None: except, match, loop else)
    positive: bool = True
    # the same `X is not None` test named as the function that holds the event names it: through
    # a local alias (`fp16_scaler = model.fp16_scaler`), or a callee's test in its caller's names
    # (`self.fp16_scaler` of `model.forward_backward()` is `model.fp16_scaler`); None: none other
    also: Optional[str] = field(default=None, compare=False)


NOT_NONE = " is not None"


def _conds(branch: Branch) -> Set[str]:
    return {c for c in (branch.cond, branch.also) if c is not None}


def renamed_branch(branch, rename) -> "Ctx":
    """A callee's branch with its `X is not None` test also in the caller's names (`rename`:
    the callee's name text -> the caller's, or None)."""
    if not isinstance(branch, Branch) or branch.cond is None or not branch.cond.endswith(NOT_NONE):
        return branch
    subject = branch.cond[:-len(NOT_NONE)]
    mapped = rename(subject)
    if mapped is None or mapped == subject:
        return branch
    return replace(branch, also=mapped + NOT_NONE)


Ctx = Union[Loop, Branch]


@dataclass(eq=False)
class Event:
    # scale backward unscale clip step update opt_step continue break return raise; zero_grad
    kind: str
    node: cst.CSTNode
    ctx: Tuple[Ctx, ...]
    order: int
    stmt: Optional[cst.SimpleStatementLine]  # the statement line holding it (None in a suite)
    scaler: Optional[ScalerRef] = None  # the scaler for scale/unscale/step/update
    receiver: Optional[cst.BaseExpression] = None  # the scaler expression as written
    arg: Optional[str] = None  # the optimizer's text (step/unscale); `.backward()` receiver text
    backward: bool = False  # scale: the scaled value is backpropagated
    site: Optional[CallSite] = None
    origin: Optional[cst.Call] = None  # composed (scaler_protocol.py): the call it came through
    inner: Optional[cst.CSTNode] = None  # composed: the event's own node, in the callee
    framework: Optional[str] = None  # a framework's call (framework_verbs.py), not a GradScaler's
    remote: Optional[object] = None  # composed from another file: scaler_remote.Remote

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
            if x.positive != y.positive and _conds(x) & _conds(y):
                return True
    return False


def deciding_test(a: Event, b: Event) -> Optional[cst.BaseExpression]:
    """The test of the `if` whose arms hold `a` and `b` (None: another kind of branch, or
    events composed through a call, whose branches are not this file's statements)."""
    if a.origin is not None or b.origin is not None:
        return None
    for x in a.branches():
        for y in b.branches():
            if x.node is y.node and x.index != y.index:
                return x.node.test if isinstance(x.node, cst.If) and x.index in (0, 1) else None
            if x.positive != y.positive and _conds(x) & _conds(y):
                return x.node.test if isinstance(x.node, cst.If) else None
    return None


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


class FlowWalker:
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

    def _aliased(self, cond: str) -> Optional[str]:
        """`fp16_scaler is not None` as `model.fp16_scaler is not None` when the function binds
        `fp16_scaler` once, to `model.fp16_scaler` (Frame.aliases)."""
        if not cond.endswith(NOT_NONE) or "." in cond[:-len(NOT_NONE)]:
            return None
        value = self.flow.frame.aliases.get(cond[:-len(NOT_NONE)])
        text = key_text(value) if value is not None else None
        return text + NOT_NONE if text is not None else None

    def statement(self, stmt: cst.CSTNode, ctx) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, ctx, stmt)
        elif isinstance(stmt, cst.If):
            self.expr(stmt.test, ctx, None)
            cond, positive = _normalize(stmt.test, self.analysis.module)
            also = self._aliased(cond)
            self.suite(stmt.body, ctx + (Branch(stmt, 0, cond, positive, also),))
            if isinstance(stmt.orelse, cst.Else):
                self.suite(stmt.orelse.body, ctx + (Branch(stmt, 1, cond, not positive, also),))
            elif isinstance(stmt.orelse, cst.If):  # elif: the first test failed
                self.statement(stmt.orelse, ctx + (Branch(stmt, 1, cond, not positive, also),))
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
                if self._scale_call(uncast(small.value, self.flow.frame)) is not None:
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
        known = analysis.__dict__.setdefault("_calls_in", {})  # the plain and composed walks
        calls = known.get(id(node))  # both ask for every expression of the file
        if calls is None:
            calls = known[id(node)] = calls_in(node)
        for call in calls:
            site = analysis.sites.get(id(call))
            func = call.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                text = analysis.ref(key_text(func.value), self.flow.frame)
                if text in analysis.infos:
                    optimizer = first_arg(call, "optimizer")
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
                if method == "zero_grad":  # no protocol event: AMP122 asks what it clears
                    self.emit("zero_grad", call, ctx, stmt, site=site,
                              arg=module.code_for_node(func.value).strip())
                if method == "backward":
                    if self._is_scaled(func.value):
                        for event in reversed(self.flow.events):
                            if event.kind == "scale":
                                if event.node is func.value or self._scale_call(func.value) is None:
                                    event.backward = True
                                break
                        continue
                    if tensor_backward(call) or gradient_backward(
                            call, site.frame if site is not None else None, analysis.tree):
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
                    # `self.step()` of a wrapper whose `step` runs the scaler's step and update
                    # (mmagic's AmpOptimWrapper): the method's events, when it has any
                    if not self.call(call, site, ctx):
                        self.emit("opt_step", call, ctx, stmt, site=site, arg=str(text))
                    continue
            if site is not None and resolve_expr(func, site.frame) == "torch.autograd.backward":
                first = first_arg(call, "tensors")
                if first is not None and not self._is_scaled(first):
                    self.emit("backward", call, ctx, stmt, site=site)
                continue
            if self.framework(call, ctx, stmt, site):
                continue
            if not self.call(call, site, ctx) and analysis.clip_call(call, site):
                self.emit("clip", call, ctx, stmt, site=site)

    def framework(self, call: cst.Call, ctx, stmt, site: Optional[CallSite]) -> bool:
        """A framework's protocol call (amplint.analysis.data.scaler_vocab): its unscale events, with
        the framework object as their scaler."""
        found = events_of(call, self.analysis.frameworks, self.analysis.module)
        if not found:
            return False
        scaler = self.analysis.ref(receiver_text(call), self.flow.frame)
        for kind, opt_text, verb in found:
            self.emit(kind, call, ctx, stmt, scaler=scaler, arg=opt_text, site=site,
                      framework=verb.framework)
        return True

    def call(self, call: cst.Call, site: Optional[CallSite], ctx) -> bool:
        """Any other call: the composing walker (scaler_protocol.py) inlines its callee."""
        return False


def first_arg(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
    return None


def tensor_backward(call: cst.Call) -> bool:
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
