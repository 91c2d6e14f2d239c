"""AMP103's factory case: does this half cast make the value its function returns to a caller
that runs it under autocast (facts.half_callees.EntryReturnsHalf)? A cast under `if flag:`,
where `flag` is a parameter, is taken only when that call leaves the flag on: passes no falsy
literal for it, or leaves out a parameter whose default is not a falsy literal (whisper's
`load_model(..., fp16=False)` halves nothing). Under `if args.model.low_memory:` (a configured
flag), only when the project's configs turn it on (EntryReturnsHalf.flags)."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from amplint.analysis.facts.scaler_remote import function_key
from amplint.analysis.facts.tree import CallSite, iter_nodes

_FALSY = (False, 0, None)


def returned_to_region(site: CallSite, returned, target: Optional[str]):
    """The entry whose returned value this cast makes half, or None."""
    scope = site.frame.scope
    if scope.kind != "function":
        return None
    entries = returned.get(function_key(scope) or "")
    if not entries:
        return None
    stmt = site.line_stmt
    small = stmt.body[0] if stmt is not None and len(stmt.body) == 1 else None
    in_return = isinstance(small, cst.Return) and small.value is not None and any(
        node is site.node for node in iter_nodes(small.value))
    node = scope.node
    assert isinstance(node, cst.FunctionDef)
    guards = _guards(node, stmt) if stmt is not None else None
    for entry in entries:
        if not ((in_return and "" in entry.names) or (target is not None and target in entry.names)):
            continue
        if guards is None:
            continue  # under a condition it cannot read
        if all(_left_on(node, scope, guard, entry) for guard in guards):
            return entry
    return None


def _guards(function: cst.FunctionDef, stmt) -> Optional[List[str]]:
    """The names of the `if name:` statements whose body holds `stmt` ([] for none); None
    when it sits in an `else` or under any other test."""
    found: List[str] = []
    for node in iter_nodes(function.body):
        if not isinstance(node, cst.If):
            continue
        if any(inner is stmt for inner in iter_nodes(node.body)):
            if isinstance(node.test, cst.Name):
                found.append(node.test.value)
            elif _attribute_chain(node.test):  # a configured flag: `if args.model.low_memory:`
                found.append(cst.Module([]).code_for_node(node.test))
            else:
                return None
        elif node.orelse is not None and any(inner is stmt for inner in iter_nodes(node.orelse)):
            return None
    return found


def _attribute_chain(test: cst.BaseExpression) -> bool:
    while isinstance(test, cst.Attribute):
        test = test.value
    return isinstance(test, cst.Name) and test.value != "self"


def _left_on(function: cst.FunctionDef, scope, name: str, entry) -> bool:
    """Whether the call may leave the guard `name` true; a configured flag only where the
    project's configs turn it on."""
    if "." in name:
        return name in dict(entry.flags)
    passed = entry.passed
    params = list(function.params.posonly_params) + list(function.params.params)
    names = [p.name.value for p in params]
    if name not in names and name not in [p.name.value for p in function.params.kwonly_params]:
        return True  # not a parameter: what decides it is not the call's to say
    if passed is None:
        return False  # a chain of factories: which argument reaches the flag is not followed
    position = None
    if name in names:
        position = names.index(name)
        if scope.parent is not None and scope.parent.kind == "class" and not _static(function):
            position -= 1  # `self` / `cls`
    for slot, value in passed:
        if slot == name or (position is not None and slot == position):
            return value == "?" or value not in _FALSY or value is True
    default = next((p.default for p in params + list(function.params.kwonly_params) if p.name.value == name), None)
    if isinstance(default, cst.Name) and default.value in ("False", "None") or (
            isinstance(default, cst.Integer) and default.value == "0"):
        return _reassigned(function, name)  # `if fp16 is None: fp16 = ...`: may be on
    return True


def _reassigned(function: cst.FunctionDef, name: str) -> bool:
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            target = node.target
            if isinstance(target, cst.Name) and target.value == name:
                return True
    return False


def _static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in function.decorators)
