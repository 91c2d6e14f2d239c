"""Questions the AMP12x rules ask of a flow's events (amplint.analysis.facts.scaler_flow): which arms
gate one event and not another, what jumps between two, and the edits their fixes share."""

from __future__ import annotations

from typing import Iterable, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.loop_bindings import BoundNames
from amplint.analysis.facts.tree import iter_nodes
from amplint.analysis.facts.scaler_flow import Branch, Event, Flow, Loop, exclusive, first_arg, key_text


def passed_optimizer(step: Event) -> Optional[cst.BaseExpression]:
    """For a step composed through a call, the argument of that call holding the optimizer the
    callee steps (`self.run_phase(module, opt)` whose callee runs `scaler.step(opt)`, or
    `step_phase(phase)` whose callee steps `phase.opt`), or the key that picks it
    (`optimizer.step(key)` whose callee steps `self.optimizers[key]`, scaler_keys.py):
    composition renamed the callee's parameter to the argument's text. None when the callee
    steps an optimizer the call does not pass (`self.optimizer`), or the step is the
    function's own."""
    call = step.origin
    if not isinstance(call, cst.Call) or not step.arg:
        return None
    for arg in call.args:
        text = None if arg.star else key_text(arg.value)
        if text is not None and text != "self" and (
                step.arg == text or step.arg.startswith(text + ".") or step.arg.endswith(f"[{text}]")):
            return arg.value
    return None


def picked_per_iteration(loop: cst.CSTNode, step: Event) -> bool:
    """Each iteration of `loop`, a `for` of the flow's function around `step`, steps the
    optimizer its target picks: the function's own step (`for opt in optimizers:
    scaler.step(opt)`, `scaler.step(optimizers[key])`: steps_each_optimizer), or a step composed
    through a call in the loop's body that passes the target as the optimizer or the key that
    picks it (`for key in keys: optimizer.step(key)`: passed_optimizer)."""
    if step.origin is None:
        return isinstance(step.node, cst.Call) and steps_each_optimizer(loop, step.node)
    if not isinstance(loop, cst.For) or not any(node is step.origin for node in iter_nodes(loop.body)):
        return False
    passed = passed_optimizer(step)
    targets = {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
    return isinstance(passed, cst.Name) and passed.value in targets


def optimizer_loops(events: Iterable[Event]) -> Set[int]:
    """id() of the loops of a function each of whose iterations steps another optimizer: every
    scaler step inside is the function's own and steps one the loop takes from its `for` target
    (`for group, optimizer in self.optimizers.items(): grad_scaler.step(optimizer)`, which
    GradScaler allows before one `update()`). A callee's loop travels to its callers' files
    marked so (scaler_remote.OPTIMIZER_LOOP)."""
    verdict: dict = {}
    for event in events:
        if event.kind != "step":
            continue
        own = isinstance(event.node, cst.Call) and event.origin is None
        for loop in event.loops:
            verdict[id(loop.node)] = verdict.get(id(loop.node), True) and own and \
                steps_each_optimizer(loop.node, event.node)
    return {key for key, each in verdict.items() if each}


def steps_each_optimizer(loop: cst.CSTNode, step: cst.Call) -> bool:
    """`loop` is a `for` whose target names the optimizer `step` steps: the target itself
    (`for opt in optimizers: scaler.step(opt)`), a subscript by it (`scaler.step(opts[i])`), or a
    name the loop's body binds once, at its top level, to such a subscript (`optimizer =
    self.optimizers[group]`). Exact or nothing: a value computed from the target otherwise
    (`opt = pick(batch)`) may be the same optimizer every time."""
    optimizer = first_arg(step, "optimizer")
    if not isinstance(loop, cst.For) or optimizer is None:
        return False
    targets = {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
    if isinstance(optimizer, cst.Name) and optimizer.value not in targets:
        bound = [s.body[0] for s in loop.body.body
                 if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)
                 and any(isinstance(t.target, cst.Name) and t.target.value == optimizer.value
                         for t in s.body[0].targets)]
        if len(bound) != 1 or len(bound[0].targets) != 1 or _bindings(loop.body, optimizer.value) != 1:
            return False
        optimizer = bound[0].value
    if isinstance(optimizer, cst.Name):
        return optimizer.value in targets
    return isinstance(optimizer, cst.Subscript) and any(
        isinstance(n, cst.Name) and n.value in targets
        for element in optimizer.slice for n in iter_nodes(element.slice))


def _bindings(body: cst.CSTNode, name: str) -> int:
    """How many statements under `body` bind `name`."""
    count = 0
    for node in iter_nodes(body):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr)):
            found = BoundNames({name})
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    found._target(target.target)
            elif isinstance(node, cst.For):
                found._target(node.target)
            elif isinstance(node, cst.With):
                for item in node.items:
                    if item.asname is not None:
                        found._target(item.asname.name)
            else:
                found._target(node.target)
            count += bool(found.names)
    return count


