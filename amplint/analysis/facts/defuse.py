"""Def-use facts: what happens to a local between two points of a function.

Every fix that moves an expression to a later point, or writes it a second time, must know that
the expression still means the same value there. Two questions answer that:

- `DefUse.changes(name, after, before, scope)`: the places between the end of node `after` and
  the start of node `before` where `name` may stop holding the same tensor value:

  * ``"rebound"``: `name = ...`, `name += ...`, `for name in`, `with ... as name`, `(name := ...)`,
    `del name`, an import/def/class binding the name;
  * ``"mutated"``: an in-place method on it or on a part of it (`name.mul_(2)`,
    `name.data.clamp_(...)`, `name[0].zero_()`), a write into it (`name[i] = v`, `name.attr = v`,
    `name[i] += v`, `del name[i]`), or `out=name` in any call;
  * ``"passed"``: `name` (or `name.attr`, `name[i]`) is an argument of a call, which may mutate
    it (`fill(name)`);
  * ``"escapes"``: a nested scope declares it `global`/`nonlocal`: it can change anywhere.

  "Between" is source order inside `scope` (a function or the module), plus the whole body of
  every loop that holds `before` but not `after` (its later iterations run after `after` again).
  Nested functions' bodies are read as if inline (conservative, position by position).

- `is_duplicable(expr)`: whether writing `expr` a second time (or later) evaluates to the same
  object without side effects: names, attributes of those, constants, and subscripts of them
  with constant indices. Never a call, an operator, a comprehension or a lambda.

An expression is unchanged between two points when it is duplicable and `changes` finds nothing
for each name in it (`unchanged_between`); for an attribute, any call in between also counts,
since a method may reassign it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import bound_names
from amplint.analysis.facts.tree import child_fields, iter_nodes

__all__ = ["Change", "DefUse", "is_duplicable", "names_in"]

_CONSTANTS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)
_LOOPS = (cst.For, cst.While)


@dataclass(frozen=True)
class Change:
    name: str
    kind: str  # "rebound" | "mutated" | "passed" | "escapes"
    node: cst.CSTNode


def is_duplicable(expr: cst.BaseExpression) -> bool:
    """Names, attributes, constants, `None/True/False`, and subscripts with constant indices."""
    if isinstance(expr, cst.Name) or isinstance(expr, _CONSTANTS):
        return True
    if isinstance(expr, cst.Attribute):
        return is_duplicable(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float)):
        return True  # -1
    if isinstance(expr, cst.Subscript):
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not isinstance(index.value, _CONSTANTS + (cst.UnaryOperation, cst.Name, cst.Ellipsis)):
                    return False
                if isinstance(index.value, cst.Name) and index.value.value not in ("None", "Ellipsis"):
                    return False
            elif isinstance(index, cst.Slice):
                parts = [p for p in (index.lower, index.upper, index.step) if p is not None]
                if not all(isinstance(p, _CONSTANTS + (cst.UnaryOperation,)) for p in parts):
                    return False
        return is_duplicable(expr.value)
    if isinstance(expr, cst.Ellipsis):
        return True
    return False


def names_in(expr: cst.CSTNode) -> Set[str]:
    return {n.value for n in iter_nodes(expr) if isinstance(n, cst.Name)}


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    """`x`, `x.a.b`, `x[0].a` -> "x"; anything rooted in a call or operator -> None."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


