"""Whose parameters an optimizer's `params` hold (AMP140), within one file: the receivers `X` of
`X.parameters()` / `X.named_parameters()` that reach the argument through the function's locals
(assignments, `.append` / `.extend`, `for` loops and comprehensions over them: SlowFast's
`construct_optimizer` sorts `model.named_parameters()` into lists of param groups); and for a
receiver that is a parameter of a module-level function, the arguments the file's own calls of
that function pass for it (`construct_optimizer(model, cfg)` after `model = model.half()`)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.tree import Frame

PARAMETER_METHODS = ("parameters", "named_parameters")
MODULE_METHODS = ("modules", "named_modules", "children", "named_children")
_MAX_NAMES = 24


def parameter_owners(params: cst.BaseExpression, frame: Frame, tree) -> List[cst.BaseExpression]:
    """The expressions whose `.parameters()` / `.named_parameters()` `params` may hold."""
    function = frame.function
    owners: List[cst.BaseExpression] = []
    seen: set = set()
    pending: List[cst.BaseExpression] = [params]
    loops = _loops(function.node) if function is not None else {}
    while pending and len(seen) <= _MAX_NAMES:
        expr = pending.pop()
        for node in _nodes(expr):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in PARAMETER_METHODS
            ):
                owners.append(node.func.value)
                # `for name, m in model.named_modules(): ... m.parameters(recurse=False)`
                for loop_iter in loops.get(getattr(node.func.value, "value", None), ()):
                    if isinstance(loop_iter, cst.Call) and isinstance(loop_iter.func, cst.Attribute) and (
                        loop_iter.func.attr.value in MODULE_METHODS
                    ):
                        owners.append(loop_iter.func.value)
            elif isinstance(node, cst.Name) and function is not None and node.value not in seen:
                seen.add(node.value)
                pending.extend(_sources(node.value, function, tree, loops))
    return owners


def call_arguments(function: Frame, name: str, tree) -> List[Tuple[cst.BaseExpression, Frame]]:
    """(argument, caller frame) that the file's calls of the module-level `function` pass for
    its parameter `name` (positional or keyword); none for a method or a nested function."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or function.parent is not tree.module_frame:
        return []
    names = [p.name.value for p in node.params.params]
    index = names.index(name) if name in names else None
    if index is None and name not in [p.name.value for p in node.params.kwonly_params]:
        return []
    found = []
    for site in tree.calls:
        if site.dotted != (function.name,) or _shadowed(site.frame, function.name):
            continue
        for position, arg in enumerate(site.node.args):
            if arg.star:
                break
            if (arg.keyword is not None and arg.keyword.value == name) or (
                arg.keyword is None and position == index
            ):
                found.append((arg.value, site.frame))
    return found


def _sources(name: str, function: Frame, tree, loops) -> List[cst.BaseExpression]:
    out: List[cst.BaseExpression] = list(loops.get(name, ()))
    for site in tree.assigns:
        if site.frame.function is function and any(
            isinstance(t, cst.Name) and t.value == name for t in site.targets
        ):
            out.append(site.value)
    for site in tree.calls:
        func = site.node.func
        if site.frame.function is function and isinstance(func, cst.Attribute) and (
            func.attr.value in ("append", "extend")
        ) and any(isinstance(n, cst.Name) and n.value == name for n in _receivers(func.value)):
            out.extend(arg.value for arg in site.node.args)  # `xs.append(p)`, `(a if c else b).append(p)`
    return out


def _receivers(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(expr, cst.IfExp):
        return _receivers(expr.body) + _receivers(expr.orelse)
    return [expr]


def _loops(node: cst.CSTNode) -> Dict[str, List[cst.BaseExpression]]:
    """name -> the iterables a `for` loop of the function (not of nested functions) binds it over."""
    found: Dict[str, List[cst.BaseExpression]] = {}

    class Loops(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> Optional[bool]:
            return inner is node

        def visit_For(self, loop: cst.For) -> None:
            for target in _nodes(loop.target):
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(loop.iter)

    node.visit(Loops())
    return found


def _nodes(expr: cst.CSTNode) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []

    class All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.append(node)
            return not isinstance(node, (cst.Lambda, cst.FunctionDef))

    expr.visit(All())
    return found


def _shadowed(frame: Frame, name: str) -> bool:
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "function" and name in scope.bindings:
            return True
        scope = scope.parent
    return False


def is_parameter(function: Optional[Frame], name: str) -> bool:
    node = function.node if function is not None else None
    if not isinstance(node, cst.FunctionDef):
        return False
    params = node.params
    return name in [p.name.value for p in list(params.params) + list(params.kwonly_params)]
