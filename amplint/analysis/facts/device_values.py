"""Which expressions hold a `torch.device` object (AMP131: `autocast` takes a device *type*
string): `torch.device(...)` inline (or a conditional between two), a name the scope binds only
to one (`device = torch.device("cuda" if ... else "cpu")`), a parameter annotated `torch.device`,
`self.device` where every store is one, and a parameter that call sites of other files bind to
one (EntryParamDevice, from amplint.analysis.project.device_params: DETR's `device =
torch.device(args.device)` in main.py passed to `train_one_epoch(..., device, ...)` in engine.py).

A name bound any other way too (a loop target, `with ... as`, an augmented assignment, another
value) is not known to be a device: nothing is guessed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import libcst as cst

from amplint.analysis.facts.names import visible_scopes
from amplint.analysis.facts.tree import Frame, scope_key, self_attr

DEVICE = "torch.device"


@dataclass(frozen=True)
class EntryParamDevice:
    """Parameter `param` of function `scope` (its key in this file: `train_one_epoch`,
    `Trainer.fit`) is bound to a `torch.device` by a call site of another file."""

    scope: str
    param: str
    cite: str  # "`device = torch.device(...)` at main.py:183" (a call site's binding)


def is_device_object(facts, expr: cst.BaseExpression, frame: Frame) -> bool:
    if device_call(facts, expr, frame):
        return True
    if isinstance(expr, cst.Name):
        return name_is_device(facts, expr.value, frame) or bound_device_lines(facts, expr) is not None
    attr = self_attr(expr)
    if attr is not None:
        cls = frame.class_frame
        if cls is None:
            return False
        values = facts.index.self_assigns(cls).get(attr, [])
        if not values:  # a `@property` returning one (facts/function_returns.py)
            found = facts.function_returns.of_property(expr, frame)
            if found is None:
                return not _rebound_below(facts, cls, attr) and bound_device_lines(facts, expr) is not None
            return all(device_call(facts, v, found.function) for v in found.values)
        if all(device_call(facts, a.value, a.frame) for a in values):
            return True
        if _rebound_below(facts, cls, attr):
            return False
        return bound_device_lines(facts, expr) is not None  # `self.device = device`, a parameter
    if isinstance(expr, cst.Attribute):
        return bound_device_lines(facts, expr) is not None
    return False


def _rebound_below(facts, cls: Frame, attr: str) -> bool:
    """A class of the file derived from `cls` names `attr` itself (a property, a method, a
    class attribute, a store on `self`): `self.<attr>` in `cls` may be its value."""
    name = getattr(cls.node, "name", None)
    if name is None:
        return False
    for frame in facts.tree.frames:
        node = frame.node
        if frame.kind != "class" or node is cls.node or not isinstance(node, cst.ClassDef):
            continue
        if not any(isinstance(b.value, cst.Name) and b.value.value == name.value for b in node.bases):
            continue
        if attr in frame.bindings or facts.index.self_assigns(frame).get(attr):
            return True
    return False


def bound_device_lines(facts, expr: cst.BaseExpression) -> Optional[List[str]]:
    """Where the `torch.device(...)` calls are whose objects reach `expr` through any binding
    (facts/bound_values.py: a parameter a call binds, keyword or positional, a function's
    return, an attribute of an instance; other files' calls where the project pass solved this
    file with them), when it holds nothing else; None otherwise. Without the project's answer,
    asked only where the file calls `torch.device` itself."""
    bound = facts.bound_values
    if bound.entry is None and not any(True for _ in facts.calls_to(DEVICE)):
        return None
    return bound.devices(expr)


def device_call(facts, expr: cst.BaseExpression, frame: Frame, depth: int = 0) -> bool:
    """`torch.device(...)`, a conditional choosing between two of them, or a call of a function
    of this file (or, through the project pass, of another file) every `return` of which is one
    (facts/function_returns.py)."""
    if isinstance(expr, cst.IfExp):
        return device_call(facts, expr.body, frame, depth) and device_call(facts, expr.orelse, frame, depth)
    if not isinstance(expr, cst.Call):
        return False
    if facts.resolve(expr.func, frame) == DEVICE:
        return True
    returns = facts.function_returns
    found = returns.of_call(expr, frame) if depth < 3 else None
    if found is None:  # a function of another file (project/return_values.py "device")
        remote = returns.remote(expr, frame)
        return remote is not None and remote.kind == "device"
    return all(device_call(facts, v, found.function, depth + 1) for v in found.values)


def name_is_device(facts, name: str, frame: Frame) -> bool:
    scope = _scope(name, frame)
    if scope is None:
        return False
    assigns = [
        a for a in facts.tree.assigns
        if a.frame.scope is scope
        and any(isinstance(t, cst.Name) and t.value == name for t in a.targets)
    ]
    annotated = _annotated_param(facts, scope, name)
    if not assigns and not annotated:
        return _bound_param(facts, scope, name) is not None
    if not all(len(a.targets) == 1 and device_call(facts, a.value, a.frame) for a in assigns):
        return False
    # Only plain assignments bind it: no loop variable, `with ... as`, augmented assignment.
    return plain_bindings(scope.node, name) == len(assigns) + (1 if annotated else 0)


def param_device_entry(facts, expr: cst.BaseExpression, frame: Frame) -> Optional[EntryParamDevice]:
    """The project's entry that makes `expr` (a parameter's name) a device, if that is why."""
    if not isinstance(expr, cst.Name):
        return None
    scope = _scope(expr.value, frame)
    return _bound_param(facts, scope, expr.value) if scope is not None else None


def _scope(name: str, frame: Frame) -> Optional[Frame]:
    scope = next((s for s in visible_scopes(frame) if name in s.imports or name in s.bindings), None)
    if scope is None or name in scope.imports:
        return None
    return scope


def _bound_param(facts, scope: Frame, name: str) -> Optional[EntryParamDevice]:
    """A parameter with no annotation that the function never binds again, which the project
    pass found bound to a `torch.device` at a call site of another file."""
    node = scope.node
    if scope.kind != "function" or not isinstance(node, cst.FunctionDef):
        return None
    entries = [e for e in facts.entries if isinstance(e, EntryParamDevice)]
    if not entries:
        return None
    key = scope_key(scope)
    entry = next((e for e in entries if e.scope == key and e.param == name), None)
    if entry is None or not any(p.name.value == name for p in _params(node.params)):
        return None
    return entry if plain_bindings(node, name) == 1 else None


def _annotated_param(facts, scope: Frame, name: str) -> bool:
    node = scope.node
    if scope.kind != "function" or not isinstance(node, cst.FunctionDef):
        return False
    for param in list(node.params.params) + list(node.params.kwonly_params) + list(
        node.params.posonly_params
    ):
        if param.name.value == name and param.annotation is not None:
            outer = scope.parent or scope
            return facts.resolve(param.annotation.annotation, outer) == DEVICE
    return False


class _Bindings(cst.CSTVisitor):
    """Counts the statements that bind `name` in one scope (not in nested functions/classes)."""

    def __init__(self, name: str, root: cst.CSTNode) -> None:
        self.name = name
        self.root = root
        self.count = 0

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name) and target.value == self.name:
            self.count += 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        if node is self.root:
            for param in _params(node.params):
                if param.name.value == self.name:
                    self.count += 1
            return True
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        return node is self.root

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)


def _params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def plain_bindings(root: cst.CSTNode, name: str) -> int:
    visitor = _Bindings(name, root)
    root.visit(visitor)
    return visitor.count
