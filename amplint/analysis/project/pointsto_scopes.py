"""Scopes for the points-to extractor: which names a scope binds, and small syntax helpers."""

from __future__ import annotations

import ast
import builtins
from typing import Dict, List, Optional, Set

BUILTINS = frozenset(dir(builtins))
COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())
SPECIAL_DECORATORS = {"staticmethod": "static", "classmethod": "class", "property": "property"}


class Scope:
    def __init__(self, kind: str, fqn: str, parent: Optional["Scope"], cls: Optional[str] = None) -> None:
        self.kind, self.fqn, self.parent, self.cls = kind, fqn, parent, cls
        self.bound: Set[str] = set()
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()
        self.lambdas = 0
        # flow-sensitive names: in straight-line code of the scope's own body, a load sees the
        # last binding before it (its own node, also copied into the name's node, which every
        # other reader - nested functions, loops, other modules - sees whole)
        self.current: Dict[str, str] = {}
        self.nested = 0


def bound_names(body: List[ast.stmt], scope: Scope) -> None:
    """Names a scope binds (assignment, def, import, for, with, except), and its global/nonlocal
    declarations; nested function and class bodies are their own scopes. Walks statements and
    their targets only (a walrus binds when the extractor reaches it)."""
    stack: List[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.bound.add(node.name)
            continue
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        elif isinstance(node, ast.Global):
            scope.globals.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    scope.bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.bound.add(node.name)
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                    scope.bound.add(sub.id)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)
    scope.bound -= scope.globals | scope.nonlocals


def literal_key(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, bool, float, bytes)):
        return repr(node.value)
    return None


def literal_update(call: ast.expr) -> bool:
    """`name.update({"k": v, ...})` with literal keys."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], ast.Dict) and all(k is not None and literal_key(k) for k in call.args[0].keys))


def walk_own(node: ast.AST):
    """ast.walk that does not enter nested functions, lambdas or classes."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        for child in ast.iter_child_nodes(cur):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def none_guard(node: ast.stmt) -> Optional[tuple]:
    """`if NAME is None:` -> (NAME, True); `if NAME is not None:` -> (NAME, False); else None."""
    test = node.test if isinstance(node, ast.If) else None
    if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot)) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return test.left.id, isinstance(test.ops[0], ast.Is)
    return None


def param_guard(stmt: ast.stmt, info: dict, body: List[ast.stmt]) -> Optional[tuple]:
    """`if p is None` / `if p is not None` on a parameter the function (`info`, `body`) never
    rebinds: (p, whether the body runs when p is None)."""
    guard = none_guard(stmt)
    if guard is None or guard[0] not in info["params"] + info["kwonly"]:
        return None
    stores = (n for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    return None if any(n.id == guard[0] for n in stores) else guard


def returns_param(value: ast.expr, param: str, body: List[ast.stmt]) -> bool:
    """`return param`, for a parameter the function never rebinds."""
    if not (isinstance(value, ast.Name) and value.id == param):
        return False
    return not any(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
                   for s in body for n in ast.walk(s))


def leaves(body: List[ast.stmt]) -> bool:
    """The block always leaves the function (ends in return or raise)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))
