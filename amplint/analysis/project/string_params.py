"""The string literals a parameter of a module-level function is given (issue 26), for the
reflective lookup (reflective.py): `vits.__dict__[arch_name](...)` or `getattr(models, name)`
inside `def _make_model(arch_name, ...)`, where every call of `_make_model` in the project
passes a literal (`_make_model(arch_name="vit_base")`) or leaves the parameter to its literal
default.

A constructor's parameter (`InternImage.__init__(self, core_op="DCNv3")` doing
`getattr(sys.modules[__name__], core_op)`) is read the same way at the class's calls
(`InternImage()`), `self` left out.

Exact or nothing: the answer is None (the lookup stays unresolved, as before) when the function
is a method other than `__init__` (or the class is decorated, defines `__new__`, or is named
other than as a callee: a subclass, `partial(Cls)`), when no call of it is found, when its name is used other than as the callee of a
call (passed as a value: a call elsewhere cannot be seen), when a call's callee cannot be
proved to be this function or another one (`obj._make_model(...)` on a non-module), when a call
passes the parameter through `*args` / `**kwargs` or as anything but a string literal, or when a
name shadows the function in the calling file. A caller's own parameter passed on
(`def vit_base(arch="vit_base"): return _make_model(arch)`) is followed to that caller's call
sites, a few levels deep.

Lazy and text-first: only a lookup keyed by a parameter asks, and only the files whose text
holds the function's name are parsed (with `ast`, once per run)."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

Literal = Tuple[str, str, int]  # (value, file, line)
_MAX_DEPTH = 3


class StringParams:
    def __init__(self, project) -> None:
        self.p = project
        self._trees: Dict[str, Optional[ast.Module]] = {}
        self._memo: Dict[tuple, Optional[List[Literal]]] = {}
        self.asked = 0  # questions answered (not from the memo): the test counts them

    def literals(self, path: str, function: str, param: str, depth: int = 0) -> Optional[List[Literal]]:
        """The literals every call of module-level `function` (of `path`) gives `param`; None
        where one call gives something else or the calls cannot all be seen."""
        key = (path, function, param)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle (a function passing its parameter to itself) resolves nothing
        self.asked += 1
        found = self._literals(path, function, param, depth) if depth <= _MAX_DEPTH else None
        self._memo[key] = found
        return found

    def _literals(self, path: str, function: str, param: str, depth: int) -> Optional[List[Literal]]:
        tree = self._tree(path)
        if tree is None:
            return None
        if function.endswith(".__init__"):  # a constructor: its calls are the class's
            function = function[: -len(".__init__")]
            definition = _init_def(tree, function)
            slot = _slot(definition.args, param) if definition is not None else None
            if slot is not None:
                slot = (None if slot[0] is None else slot[0] - 1, slot[1])  # `self` is not passed
                if slot[0] == -1:
                    return None
        elif "." in function or not function.isidentifier():
            return None
        else:
            definition = _module_def(tree, function)
            slot = _slot(definition.args, param) if definition is not None else None
        if slot is None or not function.isidentifier():
            return None
        words = re.compile(r"\b%s\b" % re.escape(function))
        out: List[Literal] = []
        calls = 0
        for where in self.p.python:
            if not words.search(self.p.files[where]):
                continue
            tree = self._tree(where)
            if tree is None:
                return None
            for node, caller in _uses(tree, function):
                if type(node) is not ast.Call:
                    return None  # the function passed as a value: its calls are out of sight
                target = self._target(where, node.func, function)
                if target is None:
                    return None
                if target != (path, (function,)):
                    continue
                calls += 1
                given = _argument(node, slot, definition.args)
                if given is _UNSEEN:
                    return None
                if isinstance(given, str):
                    out.append((given, where, node.lineno))
                    continue
                if (type(given) is ast.Name and caller is not None and _slot(caller.args, given.id) is not None
                        and not _rebound(caller, given.id)):
                    more = self.literals(where, caller.name, given.id, depth + 1)
                    if more is None:
                        return None
                    out.extend(more)
                    continue
                return None
        return out if calls else None

    def _tree(self, path: str) -> Optional[ast.Module]:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.p.files[path])
            except (SyntaxError, ValueError, RecursionError):
                self._trees[path] = None
        return self._trees[path]

    def _target(self, where: str, func, name: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(file, names inside it) the callee resolves to, or None where it cannot be told."""
        parts: List[str] = []
        while type(func) is ast.Attribute:
            parts.append(func.attr)
            func = func.value
        if type(func) is not ast.Name:
            return None
        parts.append(func.id)
        dotted = list(reversed(parts))
        summary = self.p.summary(where)
        if summary is None:
            return None
        head = dotted[0]
        if head in summary.imports:
            return self.p.resolve_ref(where, ".".join([summary.imports[head]] + dotted[1:]))
        if len(dotted) == 1 and (head in summary.functions or head in summary.classes):
            return where, (head,)
        return None


