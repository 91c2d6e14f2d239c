"""What a function of THIS file returns to one call of it (issue 26): the same-file summary that
the facts classifying a value's kind (a `torch.device`, a half module, a `finfo` fill) read
through a call, as they read the expression inline.

    def setup_device(accelerator, rank):          # sam2's train_utils idiom
        if accelerator == "cuda":
            return torch.device("cuda", rank)
        return torch.device("cpu")

    self.device = setup_device(cfg.accelerator, 0)  # a torch.device, as if written here

`FunctionReturns.of_call(call, frame)` gives the callee and the value of each of its own
`return`s, read in the callee's frame; each fact then asks its own question of every value and
takes the answer only when all agree. A value that reads a parameter (`return
-torch.finfo(t.dtype).max`) is substituted per call through `Returned.argument`.

Exact or nothing: one callee of this file reached by name or `self.` (the call graph's, no
function held as a value), a plain `def` (no decorator but `staticmethod`, not async, not a
generator), every `return` with a value, no path falling off the end (the body ends in a
`return` or `raise`, branch by branch), a name bound once in its module, class or function
(a second `def build` replaces the first), no override of the
method in a subclass of the file. Anything else: no summary, the call stays unknown.

The other file's side: `remote(call, frame)` gives what the project pass found a function of
ANOTHER file returns on every path (facts/returned_values.py EntryReturn with a `kind`, made by
project/return_kinds.py from that file's `ast` summary, project/return_values.py), for a call of
the name the file imports it under. The facts ask `of_call` first, then `remote`, so a rule does
not care which side the helper is on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.context_functions import bound_locally, derived_classes, overrides, returned_values
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.returned_values import EntryReturn
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name


_BUILTINS = frozenset({"staticmethod", "classmethod", "property"})


@dataclass(frozen=True)
class Returned:
    function: Frame  # the callee
    values: Tuple[cst.BaseExpression, ...]  # the value of each `return`, read in `function`
    call: cst.Call
    frame: Frame  # where the call is

    def argument(self, param: str) -> Optional[cst.BaseExpression]:
        """The expression this call passes for parameter `param` of the callee (read in the
        caller's frame); None when it passes none, or a `*args` / `**kw` may fill it."""
        return call_arguments(self.call, self.function).get(param)


class FunctionReturns:
    def __init__(self, tree, graph, entries=()) -> None:
        self.tree = tree
        self.callgraph = graph
        self._memo: Dict[int, Optional[Tuple[cst.BaseExpression, ...]]] = {}
        self._remote = {e.call: e for e in entries if isinstance(e, EntryReturn) and e.kind}

    def remote(self, call: cst.BaseExpression, frame: Frame) -> Optional[EntryReturn]:
        """The kind of value a function of another file returns to this call of the name the
        module imports it under (`from ldm.util import max_neg_value`), or None: a name bound
        any other way too, or by a function scope around the call."""
        if not self._remote or not isinstance(call, cst.Call):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):  # `Dist.local_device()`
            name, key = func.value.value, f"{func.value.value}.{func.attr.value}"
        elif isinstance(func, cst.Name):
            name = key = func.value
        else:
            return None
        entry = self._remote.get(key)
        if entry is None:
            return None
        module = frame.scope
        while module.parent is not None:  # a class body's names are not its methods'
            if (module.kind == "function" or module is frame.scope) and (
                    name in module.bindings or name in module.imports or name in module.functions):
                return None
            module = module.parent
        imported = name in module.imports and name not in module.alternatives or \
            module.relative.get(name) is not None
        if not imported or name in module.bindings or name in self.tree.walrus_names:
            return None
        return entry

    def of_call(self, call: cst.BaseExpression, frame: Frame) -> Optional[Returned]:
        if not isinstance(call, cst.Call) or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        if isinstance(call.func, cst.Name) and bound_locally(frame, call.func.value):
            return None  # a parameter or local of that name, not the file's function
        callees = self.callgraph.callees(CallSite(call, frame, None, None, None), values=False)
        if not callees:
            method = self._exact_method(call, frame)
            callees = [method] if method is not None else []
        if len(callees) != 1:
            return None
        callee = callees[0]
        if overrides(self, call, frame, callee):
            return None  # `self` may be a subclass whose method returns something else
        values = self.values(callee)
        return Returned(callee, values, call, frame) if values is not None else None

    def of_property(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Returned]:
        """What reading `self.<name>` (or `inst.<name>`, `inst` an instance of a class of this
        file) returns when `<name>` is a plain `@property` of the receiver's class, no subclass
        of the file overriding it, by a def or a class attribute."""
        if not isinstance(expr, cst.Attribute):
            return None
        receiver = expr.value
        owner = frame.class_frame
        on_self = owner if isinstance(receiver, cst.Name) and receiver.value == "self" else None
        if on_self is not None:
            cls: Optional[str] = on_self.name
        else:
            cls = self.callgraph.class_of_instance(receiver, frame)
        method = self.callgraph.method(cls, expr.attr.value) if cls is not None else None
        node = method.node if method is not None else None
        if method is None or not isinstance(node, cst.FunctionDef) or len(node.decorators) != 1 \
                or self._builtin(node.decorators[0]) != "property":
            return None
        read = cst.Call(func=expr)
        if overrides(self, read, frame, method) or self._shadowed(cls, method, on_self):
            return None
        values = self._read(method, decorated=True)
        return Returned(method, values, read, frame) if values is not None else None

    def _shadowed(self, cls: str, method: Frame, owner: Optional[Frame]) -> bool:
        """A class of this file between `cls` and the property's class, or (`owner`: read on
        `self` there) one derived from `owner`, binds the name another way: a class attribute
        (`device = "cpu"` under a base's `device` property) wins over the base's property."""
        name = method.name
        classes = self.tree.classes
        chain, current = [], classes.get(cls)
        while current is not None and current is not method.parent and len(chain) < 8:
            chain.append(current)
            bases = [dotted_name(b.value) for b in current.node.bases] if isinstance(current.node, cst.ClassDef) else []
            current = next((classes.get(b[0]) for b in bases if b and len(b) == 1 and b[0] in classes), None)
        if owner is not None:
            chain += [classes[other] for other in derived_classes(classes, owner.name)]
        return any(name in c.bindings and c.functions.get(name) is not method for c in chain)

    def _exact_method(self, call: cst.Call, frame: Frame) -> Optional[Frame]:
        """The method of a class of this file known exactly: `Cls.m()` of a classmethod or
        staticmethod, `Cls(...).m()` of any (the call graph reaches neither)."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        value = func.value
        static = isinstance(value, cst.Name)
        name = value.value if static else value.func.value if isinstance(value, cst.Call) \
            and isinstance(value.func, cst.Name) else None
        cls = self.tree.classes.get(name) if name is not None else None
        module = self.tree.module_frame
        if cls is None or cls.parent is not module or name in module.imports or \
                not self.tree.bound_once(module, name) or bound_locally(frame, name):
            return None
        method = self.callgraph.method(name, func.attr.value)
        node = method.node if method is not None else None
        if not isinstance(node, cst.FunctionDef):
            return None
        kinds = {self._builtin(d) for d in node.decorators}
        if static and (len(kinds) != 1 or not kinds <= {"classmethod", "staticmethod"}):
            return None
        return method

    def _builtin(self, decorator: cst.Decorator) -> Optional[str]:
        """`@staticmethod` / `@classmethod` / `@property` as written, the name not bound in the module."""
        expr = decorator.decorator
        module = self.tree.module_frame
        if isinstance(expr, cst.Name) and expr.value in _BUILTINS and expr.value not in module.bindings \
                and expr.value not in module.imports:
            return expr.value
        return resolve_expr(expr, module)

    def values(self, function: Frame) -> Optional[Tuple[cst.BaseExpression, ...]]:
        """The values `function` returns on every path, or None."""
        key = id(function)
        if key not in self._memo:
            self._memo[key] = self._read(function)
        return self._memo[key]

    def _read(self, function: Frame, decorated: bool = False) -> Optional[Tuple[cst.BaseExpression, ...]]:
        """`decorated`: a property (its caller checked the decorator)."""
        node = function.node
        if function.kind != "function" or not isinstance(node, cst.FunctionDef) or node.asynchronous:
            return None
        parent = function.parent
        if parent is None:
            return None
        plain = ("staticmethod", "classmethod") if parent.kind == "class" else ()
        if not decorated and any(self._builtin(d) not in plain for d in node.decorators):
            return None
        if not self.tree.bound_once(parent, function.name):
            return None  # a second def (or any binding) of the name in its module, class or function
        if not _terminates(node.body):
            return None  # a path falls off the end: the call may give None
        values = returned_values(node)
        return tuple(values) if values else None


def _terminates(body: cst.BaseSuite) -> bool:
    """Does every path through `body` end in a `return` or `raise`?"""
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return False
    return _ends(body.body[-1])


def _ends(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return bool(stmt.body) and isinstance(stmt.body[-1], (cst.Return, cst.Raise))
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        if orelse is None:
            return False
        other = _ends(orelse) if isinstance(orelse, cst.If) else _terminates(orelse.body)
        return _terminates(stmt.body) and other
    if isinstance(stmt, cst.With):
        return _terminates(stmt.body)
    return False


def call_arguments(call: cst.Call, function: Frame) -> Dict[str, cst.BaseExpression]:
    """Parameter name -> the expression `call` passes for it (a method's `self` left out: the
    call graph reaches a method only through an instance, `self.m()`, `inst.m()`, `inst()`);
    empty when a `*` or `**` argument may fill any."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or any(arg.star for arg in call.args):
        return {}
    params = node.params
    positional: List[str] = [p.name.value for p in list(params.posonly_params) + list(params.params)]
    parent = function.parent
    if parent is not None and parent.kind == "class" and not any(
            dotted_name(d.decorator) == ("staticmethod",) for d in node.decorators):
        positional = positional[1:]  # `self`, or a classmethod's `cls`
    found: Dict[str, cst.BaseExpression] = {}
    index = 0
    keywords = {p.name.value for p in params.params} | {p.name.value for p in params.kwonly_params}
    for arg in call.args:
        if arg.keyword is None:
            if index >= len(positional):
                return {}
            found[positional[index]] = arg.value
            index += 1
        elif arg.keyword.value in keywords:
            found[arg.keyword.value] = arg.value
        else:
            return {}
    return found
