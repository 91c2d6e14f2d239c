"""Questions the AMP12x rules ask of a flow's events (amplint.facts.scaler_flow): which arms
gate one event and not another, what jumps between two, and the edits their fixes share."""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from amplint.facts.scaler_flow import Branch, Event, Flow, Loop, exclusive


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
