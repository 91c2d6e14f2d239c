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
text that may hold one, since its `step` may be overridden."""

from __future__ import annotations

from typing import Set, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.scaler_flow import key_text
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
