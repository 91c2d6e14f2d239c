"""Which arms of a same-file callee one call runs, when a flag the call fixes decides them.

`maybe_unscale(scaler, opt, model, clip=False)` whose body is `if clip: scaler.unscale_(opt)`:
at this call the unscale never runs, yet composed it sat in the same arm as the one of a
`clip=True` call (both calls share the callee's `if` node), and AMP123 read two unscales.
`opt_step(scaler, opt, last=False)` whose body is `scaler.step(opt); if not last: return;
scaler.update()`: at this call the update never runs (the composer drops jumps).

Exact or nothing: the `if` tests a bare parameter (`if clip:` / `if not clip:`) of the callee's
own body (not a deeper callee's, whose names are its own), the parameter is bound once (never
reassigned), and the call passes `True`, `False` or `None` for it (or leaves out a parameter
whose default is one of them), with no `*args`/`**kwargs`. A `return` cuts the events after it
only when every arm around it runs at this call and no loop, `try` or other branch is around it.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.scaler_flow import Branch, Event
from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import Frame

_TRUTH = {"True": True, "False": False, "None": False}


def literal_flags(rename, callee: Frame, tree) -> Dict[str, bool]:
    """parameter -> the truth of the literal it holds at this call (`rename`: the composer's
    renamer, whose `bound` maps a parameter to the argument's text)."""
    if rename.starred:
        return {}
    found: Dict[str, bool] = {}
    params = callee.node.params  # type: ignore[attr-defined]
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        name = param.name.value
        if name in rename.bound:
            truth = _TRUTH.get(rename.bound[name] or "")
        elif isinstance(param.default, cst.Name):
            truth = _TRUTH.get(param.default.value)
        else:
            truth = None
        if truth is not None and tree.bound_once(callee, name):
            found[name] = truth
    return found


def own_ifs(callee: Frame) -> Set[int]:
    """ids of the `if` statements of the callee's own body (not of a def or class inside)."""
    found: Set[int] = set()
    body = callee.node.body  # type: ignore[attr-defined]
    todo = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.If):
            found.add(id(node))
        todo.extend(children_in_visit_order(node))
    return found


def _flag(test: cst.BaseExpression) -> Tuple[Optional[str], bool]:
    """(`x`, negated) of a test `x` or `not x`; (None, False) for anything else."""
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    return (test.value, negated) if isinstance(test, cst.Name) else (None, False)


def _runs(branch: Branch, flags: Dict[str, bool], ifs: Set[int]) -> Optional[bool]:
    """Whether the call runs this arm (None: not decided by a flag)."""
    node = branch.node
    if not isinstance(node, cst.If) or id(node) not in ifs or branch.index not in (0, 1):
        return None
    name, negated = _flag(node.test)
    if name is None or name not in flags:
        return None
    body = flags[name] != negated
    return body if branch.index == 0 else not body


def decided_out(event: Event, flags: Dict[str, bool], ifs: Set[int]) -> bool:
    """The event sits in an arm this call never runs."""
    return any(_runs(b, flags, ifs) is False for b in event.branches())


def cut_after(events: Iterable[Event], flags: Dict[str, bool], ifs: Set[int]) -> Optional[int]:
    """The order of the first `return` of the callee's body that runs whenever the call reaches
    it (no loop around it, every arm around it run at this call): later events never run."""
    for event in events:
        if event.kind != "return" or event.loops:
            continue
        if all(_runs(b, flags, ifs) is True for b in event.branches()):
            return event.order
    return None
