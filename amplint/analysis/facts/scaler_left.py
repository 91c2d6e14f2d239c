"""What a composed call drops for a parameter it leaves at its `None` default: the names (for
the message: "which leaves `scaler` at its default `None`") and the scaler steps of the arms
that need it set (`if scaler is not None: scaler.step(optimizer)`), which never run for that
call.

A callee in another file brings only the events that run (scaler_protocol's `remote`); one of
the same file is also walked for itself, so its dead step is among the file's own steps. AMP127
asks `stepped_through_call` to set such a step aside, as it is absent across files.
"""

from __future__ import annotations

from typing import Optional, Set, Tuple

import libcst as cst


def left_none(analysis, call: Optional[cst.CSTNode]) -> Tuple[str, ...]:
    """The parameters a composed call leaves at their `None` default whose arms it dropped."""
    return tuple(sorted(analysis.__dict__.get("_left_none", {}).get(id(call), ())))


def note_left_none(analysis, call: cst.Call, name: str, step: Optional[cst.CSTNode] = None) -> None:
    """`call` leaves `name` at `None`, so the arm holding `step` (a scaler step's node in the
    callee, when the dropped event is one) never runs for it."""
    analysis.__dict__.setdefault("_left_none", {}).setdefault(id(call), set()).add(name)
    if step is not None:
        analysis.__dict__.setdefault("_dead_steps", {}).setdefault(id(call), set()).add(id(step))


def dead_steps(analysis, call: Optional[cst.CSTNode]) -> Set[int]:
    """The ids of the callee's scaler-step nodes that `call` leaves in a dead arm."""
    return analysis.__dict__.get("_dead_steps", {}).get(id(call), set())