class _Scope:
    """Pre-order positions and the change events of one scope, computed on first use."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.order: Dict[int, int] = {}  # id(node) -> pre-order index
        self.last: Dict[int, int] = {}  # id(node) -> last pre-order index inside it
        self.loops: List[cst.CSTNode] = []
        self.events: List[Tuple[int, Change]] = []
        self.calls: List[int] = []
        self.escaping: Set[str] = set()
        self._number(root)
        for node in iter_nodes(root):
            self._record(node)

    def _number(self, root: cst.CSTNode) -> None:
        # iterative pre-order numbering with subtree ends
        counter = 0
        stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
        node_class = cst.CSTNode
        while stack:
            node, done = stack.pop()
            if done:
                self.last[id(node)] = counter - 1
                continue
            self.order[id(node)] = counter
            counter += 1
            if isinstance(node, _LOOPS):
                self.loops.append(node)
            stack.append((node, True))
            children: List[cst.CSTNode] = []
            for name in child_fields(type(node)):
                value = getattr(node, name)
                if isinstance(value, node_class):
                    children.append(value)
                elif type(value) in (list, tuple):
                    children.extend(v for v in value if isinstance(v, node_class))
            stack.extend((child, False) for child in reversed(children))

    def _add(self, name: Optional[str], kind: str, node: cst.CSTNode) -> None:
        if name is not None:
            self.events.append((self.order[id(node)], Change(name, kind, node)))

    def _record(self, node: cst.CSTNode) -> None:
        add = self._add
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._target(target.target, node)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self._target(node.target, node)
        elif isinstance(node, cst.For):
            self._target(node.target, node)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._target(node.asname.name, node)
        elif isinstance(node, cst.NamedExpr):
            self._target(node.target, node)
        elif isinstance(node, cst.Del):
            self._target(node.target, node)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            self._target(node.name.name, node)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            add(node.name.value, "rebound", node)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            names = node.names if not isinstance(node.names, cst.ImportStar) else ()
            for alias in names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                if isinstance(bound, cst.Name):
                    add(bound.value, "rebound", node)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            self.escaping.update(item.name.value for item in node.names)
        elif isinstance(node, cst.Call):
            self.calls.append(self.order[id(node)])
            func = node.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method.endswith("_") and not method.endswith("__"):
                    add(_root_name(func.value), "mutated", node)
            for arg in node.args:
                root = _root_name(arg.value)
                if arg.keyword is not None and arg.keyword.value == "out":
                    for element in iter_nodes(arg.value):
                        if isinstance(element, cst.Name):
                            add(element.value, "mutated", node)
                elif root is not None:
                    add(root, "passed", node)
                else:  # `f(*xs)`, `f((a, b))`: every name in a tuple/list/star argument
                    value = arg.value
                    if isinstance(value, (cst.Tuple, cst.List)):
                        for element in value.elements:
                            add(_root_name(element.value), "passed", node)

    def _target(self, target: cst.BaseExpression, stmt: cst.CSTNode) -> None:
        if isinstance(target, (cst.Subscript, cst.Attribute)):
            self._add(_root_name(target), "mutated", stmt)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value, stmt)
            return
        if isinstance(target, cst.StarredElement):
            self._target(target.value, stmt)
            return
        for name in bound_names(target):
            self._add(name, "rebound", stmt)

    def window(self, after: cst.CSTNode, before: cst.CSTNode) -> List[Tuple[int, int]]:
        """Index ranges (inclusive) that run between `after` and `before`."""
        start = self.last[id(after)] + 1
        end = self.order[id(before)] - 1
        spans = [(start, end)] if start <= end else []
        a, b = self.order[id(after)], self.order[id(before)]
        for loop in self.loops:
            first, last = self.order[id(loop)], self.last[id(loop)]
            if first <= b <= last and not first <= a <= last:
                spans.append((first, last))
        return spans


class DefUse:
    """Def-use questions on the scopes of one module (see the module docstring)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._scopes: Dict[int, _Scope] = {}

    def _scope(self, scope: Optional[cst.CSTNode]) -> _Scope:
        root = scope if scope is not None else self.module
        found = self._scopes.get(id(root))
        if found is None:
            found = self._scopes[id(root)] = _Scope(root)
        return found

    def changes(self, name: str, after: cst.CSTNode, before: cst.CSTNode,
                scope: Optional[cst.CSTNode] = None) -> List[Change]:
        """Where `name` may change between the end of `after` and the start of `before`, both
        nodes inside `scope` (a FunctionDef, or None for the module). Raises KeyError when a
        node is not in the scope."""
        data = self._scope(scope)
        if name in data.escaping:
            return [Change(name, "escapes", scope or self.module)]
        spans = data.window(after, before)
        return [
            change for index, change in data.events
            if change.name == name and any(lo <= index <= hi for lo, hi in spans)
        ]

    def calls_between(self, after: cst.CSTNode, before: cst.CSTNode,
                      scope: Optional[cst.CSTNode] = None) -> int:
        data = self._scope(scope)
        spans = data.window(after, before)
        return sum(1 for index in data.calls if any(lo <= index <= hi for lo, hi in spans))

    def precedes(self, first: cst.CSTNode, second: cst.CSTNode,
                 scope: Optional[cst.CSTNode] = None) -> bool:
        """`first` ends before `second` starts, in source order."""
        data = self._scope(scope)
        return data.last[id(first)] < data.order[id(second)]

    def unchanged_between(self, expr: cst.BaseExpression, after: cst.CSTNode,
                          before: cst.CSTNode, scope: Optional[cst.CSTNode] = None) -> bool:
        """`expr`, written again at `before`, is the value it had at the end of `after`:
        duplicable, none of its names changes in between, and, if it reads an attribute or an
        item, no call runs in between (a method may reassign it)."""
        if not is_duplicable(expr):
            return False
        for name in names_in(expr):
            if self.changes(name, after, before, scope):
                return False
        if not isinstance(expr, cst.Name) and not isinstance(expr, _CONSTANTS):
            if self.calls_between(after, before, scope):
                return False
        return True

    def uses(self, name: str, scope: Optional[cst.CSTNode] = None) -> int:
        """How many times `name` appears (read or written) in the scope."""
        root = scope if scope is not None else self.module
        return sum(1 for n in iter_nodes(root) if isinstance(n, cst.Name) and n.value == name)