def parameter_scaler(flow: Flow, scaler) -> bool:
    """The scaler is a parameter of the function whose flow this is (`def clip_and_step(model,
    optimizer, scaler)`): what was done to it before the call (scaled, unscaled) is its
    callers', whose composed flows hold this function's events after their own."""
    name = str(scaler)  # a ScalerRef equals only a ScalerRef
    node = flow.node
    if "." in name or not isinstance(node, cst.FunctionDef):
        return False
    params = node.params
    return any(p.name.value == name for p in (*params.posonly_params, *params.params,
                                                *params.kwonly_params))


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


def caller_decides(flow: Flow, jump: Event) -> bool:
    """A `return` under an `if` that tests a parameter of the function (`def scaler_step(scaler,
    opt, last): scaler.step(opt); if not last: return; scaler.update()`): whether the update is
    skipped is each call's choice, and the next step may be another optimizer's (one update
    after the last of several steps is the protocol). The callers' flows, which compose the
    helper's events through the call, are where a repeated step shows."""
    function = flow.node
    if jump.kind != "return" or not isinstance(function, cst.FunctionDef):
        return False
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                      *function.params.kwonly_params)}
    for branch in jump.branches():
        if isinstance(branch.node, cst.If) and _flag(branch.node.test) in params:
            return True
    return False


def _flag(test: cst.BaseExpression) -> Optional[str]:
    """`last` or `not last`: a flag the caller passes (not a value tested, `isfinite(norm)`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return test.value if isinstance(test, cst.Name) else None


def cleared_between(flow: Flow, first: Event, last: Event, optimizer: Optional[str]) -> bool:
    """`optimizer.zero_grad()` runs between `first` and `last` and clears the gradients `first`
    made before `last` can use them: after `first` whenever `first` runs (in no loop or arm that
    `first` is not in, no jump between: icefall's `scan_pessimistic_batches_for_oom`,
    `loss.backward(); optimizer.zero_grad()` before training), or before `last` in its own
    iteration whenever `last` runs (in no loop or arm that `last` is not in: icefall's VITS
    `optimizer_d.zero_grad(); scaler.scale(loss_d).backward(); scaler.step(optimizer_d)`).
    `optimizer`: the text `last` steps, in the flow's names."""
    if optimizer is None:
        return False
    for event in flow.between(first, last, "zero_grad"):
        if event.arg != optimizer:
            continue
        if all(c in first.ctx for c in event.ctx) and not jumps_between(flow, first, event):
            return True
        if all(c in last.ctx for c in event.ctx):
            return True
    return False


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


def repeated_unscales(flow) -> Iterable[Tuple[Event, Event]]:
    """(earlier, later) framework unscale events of one flow that unscale the same optimizer
    (or every optimizer) on the same pass, in the same loop, with no optimizer step, scaler
    step or update between them (a prepared optimizer's `step()` updates the scaler and resets
    its unscale state), and no `return`/`continue`/`break` that leaves the first's pass first. Lazy: the flow's events as scaler_flow records them."""
    unscales = [e for e in flow.events if e.kind == "unscale" and e.framework]
    for later in unscales:
        for earlier in unscales:
            if earlier.order >= later.order or str(earlier.scaler) != str(later.scaler):
                continue
            if earlier.arg is not None and later.arg is not None and earlier.arg != later.arg:
                continue
            if exclusive(earlier, later) or earlier.loop != later.loop:
                continue
            if any(
                not exclusive(e, later)
                for e in flow.between(earlier, later, "opt_step", "step", "update", "step_update")
            ):
                continue
            if any(not exclusive(j, later) for j in jumps_between(flow, earlier, later)):
                continue  # the pass that unscaled first leaves before the second
            if _none_tested(later, earlier):
                continue
            yield earlier, later
            break


def _none_tested(later: Event, earlier: Event) -> bool:
    """`later` waits for an `if X is None:` (or `is not None`) the earlier event is not under:
    typically "was it computed already?" (transformers' `_get_grad_norm(model, grad_norm)`
    clips only `if grad_norm is None`, i.e. when `_clip_grad_norm` did not run), a value flow
    the events do not carry, so the pair is not taken to run on the same pass."""
    around = set(earlier.branches())
    for branch in later.branches():
        if branch in around or not isinstance(branch.node, cst.If):
            continue
        test = branch.node.test
        if isinstance(test, cst.Comparison) and any(
            isinstance(c.comparator, cst.Name) and c.comparator.value == "None"
            for c in test.comparisons
        ):
            return True
    return False
