"""Calls of a function of this file that returns a model it casts to half (NVIDIA waveglow's
builder, MONAI's `get_net`), read through the same-file return summary
(facts/function_returns.py):

    def build(cfg, fp16_run=False):
        model = WaveGlow(**cfg)
        if fp16_run:
            model = model.half()      # the cast (fp16.half_casts)
        return model

    model = build(cfg, fp16_run).cuda()   # this call returns the cast model

Every `return` of the function gives the same local name, and a half cast of the function
binds that name (`model = model.half()`) or casts it in place as a statement (`model.half()`,
`model.cuda().half()`), and nothing after the cast binds the name again or casts it back:
the call's value is that cast model on the path that casts, as the cast written in the caller
would be. The other file's versions: project/half_returns.py
(EntryReturnsHalf, the cast's file told that a region runs the model, AMP103) and, for a call of a
builder another file defines, `remote_casts` (the project pass's EntryReturn "half", read through
`FunctionReturns.remote`: the caller told that the model it trains is half, AMP152)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.dtype_value import module_moved
from amplint.analysis.facts.function_returns import call_arguments
from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import CallSite, Frame


def returned_casts(facts) -> Dict[int, Tuple[str, CallSite]]:
    """id(call) -> (dtype, the cast site in the callee) for the calls of the file whose callee
    returns a model it casts to half."""
    casts = facts.fp16.half_casts
    if not casts:
        return {}
    by_function: Dict[int, Dict[str, CallSite]] = {}
    builders = set()  # the functions' names: only calls written with one are resolved (issue 34)
    for site in facts.tree.calls:
        if id(site.node) not in casts:
            continue
        function = site.frame.scope
        name = cast_local(site)
        if function.kind == "function" and name is None and _returned(site):
            by_function.setdefault(id(function), {}).setdefault(_RETURNED, site)  # `return model.half()`
            builders.add(function.name)
        elif function.kind == "function" and name is not None and _kept(function.node, site, name):
            by_function.setdefault(id(function), {}).setdefault(name, site)
            builders.add(function.name)
    if not by_function:
        return {}
    returns = facts.function_returns
    found: Dict[int, Tuple[str, CallSite]] = {}
    for site in facts.tree.calls:
        func = site.node.func
        written = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        if written not in builders:
            continue
        returned = returns.of_call(site.node, site.frame)
        if returned is None or id(returned.function) not in by_function:
            continue
        names = {v.value for v in returned.values if isinstance(v, cst.Name)}
        if all(id(v) in casts for v in returned.values):
            names = {_RETURNED}  # every `return` is a half cast itself
        elif len(names) != 1 or len(returned.values) != sum(isinstance(v, cst.Name) for v in returned.values):
            continue
        cast = by_function[id(returned.function)].get(names.pop())
        if cast is not None and not _turned_off(returned, cast):
            found[id(site.node)] = (casts[id(cast.node)], cast)
    return found


_RETURNED = ""  # the key of a cast that is a `return`'s value


def _returned(site: CallSite) -> bool:
    """The cast is the value of a `return` (`return nn.Sequential(*modules).half()`)."""
    stmt = site.line_stmt
    small = stmt.body[0] if stmt is not None and len(stmt.body) == 1 else None
    return isinstance(small, cst.Return) and small.value is site.node


def _kept(function: cst.FunctionDef, cast: CallSite, name: str) -> bool:
    """Nothing after the cast in the function's text binds `name` again (but for a module move,
    `model = model.cuda()`) or casts it back (`model.float()`, `model.to(torch.float32)`): the
    cast is what a `return name` can give (a later `model = model.float()`, a loop `for model
    in teachers: model.half()` before `model = Student()`: unknown)."""
    visitor = _AfterCast(cast.line_stmt, name, cast.frame)
    function.body.visit(visitor)
    return not visitor.spoiled


class _AfterCast(cst.CSTVisitor):
    CASTS = frozenset({"float", "double", "bfloat16", "type", "to"})

    def __init__(self, stmt, name: str, frame) -> None:
        self.stmt, self.name, self.frame = stmt, name, frame
        self.after = False
        self.spoiled = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.stmt:
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if self.after and not self.spoiled:
            self._check(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if original_node is self.stmt:
            self.after = True
        super().on_leave(original_node)

    def _check(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            if any(self._binds(t.target) for t in node.targets) and not self._moved(node.value):
                self.spoiled = True
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            self.spoiled = self._binds(node.target)
        elif isinstance(node, cst.AsName):
            self.spoiled = self._binds(node.name)
        elif isinstance(node, cst.Del):
            self.spoiled = self._binds(node.target)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in self.CASTS and not module_moved(node, self.frame):
            root = moved_root(node.func.value, self.frame)
            self.spoiled = isinstance(root, cst.Name) and root.value == self.name

    def _binds(self, target: cst.CSTNode) -> bool:
        if isinstance(target, cst.Name):
            return target.value == self.name
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self._binds(e.value) for e in target.elements)
        if isinstance(target, cst.StarredElement):
            return self._binds(target.value)
        return False

    def _moved(self, value: cst.BaseExpression) -> bool:
        root = moved_root(value, self.frame)
        return root is not value and isinstance(root, cst.Name) and root.value == self.name


def _turned_off(returned, cast: CallSite) -> bool:
    """The cast sits under `if flag:` with `flag` a parameter, and this call passes a literal
    False / None for it (or leaves it out where its default is one): `load_model(cfg,
    fp16=False)` gets the float32 model."""
    function = returned.function.node
    defaults = {p.name.value: p.default for p in _params(function) if p.default is not None}
    for test in _guards(function.body, cast.line_stmt):
        if not isinstance(test, cst.Name) or test.value not in {p.name.value for p in _params(function)}:
            continue
        if any(a.star for a in returned.call.args):
            continue  # a `*args` / `**kw` may pass it: unknown
        passed = call_arguments(returned.call, returned.function).get(test.value)
        value = passed if passed is not None else defaults.get(test.value)
        if isinstance(value, cst.Name) and value.value in ("False", "None"):
            return True
    return False


def _params(function: cst.FunctionDef):
    params = function.params
    return list(params.posonly_params) + list(params.params) + list(params.kwonly_params)


def _guards(body: cst.CSTNode, stmt) -> list:
    """The tests of the `if`s whose true branch holds `stmt` (a statement line of `body`)."""
    found: list = []

    def walk(node: cst.CSTNode, tests: list) -> bool:
        if node is stmt:
            found.extend(tests)
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(node, cst.If):
            return walk(node.body, tests + [node.test]) or (
                node.orelse is not None and walk(node.orelse, tests))
        return any(walk(child, tests) for child in children_in_visit_order(node))

    walk(body, [])
    return found


def cast_local(site: CallSite) -> Optional[str]:
    """The local name a half cast binds or casts in place: `model = model.half()`,
    `model.half()` / `model.cuda().half()` as a statement; None for anything else."""
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    call = site.node
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1:
        target = small.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(small, cst.Expr) and small.value is call and isinstance(call.func, cst.Attribute):
        root = call.func.value
        while isinstance(root, cst.Call) and module_moved(root, site.frame):
            root = root.func.value  # type: ignore[union-attr]
        return root.value if isinstance(root, cst.Name) else None
    return None


def moved_root(value: cst.BaseExpression, frame: Frame) -> cst.BaseExpression:
    """`build(cfg).cuda().train()` -> `build(cfg)`: the module moves return the module."""
    while isinstance(value, cst.Call) and module_moved(value, frame):
        value = value.func.value  # type: ignore[union-attr]
    return value


def remote_casts(facts) -> Dict[int, object]:
    """id(call) -> the EntryReturn "half" of the builder of another file the call names
    (project/return_values.py), for the calls that do not pass a literal False / None for the
    parameter guarding its cast (nor leave it out where its default is one)."""
    returns = facts.function_returns
    found: Dict[int, object] = {}
    for site in facts.tree.calls:
        entry = returns.remote(site.node, site.frame)
        if entry is None or entry.kind != "half":
            continue
        if entry.param:
            if any(a.star for a in site.node.args):
                continue  # a `*args` / `**kw` may pass the flag: unknown
            passed = None
            for position, arg in enumerate(site.node.args):
                if arg.keyword is None and position == entry.index or \
                        arg.keyword is not None and arg.keyword.value == entry.param:
                    passed = arg.value
            if passed is None and entry.bound == "off":
                continue
            if isinstance(passed, cst.Name) and passed.value in ("False", "None"):
                continue
        found[id(site.node)] = entry
    return found
