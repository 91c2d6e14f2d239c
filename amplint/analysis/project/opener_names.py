"""How a file names an opener of another file, read from Python's `ast` (shared by
context_openers.py, context_factories.py, context_holders.py, context_methods.py)."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple


def resolved_opener(project, caller: str, written: str, name: str):
    """(file, (name,)) the callee `written` in `caller` names through its imports, or None:
    defined in the caller (its own facts read it), not imported, or imported as another name."""
    head, _, rest = written.partition(".")
    target = project.summary(caller).imports.get(head)
    if target is None or (not rest and target.rsplit(".", 1)[-1] != name):
        return None
    return project.resolve_ref(caller, ".".join(p for p in (target, rest) if p))


def passes_false(with_node, written: str, param) -> bool:
    """Does an item `written(...)` of the `with` pass a literal `False` for `param`, the
    opener's `enabled` parameter (context_functions.passes_false read from `ast`)?"""
    if param is None:
        return False
    index, name = param
    for item in with_node.items:
        call = item.context_expr
        if not (isinstance(call, ast.Call) and dotted_text(call.func) == written):
            continue
        value = None
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        if 0 <= index < len(call.args):
            value = call.args[index]
        for keyword in call.keywords:
            if keyword.arg == name:
                value = keyword.value
        if isinstance(value, ast.Constant) and value.value is False:
            return True
    return False


def dotted_text(expr) -> Optional[str]:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def scopes(tree: ast.Module) -> Iterator[Tuple[ast.AST, ast.AST, str]]:
    """(parent, node, dotted key) for every def and class of the module, nested ones too
    ("Trainer.fit", "main.step"), depth first."""
    stack: List[Tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, key = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{key}.{child.name}" if key else child.name
                yield node, child, inner
                stack.append((child, inner))


def called_dtype(project, info: tuple, cite: str, with_node, written: str) -> tuple:
    """(enabled, device, dtype) of an opener's region at one `with` of it: an opener whose
    autocast takes `dtype=` from its own parameter (facts/opener_dtypes.py; its `info` holds the
    default's dtype) gives no dtype where the call passes any argument (it may pass another)."""
    if cite not in project.__dict__.get("_dtype_param_openers", ()):
        return info
    for item in with_node.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and dotted_text(call.func) == written and (call.args or call.keywords):
            return info[0], info[1], None
    return info


def note_dtype_param(project, inner, cite: str) -> None:
    """Remember that the opener cited as `cite` takes its dtype from a parameter."""
    if getattr(inner, "dtype_param", None) is not None:
        project.__dict__.setdefault("_dtype_param_openers", set()).add(cite)
