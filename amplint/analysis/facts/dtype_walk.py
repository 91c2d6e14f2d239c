"""The source-order walk behind amplint.analysis.facts.dtypes: statements, environments and joins.
Expressions are valued by amplint.analysis.facts.dtype_ops."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from amplint.analysis.facts.dtype_ops import Evaluator
from amplint.analysis.facts.dtype_value import (
    Dtype, Elements, Items, ModuleValue, assigned_names, join, join_values,
)
from amplint.analysis.facts.syntax import bound_names
from amplint.analysis.facts.tree import Frame

Env = Dict[str, object]  # name -> Dtype | ModuleValue | None (unknown)
_CONDITIONAL = (cst.For, cst.While, cst.Try, cst.Match) if hasattr(cst, "Match") else (
    cst.For, cst.While, cst.Try)


def walk_module(dtypes) -> None:
    module = dtypes.facts.module
    dtypes.global_env = _global_modules(dtypes, module)
    walker = _Walker(dtypes)
    walker.block(module.body, {}, dtypes.facts.tree.module_frame)


def _merge(a: Env, b: Env) -> Env:
    out: Env = {}
    for name in set(a) | set(b):
        x, y = a.get(name), b.get(name)
        if isinstance(x, ModuleValue) or isinstance(y, ModuleValue):
            out[name] = x if x is y or (
                isinstance(x, ModuleValue) and isinstance(y, ModuleValue) and x.op == y.op) else None
        elif isinstance(x, Dtype) or isinstance(y, Dtype) or x is None or y is None:
            out[name] = join(x, y)  # type: ignore[arg-type]
        else:  # project module instances (instance_forwards.py)
            out[name] = join_values(x, y)
    return out


def _global_modules(dtypes, module: cst.Module) -> Env:
    """Module-level names bound once in the whole file, to a torch.nn module constructor: the
    functions of the file see them."""
    found: Env = {}
    frame = dtypes.facts.tree.module_frame
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call):
                name = small.targets[0].target.value
                module_value = dtypes.module_ctor(small.value, frame)
                if module_value is not None:
                    found[name] = module_value
    if not found:
        return found
    # `global name` in a function may rebind it
    return {name: value for name, value in found.items() if dtypes.bound_once(name)}


def _declared(body) -> set:
    """Names `global`/`nonlocal` declares in a function body or the functions nested in it."""
    names: set = set()
    stack = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                if isinstance(small, (cst.Global, cst.Nonlocal)):
                    names.update(item.name.value for item in small.names)
            continue
        for part in ("body", "orelse", "handlers", "finalbody", "cases"):
            value = getattr(stmt, part, None)
            if isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, cst.IndentedBlock):
                stack.extend(value.body)
            elif value is not None:
                stack.append(value)
    return names


def _seeded_params(node: cst.FunctionDef, frame: Frame):
    """The parameters of a declared function that may be tensors: those without a default
    (`def focal_loss(pred, target, alpha=0.25)` -> pred, target), not `self`/`cls` nor the
    first parameter of a method."""
    params = list(node.params.posonly_params) + list(node.params.params)
    method = frame.parent is not None and frame.parent.kind == "class" and not any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in node.decorators)
    if method and params:
        params = params[1:]
    for param in params + list(node.params.kwonly_params):
        if param.default is None and param.name.value not in ("self", "cls"):
            yield param.name.value


class _Walker:
    def __init__(self, dtypes) -> None:
        self.dtypes = dtypes
        self.bodies = dtypes._bodies
        self.escaping: set = set()
        self.globals: Env = dtypes.global_env
        self.returns: list = []

    def block(self, body, env: Env, frame: Frame) -> Env:
        inner = self.bodies.get(id(body))
        if inner is not None and inner.kind == "with":
            frame = inner
        statements = body.body if hasattr(body, "body") else body
        if isinstance(statements, cst.BaseSuite):
            statements = statements.body
        for stmt in statements:
            env = self.statement(stmt, env, frame)
        return env

    def value(self, expr, env: Env, frame: Frame, parts: bool = False):
        return Evaluator(self.dtypes, env, frame).value(expr, parts)

    def bind(self, target: cst.BaseExpression, value, env: Env) -> None:
        if isinstance(value, Items):
            if isinstance(target, (cst.Tuple, cst.List)):  # `_, _, values = model(x)`
                plain = all(isinstance(e, cst.Element) for e in target.elements) and len(
                    target.elements) == len(value.items)
                for index, element in enumerate(target.elements):
                    self.bind(element.value, value.items[index] if plain else None, env)
                return
            value = None  # the tuple itself is not tracked
        if isinstance(value, Elements):
            if isinstance(target, (cst.Tuple, cst.List)):  # `q, k, v = qkv.unbind(0)`
                for element in target.elements:
                    plain = isinstance(element, cst.Element) and isinstance(element.value, cst.Name)
                    self.bind(element.value, value.element if plain else None, env)
                return
            value = None  # the tuple itself is not tracked
        if isinstance(target, cst.Name):
            if target.value not in self.escaping and target.value not in self.dtypes.untracked:
                env[target.value] = value
            return
        if isinstance(target, cst.Attribute) and target.attr.value == "data":
            root = target.value
            if isinstance(root, cst.Name):
                env[root.value] = None  # `p.data = p.data.half()` changes p's dtype
            return
        for name in bound_names(target):
            env[name] = None

    def statement(self, stmt: cst.CSTNode, env: Env, frame: Frame) -> Env:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, env, frame)
            return env
        if isinstance(stmt, cst.If):
            self.value(stmt.test, env, frame)
            then = self.block(stmt.body, dict(env), frame)
            if stmt.orelse is None:
                return _merge(env, then)
            other = self.statement(stmt.orelse, dict(env), frame) if isinstance(stmt.orelse, cst.If) \
                else self.block(stmt.orelse.body, dict(env), frame)
            return _merge(then, other)
        if isinstance(stmt, cst.Else):
            return self.block(stmt.body, env, frame)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.value(item.item, env, frame)
                if item.asname is not None:
                    self.bind(item.asname.name, None, env)
            return self.block(stmt.body, env, frame)
        if isinstance(stmt, cst.FunctionDef):
            self.function(stmt)
            env[stmt.name.value] = None
            return env
        if isinstance(stmt, cst.ClassDef):
            cls = self.bodies.get(id(stmt.body))
            self.block(stmt.body, {}, cls or frame)
            env[stmt.name.value] = None
            return env
        if isinstance(stmt, _CONDITIONAL):
            # a name bound anywhere inside may hold any iteration's value: unknown inside
            for name in assigned_names(stmt):
                env[name] = None
            before = dict(env)
            inner = dict(env)
            if isinstance(stmt, cst.For):
                self.value(stmt.iter, inner, frame)
            elif isinstance(stmt, cst.While):
                self.value(stmt.test, inner, frame)
            for part in self._parts(stmt):
                self.block(part, dict(inner), frame)
            return before  # every name bound inside is unknown after it, too
        return env

    @staticmethod
    def _parts(stmt):
        if isinstance(stmt, (cst.For, cst.While)):
            yield stmt.body
            if stmt.orelse is not None:
                yield stmt.orelse.body
        elif isinstance(stmt, cst.Try):
            yield stmt.body
            for handler in stmt.handlers:
                yield handler.body
            if stmt.orelse is not None:
                yield stmt.orelse.body
            if stmt.finalbody is not None:
                yield stmt.finalbody.body
        else:  # match
            for case in getattr(stmt, "cases", ()):
                yield case.body

    def call_body(self, node: cst.FunctionDef, frame: Frame, bound: Env) -> list:
        """Read a function's body with its parameters bound (amplint.analysis.facts.dtype_calls): the
        values of its `return` statements."""
        self.escaping = _declared(node.body)
        env = {name: value for name, value in self.globals.items() if name not in bound}
        env.update({name: value for name, value in bound.items()
                    if name not in self.escaping and name not in self.dtypes.untracked})
        self.returns = []
        self.block(node.body, env, frame)
        return self.returns

    def function(self, node: cst.FunctionDef) -> None:
        frame = self.bodies.get(id(node.body))
        if frame is None:
            return
        saved_returns, self.returns = self.returns, []
        saved = self.escaping
        self.escaping = set()
        self.escaping = _declared(node.body)
        for param in node.params.params + node.params.kwonly_params + node.params.posonly_params:
            if param.default is not None:
                self.value(param.default, {}, frame.parent or frame)
        params = node.params.params + node.params.kwonly_params + node.params.posonly_params
        shadowed = {p.name.value for p in params} | self.escaping
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                shadowed.add(star.name.value)
        env = {name: value for name, value in self.globals.items() if name not in shadowed}
        seed = self.dtypes.declared_param(frame)
        if seed is not None:
            env.update({name: seed for name in _seeded_params(node, frame)
                        if name not in self.escaping and name not in self.dtypes.untracked})
        bindings = self.dtypes.bindings
        if bindings is not None and id(frame) in bindings.seeds:
            env.update({name: value for name, value in bindings.seeds[id(frame)].items()
                        if name not in self.escaping and name not in self.dtypes.untracked})
        self.block(node.body, env, frame)
        self.escaping = saved
        self.returns = saved_returns

    def small(self, small: cst.CSTNode, env: Env, frame: Frame) -> None:
        if isinstance(small, cst.Assign):
            value = self.value(small.value, env, frame, parts=True)
            for target in small.targets:
                self._target_reads(target.target, env, frame)
                self.bind(target.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.value(small.value, env, frame), env)
        elif isinstance(small, cst.AugAssign):
            # `x += y` keeps x's dtype when x is a tensor (in place); rebinds it otherwise
            before = self.value(small.target, env, frame)
            self.value(small.value, env, frame)
            if isinstance(small.target, cst.Name):
                if before is not None and getattr(before, "is_tensor", False):
                    env[small.target.value] = before
                else:
                    env[small.target.value] = None
        elif isinstance(small, cst.Expr):
            self.value(small.value, env, frame)
        elif isinstance(small, cst.Return):
            self.returns.append(self.value(small.value, env, frame, parts=True)
                                if small.value is not None else None)
        elif isinstance(small, cst.Del):
            for name in bound_names(small.target):
                env.pop(name, None)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            for name in assigned_names(small):
                env[name] = None
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                env[item.name.value] = None

    def _target_reads(self, target: cst.BaseExpression, env: Env, frame: Frame) -> None:
        """Value the expressions a subscript/attribute target reads (`buf[idx] = v`)."""
        if isinstance(target, cst.Subscript):
            self.value(target.value, env, frame)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target_reads(element.value, env, frame)


__all__ = ["walk_module", "Optional"]
