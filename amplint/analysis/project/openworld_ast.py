"""The `ast` reading the open world (openworld.py) does: a function's uses of a parameter, a
class's own attributes, the mentions of a function's name in a file, which bases give no model
code."""

from __future__ import annotations

import ast
import builtins
import sys
from typing import FrozenSet, List, Optional, Set, Tuple

from amplint.analysis.project.flowvalues import UNWRAP

BUILTIN_BASES = frozenset(name for name in dir(builtins) if isinstance(getattr(builtins, name), type))


def plain_module(ref: str) -> bool:
    """A reference into torch (outside `torch.nn`) or the standard library: no model code."""
    top = ref.lstrip("?").split(".")[0]
    return top == "torch" or (top in sys.stdlib_module_names and "." in ref) or ref.lstrip("?") in BUILTIN_BASES


def module_classes(tree: ast.Module):
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            yield node
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for child in reversed(list(ast.iter_child_nodes(node))):
                if isinstance(child, (ast.stmt, ast.excepthandler)):
                    stack.append(child)


def functions(tree: ast.Module):
    """(key as flowfacts.frame_key writes it, node) for every function."""
    stack: List[Tuple[ast.AST, str]] = [(child, "") for child in reversed(tree.body)]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{prefix}.{node.name}" if prefix else node.name
            if not isinstance(node, ast.ClassDef):
                yield inner, node
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                stack.append((child, inner))


def own_attrs(node: ast.ClassDef) -> Tuple[FrozenSet[str], bool]:
    attrs: Set[str] = set()
    dynamic = False
    for item in ast.walk(node):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if item in node.body or _in_class_body(node, item):
                attrs.add(item.name)
                if item.name in ("__getattr__", "__getattribute__"):
                    dynamic = True
        elif isinstance(item, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self":
                        attrs.add(leaf.attr)
                    elif isinstance(leaf, ast.Name) and item in node.body:
                        attrs.add(leaf.id)
        elif isinstance(item, ast.Call):
            func = item.func
            named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if named in ("setattr", "register_buffer", "register_parameter", "add_module", "register_module"):
                args = item.args[1:] if named == "setattr" else item.args
                if named == "setattr" and not (item.args and isinstance(item.args[0], ast.Name)
                                               and item.args[0].id == "self"):
                    continue
                first = args[0] if args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    attrs.add(first.value)
                else:
                    dynamic = True
    return frozenset(attrs), dynamic


def _in_class_body(cls: ast.ClassDef, fn) -> bool:
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        if node is fn:
            return True
        if isinstance(node, (ast.If, ast.Try)):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return False


def param_uses(fn, name: str) -> Optional[Tuple[FrozenSet[str], bool]]:
    """The attributes `fn` reads on its parameter `name` (through `.module` / `._orig_mod`
    too) and whether it calls it; None when the function assigns it (`model = model.module`)."""
    attrs: Set[str] = set()
    optional: Set[str] = set()
    called = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return None
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
            if name in {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}:
                return None  # the name means something else in there: not read apart here
        if isinstance(node, ast.Call):
            if _is_param(node.func, name):
                called = True
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("hasattr", "getattr") and len(node.args) >= 2:
                if _is_param(node.args[0], name) and isinstance(node.args[1], ast.Constant):
                    if func.id == "hasattr" or len(node.args) >= 3:
                        optional.add(str(node.args[1].value))
                    else:
                        attrs.add(str(node.args[1].value))
        if isinstance(node, ast.Attribute) and _is_param(node.value, name) and node.attr not in UNWRAP:
            attrs.add(node.attr)
    return frozenset(attrs - optional), called


def _is_param(node, name: str) -> bool:
    """`name`, or `name.module` / `name._orig_mod` (the wrapped model)."""
    while isinstance(node, ast.Attribute) and node.attr in UNWRAP:
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def mentions(tree: ast.Module, name: str, method: bool, own: bool) -> bool:
    """Does the file write `name` as anything but a def, a plain `from m import name` or an
    `__all__` entry? (`own`: the function's own file, where a bare name is a call of it.)"""
    local_def = not own and not method and any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in tree.body)
    all_strings: Set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                all_strings.update(id(leaf) for leaf in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and not method and not local_def:
            return True
        if isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] == name and node.asname:
            return True
        if isinstance(node, ast.Constant) and node.value == name and id(node) not in all_strings:
            return True
    return False
