"""Names a piece of code binds, and whether an expression can name a different value on each
iteration of a loop (`for optimizer in optimizers: scaler.step(optimizer)`)."""

from __future__ import annotations

from typing import Optional, Set, Tuple

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


def single_pass(loop: cst.CSTNode, frame, tree) -> Optional[Tuple[str, str]]:
    """(target, parameter) for a `for` of function `frame` that runs once, with its target
    bound to the parameter, whenever a call passes that parameter a value: it iterates `[key]`,
    or a local bound once to `[key] if key is not None else self.keys` (StyleTTS2's
    `MultiOptimizer.step(key=None)`), `key` a parameter never bound again. None otherwise."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return None
    value = loop.iter
    if isinstance(value, cst.Name):
        name = value.value
        sites = _name_assigns(tree).get((id(frame), name), ())
        value = sites[0] if len(sites) == 1 and _binding_count(frame.node, name) == 1 else None
    param = _one_element(value)
    if param is None and isinstance(value, cst.IfExp):
        tested = _none_test(value.test)
        if tested is not None:
            name, is_none = tested
            param = _one_element(value.orelse if is_none else value.body)
            param = param if param == name else None
    node = frame.node
    if param is None or not isinstance(node, cst.FunctionDef) or _binding_count(node, param):
        return None
    params = node.params
    if not any(p.name.value == param for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return None
    return loop.target.value, param


def _name_assigns(tree) -> dict:
    """(id(frame), name) -> the values of the file's single-target assignments to a plain name,
    indexed once per file (single_pass asks for each loop over a name)."""
    index = tree.__dict__.get("_name_assigns")
    if index is None:
        index = tree.__dict__["_name_assigns"] = {}
        for a in tree.assigns:
            if len(a.targets) == 1 and isinstance(a.targets[0], cst.Name):
                index.setdefault((id(a.frame), a.targets[0].value), []).append(a.value)
    return index


def _one_element(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """`[key]` / `(key,)`: the one name it holds."""
    if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
        element = expr.elements[0]
        if not isinstance(element, cst.StarredElement) and isinstance(element.value, cst.Name):
            return element.value.value
    return None


def _none_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """`key is None` -> ("key", True), `key is not None` -> ("key", False)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        target = test.comparisons[0]
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
            if isinstance(target.operator, cst.Is):
                return test.left.value, True
            if isinstance(target.operator, cst.IsNot):
                return test.left.value, False
    return None


def _binding_count(function: cst.FunctionDef, name: str) -> int:
    """How many bindings of `name` the function's body holds (its parameters aside; nested
    `def`/`class` bodies, lambdas and comprehensions, scopes of their own, are not looked into)."""
    count = 0
    todo = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            count += node.name.value == name
            continue
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            continue
        targets = []
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.Del)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            targets = [item.name for item in node.names]
        for target in targets:
            count += sum(1 for n in iter_nodes(target) if isinstance(n, cst.Name) and n.value == name
                         and not _read_in(target, n))
        todo.extend(node.children)
    return count


def _read_in(target: cst.CSTNode, name: cst.Name) -> bool:
    """`name` is read inside `target` (`x[i] = ...` reads `i`, `a.b = ...` reads `a`), not bound."""
    if target is name:
        return False
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_read_in(e.value, name) for e in target.elements if any(n is name for n in iter_nodes(e.value)))
    if isinstance(target, cst.StarredElement):
        return _read_in(target.value, name)
    return True
