"""AMP123's path questions: an `unscale_` that runs more often than its scaler's `update()`
(an accumulation loop), or on a pass whose `update()` is skipped (a gate, a jump)."""

from __future__ import annotations

import re
from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.loop_bindings import varies_per_iteration
from amplint.analysis.facts.scaler_flow import first_arg
from amplint.analysis.facts.scalers import (
    Event, Flow, arms, exclusive, gates, jumps_between, runs_whenever,
)

_AMP_TEST = re.compile(r"amp|fp16|half|mixed|scaler|precision|float16|enabled", re.IGNORECASE)


def skipped(module: cst.Module, flow: Flow, unscale: Event) -> Optional[Tuple]:
    """Unscale then skip: every `update()` after the unscale waits for a test the unscale
    does not (`if not skip_optimizer_step:`), or a `return`/`continue` may leave first.
    The unscale must run whenever the update's enclosing arms outside the gate do (an
    unscale under a test of its own, `if not handles_unscaling and not skip:`, is left
    alone). A test about AMP itself (`if use_amp:`, `if scaler.is_enabled():`) or one whose other
    arm steps the optimizer is a split of paths, not a skip. Code that runs once (a module
    body outside loops) is left alone."""
    loop = unscale.loop
    if loop is None and flow.frame.kind != "function":
        return None
    updates = [
        u for u in flow.of("update", scaler=unscale.scaler)
        if u.order > unscale.order and not exclusive(u, unscale) and u.loop == loop
    ]
    if not updates:
        return None
    path = None
    jump_node = None
    for update in updates:
        if not runs_whenever(unscale, update, loop):
            return None  # the unscale has a test of its own (`if ... and not skip:`)
        found = None
        for branch in gates(update, unscale, loop):
            test = " ".join(module.code_for_node(branch.node.test).split())
            if _AMP_TEST.search(test) or str(unscale.scaler) in test:
                return None
            if any(
                e.kind in ("opt_step", "step") and any(
                    c.node is branch.node and getattr(c, "index", 0) != 0 for c in e.ctx
                ) for e in flow.events
            ):
                return None
            found = f"on the path where `if {test}:` is not taken"
            break
        if found is None:
            jumps = jumps_between(flow, unscale, update)
            if not jumps:
                return None  # this update runs whenever the unscale does
            jump = jumps[0]
            for branch in jump.branches(loop):
                test = " ".join(module.code_for_node(branch.node.test).split()) if isinstance(
                    branch.node, cst.If) else ""
                if _AMP_TEST.search(test) or str(unscale.scaler) in test:
                    return None
            found = f"when the `{jump.kind}` at line {{jump_line}} runs first"
            jump_node = jump_node or jump.node
        path = path or found
    return (updates[0], path, jump_node) if path is not None else None


def less_often(flow: Flow, unscale: Event) -> Optional[Event]:
    updates = [
        u for u in flow.of("update", scaler=unscale.scaler) if not exclusive(u, unscale)
    ]
    loop = unscale.loop
    if not updates or loop is None:
        return None
    inside = [u for u in updates if u.inside(loop)]
    loops, inner = list(unscale.loops), None
    optimizer = first_arg(unscale.node, "optimizer") \
        if unscale.origin is None and isinstance(unscale.node, cst.Call) else None
    while not inside and varies_per_iteration(loop.node, optimizer, inner):
        # `for opt in optimizers: scaler.unscale_(opt)`: each optimizer once (as AMP121's
        # _repeating_loop); the question moves to the loop around it
        loops.pop()
        if not loops:
            return None
        inner, loop = loop.node, loops[-1]
        inside = [u for u in updates if u.inside(loop)]
    if not inside:
        # updates only outside the unscale's loop (an inner micro-step loop)
        after = [u for u in updates if u.order > unscale.order]
        return after[0] if after else None
    for update in inside:
        extra = arms(update, loop) - arms(unscale, loop)
        # an `if <test>:` arm the unscale is not in (`if (i + 1) % k == 0:`); arms that
        # only say an earlier test failed (`elif use_amp:` after `if on_tpu:`) are not
        # taken as accumulation gates
        gated = any(sig[0] == "cond" and sig[2] for sig in extra)
        if not gated and not jumps_between(flow, unscale, update):
            return None
    return inside[0]
