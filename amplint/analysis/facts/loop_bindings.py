"""Names a piece of code binds, and whether an expression can name a different value on each
iteration of a loop (`for optimizer in optimizers: scaler.step(optimizer)`)."""

from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from amplint.analysis.facts.tree import iter_nodes


class BoundNames(cst.CSTVisitor):
    """The names among `wanted` that a body binds (assignments, loop and `with` targets,
    `global`/`nonlocal`, `del`, nested `def`/`class` names)."""

    def __init__(self, wanted: Set[str], skip: Optional[cst.CSTNode] = None) -> None:
        self.wanted = wanted
        self.skip = skip
        self.names: Set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is not self.skip and super().on_visit(node)

    def _target(self, target) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.wanted:
                self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def visit_AssignTarget(self, node) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node) -> None:
        self._target(node.target)

    def visit_NamedExpr(self, node) -> None:
        self._target(node.target)

    def visit_For(self, node) -> None:
        self._target(node.target)

    def visit_AsName(self, node) -> None:
        self._target(node.name)

    def visit_Del(self, node) -> None:
        self._target(node.target)

    def visit_Global(self, node) -> None:
        for item in node.names:
            self._target(item.name)

    def visit_Nonlocal(self, node) -> None:
        for item in node.names:
            self._target(item.name)

    def visit_FunctionDef(self, node) -> None:
        self._target(node.name)

    def visit_ClassDef(self, node) -> None:
        self._target(node.name)


def varies_per_iteration(loop: cst.CSTNode, expr: Optional[cst.BaseExpression],
                         inner: Optional[cst.CSTNode] = None) -> bool:
    """Can `expr`, evaluated inside `loop`, name a different value on each iteration? True when
    it names a variable the loop binds: a `for` target or any binding in the loop's body
    (`for opt in optimizers`, `for i in range(n): ... optimizers[i]`, `opt = pick(batch)`).
    Bindings inside `inner` (a loop nested in `loop` around `expr`) do not count: they run
    again, the same way, on each iteration of `loop`."""
    if expr is None or not isinstance(loop, (cst.For, cst.While)):
        return False
    used = {node.value for node in iter_nodes(expr) if isinstance(node, cst.Name)}
    if not used:
        return False
    bound = BoundNames(used, skip=inner)
    if isinstance(loop, cst.For):
        bound._target(loop.target)
    loop.body.visit(bound)
    return bool(bound.names)
