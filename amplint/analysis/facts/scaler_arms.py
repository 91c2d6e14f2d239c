"""Which arms of a callee one call runs, when a flag the call fixes (or leaves at its default) decides them.

`maybe_unscale(scaler, opt, model, clip=False)` whose body is `if clip: scaler.unscale_(opt)`:
at this call the unscale never runs, yet composed it sat in the same arm as the one of a
`clip=True` call (both calls share the callee's `if` node), and AMP123 read two unscales.
`opt_step(scaler, opt, last=False)` whose body is `scaler.step(opt); if not last: return;
scaler.update()`: at this call the update never runs (the composer drops jumps).

`amp_step(self, optimizer, update=True)` whose body is `scaler.step(optimizer); if update:
scaler.update()`, called as `self.amp_step(opt_g)`: at this call the update always runs, so its
composed event carries no condition (AMP126 counts no update behind a test of the helper's own).
The same holds for a callee of another file: its summary carries the numbers of its own `if`s
that test such a parameter and the parameters' literal defaults (EntryScaler.flags).

Exact or nothing: the `if` tests a bare parameter (`if clip:` / `if not clip:`) of the callee's
own body (not a deeper callee's, whose names are its own), the parameter is bound once (never
reassigned), and the call passes `True`, `False` or `None` for it (or leaves out a parameter
whose default is one of them), with no `*args`/`**kwargs`. A `return` cuts the events after it
only when every arm around it runs at this call and no loop, `try` or other branch is around it.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.loop_bindings import BoundNames
from amplint.analysis.facts.scaler_flow import Branch, Event
from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import Frame

_TRUTH = {"True": True, "False": False, "None": False}


def default_truth(param: cst.Param) -> Optional[bool]:
    """The truth of a parameter's literal default (`update=True`), None for any other."""
    return _TRUTH.get(param.default.value) if isinstance(param.default, cst.Name) else None


def _params(node) -> Tuple[cst.Param, ...]:
    params = node.params
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def call_truths(rename, params: Iterable[Tuple[str, Optional[bool]]]) -> Dict[str, bool]:
    """parameter -> the truth of the literal it holds at this call: the `True`/`False`/`None`
    the call passes (`rename.bound`: parameter -> argument text) or, left out, its literal
    default (`params`: (name, default truth or None)). Nothing where the call passes `*args` or
    `**kwargs`, which may bind any."""
    if rename.starred:
        return {}
    found: Dict[str, bool] = {}
    for name, default in params:
        truth = _TRUTH.get(rename.bound[name] or "") if name in rename.bound else default
        if truth is not None:
            found[name] = truth
    return found


def literal_flags(rename, callee: Frame, tree) -> Dict[str, bool]:
    """parameter -> the truth of the literal it holds at this call (`rename`: the composer's
    renamer, whose `bound` maps a parameter to the argument's text)."""
    params = _params(callee.node)  # type: ignore[attr-defined]
    return call_truths(rename, ((p.name.value, default_truth(p)) for p in params
                                if tree.bound_once(callee, p.name.value)))


def flag_params(node) -> Dict[str, Optional[bool]]:
    """A `def`'s parameters its body never binds again -> their literal default's truth (None:
    no literal default), for a summary another file's call reads (scaler_remote.EntryScaler)."""
    found = {p.name.value: default_truth(p) for p in _params(node)}
    rebound = BoundNames(set(found))
    node.body.visit(rebound)
    return {name: truth for name, truth in found.items() if name not in rebound.names}


def flag_ifs(callee: Frame, params) -> Set[int]:
    """ids of the callee's own `if` statements whose test is a bare parameter of `params`
    (`if update:` / `if not update:`)."""
    found: Set[int] = set()
    for node in _own_nodes(callee):
        if isinstance(node, cst.If):
            name, _ = _flag(node.test)
            if name is not None and name in params:
                found.add(id(node))
    return found


def decided_ctx(ctx: tuple, flags: Dict[str, bool], ifs: Set[int]) -> tuple:
    """The loops and branches around a callee's event as this call sees them: an arm the call's
    flag always runs is no condition here (`update=True` left at its default runs `if update:`)."""
    return tuple(c for c in ctx if not (isinstance(c, Branch) and runs(c, flags, ifs) is True))


def own_ifs(callee: Frame) -> Set[int]:
    """ids of the `if` statements of the callee's own body (not of a def or class inside)."""
    return {id(node) for node in _own_nodes(callee) if isinstance(node, cst.If)}


def _own_nodes(callee: Frame):
    body = callee.node.body  # type: ignore[attr-defined]
    todo = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        yield node
        todo.extend(children_in_visit_order(node))


def flag_name(node) -> Optional[str]:
    """The parameter an `if` tests bare (`if update:` / `if not update:`), else None."""
    return _flag(node.test)[0] if isinstance(node, cst.If) else None


def _flag(test: cst.BaseExpression) -> Tuple[Optional[str], bool]:
    """(`x`, negated) of a test `x` or `not x`; (None, False) for anything else."""
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    return (test.value, negated) if isinstance(test, cst.Name) else (None, False)


def runs(branch: Branch, flags: Dict[str, bool], ifs: Set[int]) -> Optional[bool]:
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
    return any(runs(b, flags, ifs) is False for b in event.branches())


def cut_after(events: Iterable[Event], flags: Dict[str, bool], ifs: Set[int]) -> Optional[int]:
    """The order of the first `return` of the callee's body that runs whenever the call reaches
    it (no loop around it, every arm around it run at this call): later events never run."""
    for event in events:
        if event.kind != "return" or event.loops:
            continue
        if all(runs(b, flags, ifs) is True for b in event.branches()):
            return event.order
    return None
