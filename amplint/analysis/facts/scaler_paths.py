"""Questions the AMP12x rules ask of a flow's events (amplint.analysis.facts.scaler_flow): which arms
gate one event and not another, what jumps between two, and the edits their fixes share."""

from __future__ import annotations

from typing import Iterable, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.scaler_flow import Branch, Event, Flow, Loop, exclusive


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