# Conversions whose result no longer carries the dtype it was made with: float32, float64,
# integer or bool (`filler.float()`, `mask.long()`, `x.to(torch.float32)`).
EXPLICIT_CASTS = frozenset({"float", "double", "long", "int", "bool", "byte", "short"})
EXPLICIT_DTYPES = frozenset({
    "float", "float32", "float64", "double", "long", "int", "int64", "int32", "int16", "int8",
    "uint8", "bool", "short",
})


def explicit_cast(call: cst.Call) -> bool:
    """`v.float()`, `v.long()`, `v.to(torch.float32)`, `v.to(dtype=torch.bool)`."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if method in EXPLICIT_CASTS:
        return not call.args
    if method in ("to", "type") and len(call.args) == 1:
        value = call.args[0].value
        keyword = call.args[0].keyword
        if keyword is not None and keyword.value != "dtype":
            return False
        return (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
                and value.value.value == "torch" and value.attr.value in EXPLICIT_DTYPES)
    return False


def only_cast_reads(module: cst.Module, name: str, scope: Optional[cst.CSTNode]) -> bool:
    """Every read of `name` in the scope is an explicit cast to float32, an integer or bool
    (or there is none): whatever `name` is bound to (by plain `name = ...` assignments, one
    per branch in fairseq), its own dtype never meets other data."""
    root = scope if scope is not None else module
    total = 0
    cast: Set[int] = set()
    for node in iter_nodes(root):
        if isinstance(node, cst.Name) and node.value == name:
            total += 1
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
            if node.target.value == name:
                cast.add(id(node.target))  # a binding, not a read
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(item.name.value == name for item in node.names):
                return False
        elif isinstance(node, cst.Call) and explicit_cast(node):
            receiver = node.func.value  # type: ignore[attr-defined]
            if isinstance(receiver, cst.Name) and receiver.value == name:
                cast.add(id(receiver))
    return total == len(cast)
