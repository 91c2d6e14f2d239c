"""Names that hold an instance of a scaler class that is not torch's GradScaler.

BEiT/VideoMAE/MAE-style `NativeScalerWithGradNormCount` keeps a GradScaler in
`self._scaler` and runs scale, unscale, clip, step and update inside its own `__call__` or
`step(loss, optimizer, ...)`. A script that defines such a class and binds
`loss_scaler = NativeScalerWithGradNormCount()` sends `loss_scaler.step(loss, optimizer)`:
its name says "scaler", but it is not one, and its protocol is the class's (checked in the
class's own methods, where `self._scaler` is the GradScaler).

Exact or nothing: the class is defined at module level in this file with no base class (or
`object` only), so it cannot be a GradScaler subclass; its name is not imported or rebound
at module level; and the name is called directly (`Cls(...)`) as the assigned value.

A GradScaler subclass of the project (composer's `ClosureGradScaler(GradScaler)`, whose `step`
takes a closure) is told only by its spelling, `other_scaler_class`: AMP125 stays silent on a
text that may hold one, since its `step` may be overridden.

Across files the class is the project's to know: VideoMAE's `train_one_epoch(..., loss_scaler,
...)` is handed the `NativeScalerWithGradNormCount` its caller made (utils.py), and calls
`loss_scaler.backward(loss)` and `loss_scaler.step(optimizer)`. When the project pass resolved
those calls to the methods of the one project class the parameter holds (scaler_resolution's
"wrapper" calls, the class flow; in the caller's own file too, whose call graph reads `x.m()`
by the name alone), `held_wrapper`: the name is that class's instance, not a
GradScaler, and the walker composes the methods' events (`self._scaler` named
`loss_scaler._scaler`, scaler_remote.inherited_scalers)."""

from __future__ import annotations

from typing import List, Set, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.scaler_flow import key_text
from amplint.analysis.facts.scaler_remote import remote_entry
from amplint.analysis.facts.tree import Collector, Frame


def plain_classes(tree: Collector) -> Set[str]:
    """The module-level classes of the file with no base other than `object`, bound once."""
    module = tree.module_frame
    found = set()
    counts = {}
    for stmt in module.node.body:  # type: ignore[attr-defined]
        if isinstance(stmt, cst.ClassDef):
            counts[stmt.name.value] = counts.get(stmt.name.value, 0) + 1
            bases = [b for b in stmt.bases if b.keyword is None]
            if all(isinstance(b.value, cst.Name) and b.value.value == "object" for b in bases) \
                    and not any(b.keyword is not None and b.keyword.value == "metaclass"
                                for b in stmt.bases):
                found.add(stmt.name.value)
    return {name for name in found
            if counts[name] == 1 and name not in module.imports and name not in _rebound(tree)}


def _rebound(tree: Collector) -> Set[str]:
    names = set()
    for assign in tree.assigns:
        if assign.frame.scope is tree.module_frame:
            for target in assign.targets:
                if isinstance(target, cst.Name):
                    names.add(target.value)
    return names


def wrapper_bindings(tree: Collector) -> Set[Tuple[str, Frame]]:
    """(target text, frame) of each assignment whose value constructs a plain class of the file
    (`loss_scaler = NativeScalerWithGradNormCount()`, `self.loss_scaler = ...`)."""
    classes = plain_classes(tree)
    if not classes:
        return set()
    found = set()
    for assign in tree.assigns:
        value = assign.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                and value.func.value in classes and not _shadowed(value.func.value, assign.frame):
            for target in assign.targets:
                found.add((target, assign.frame))
    return found


def _shadowed(name: str, frame: Frame) -> bool:
    """The name is bound in a function scope between the use and the module."""
    scope = frame.scope
    while scope is not None and scope.kind != "module":
        if name in scope.bindings or name in scope.imports:
            return True
        scope = scope.parent.scope if scope.parent is not None else None
    return False


def other_scaler_class(value: cst.BaseExpression, frame) -> bool:
    """`value` constructs a scaler class that is not torch's: a call of a CapWords name ending
    in "Scaler" that resolves outside torch (`ClosureGradScaler()` imported from the project)."""
    if not isinstance(value, cst.Call):
        return False
    qualified = resolve_expr(value.func, frame)
    name = key_text(value.func)
    if not name:
        return False
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper() and last.endswith("Scaler") and not (
        qualified or "").startswith("torch.")


# the GradScaler methods a wrapper's instance must answer with its own (project) method
_PROTOCOL_METHODS = ("scale", "unscale_", "step", "update")


def held_wrapper(analysis, calls: List[cst.Call]) -> bool:
    """`calls` (every `x.m(...)` of one scaler-by-name `x`) reach a method of another file's
    class the project pass resolved `x` to (a method entry, scaler_remote.EntryScaler), each
    that a GradScaler also has among them: `x` holds that class's instance, not a GradScaler.
    Exact or nothing: the class flow gives an entry only where `x` holds one project class, and
    each method's scaler events are on a scaler the instance holds (`self._scaler`), never on
    `self` (a GradScaler subclass's override)."""
    if not analysis.remote:
        return False
    found = False
    for call in calls:
        entry = remote_entry(analysis, call)
        if entry is not None and entry.method:
            if not all(e[1].startswith("self.") for e in entry.events if e[1]):
                return False  # not a wrapper delegating to the scaler it holds
            found = True
        elif call.func.attr.value in _PROTOCOL_METHODS:  # type: ignore[attr-defined]
            return False
    return found