_UNSEEN = object()


def _init_def(tree: ast.Module, name: str):
    """The `__init__` of module-level class `name` (a class with no `__new__`, no decorator)."""
    found = [n for n in tree.body if type(n) is ast.ClassDef and n.name == name]
    if len(found) != 1 or found[0].decorator_list:
        return None
    methods = {n.name: n for n in found[0].body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)}
    init = methods.get("__init__")
    return init if init is not None and "__new__" not in methods and not init.decorator_list else None


def _module_def(tree: ast.Module, name: str):
    found = [n for n in tree.body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef) and n.name == name]
    return found[0] if len(found) == 1 else None


def _slot(args: ast.arguments, param: str) -> Optional[Tuple[Optional[int], str]]:
    """(position or None for keyword-only, name) of `param`."""
    positional = list(args.posonlyargs) + list(args.args)
    for index, arg in enumerate(positional):
        if arg.arg == param:
            return index, param
    if any(arg.arg == param for arg in args.kwonlyargs):
        return None, param
    return None


def _argument(call: ast.Call, slot, args: ast.arguments):
    """The string the call gives the parameter (its literal default where it gives none), the
    argument node where it is something else, or _UNSEEN (a star argument may give it)."""
    position, name = slot
    for keyword in call.keywords:
        if keyword.arg == name:
            return _string(keyword.value)
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            return _UNSEEN
        if index == position:
            return _string(arg)
    if any(keyword.arg is None for keyword in call.keywords):
        return _UNSEEN
    default = _default(args, name)
    return _string(default) if default is not None else _UNSEEN


def _string(node):
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return node


def _default(args: ast.arguments, name: str):
    positional = list(args.posonlyargs) + list(args.args)
    offset = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg.arg == name:
            return args.defaults[index - offset] if index >= offset else None
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if arg.arg == name:
            return default
    return None


def _uses(tree: ast.Module, name: str):
    """Every use of `name` in the file as (the call it is the callee of, or the use itself;
    the module-level function it is in, or None). A binding of the name other than the
    module-level `def` (a parameter, an assignment, a nested def) is yielded as a use, so the
    caller gives up."""
    for top in tree.body:
        caller = top if type(top) in (ast.FunctionDef, ast.AsyncFunctionDef) else None
        if caller is not None and top.name == name:
            nodes = [n for part in (top.args, *top.body, *top.decorator_list) for n in ast.walk(part)]
        else:
            nodes = list(ast.walk(top))
        callees = {id(n.func): n for n in nodes if type(n) is ast.Call}
        for node in nodes:
            if type(node) is ast.Name and node.id == name or type(node) is ast.Attribute and node.attr == name:
                if type(node.ctx) is not ast.Load:
                    yield node, caller
                else:
                    yield callees.get(id(node), node), caller
            elif type(node) is ast.arg and node.arg == name:
                yield node, caller
            elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and node.name == name and node is not top:
                yield node, caller
            elif type(node) is ast.alias and (
                (node.asname not in (None, name) and node.name.split(".")[-1] == name)  # called by another name
                or (caller is not None and (node.asname or node.name.split(".")[0]) == name)
            ):
                yield node, caller


def _rebound(function, name: str) -> bool:
    """`name` (a parameter) assigned again in the function's body, or a parameter of a
    function or lambda nested in it (a call there may pass that one)."""
    for statement in function.body:
        for node in ast.walk(statement):
            if type(node) is ast.Name and node.id == name and type(node.ctx) is not ast.Load:
                return True
            if type(node) is ast.arg and node.arg == name:
                return True
    return False
