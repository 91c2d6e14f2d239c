"""What a caller's construction of a helper class handed to the attributes its constructor
stores, read from the caller's `ast` (the project side of facts/scaler_stored.py's
`constructed_attrs`, which the caller's own file reads with LibCST after the pass).

EfficientNet-style accumulation: `accumulator = GradAccumulator(optimizer, 2, scaler)` then
`accumulator.maybe_step(i)` and `scaler.update()` in the caller. The helper's `maybe_step` steps
`self.scaler` and leaves the update to whoever handed the scaler: the update is the caller's
`scaler.update()`, since `self.scaler` is the caller's `scaler` for this instance.

Exact or nothing, the same conditions as the caller's side: the receiver is a local of the
calling function bound once, by `name = Cls(...)` with `Cls` the method's class spelled by its
name, no `*args`/`**kwargs`; the function uses the name only to call its methods; the argument
is a dotted name whose root the function binds once (a parameter, or one binding)."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Sequence

from amplint.analysis.project.module_defs import function_def
from amplint.analysis.project.opener_names import dotted_text
from amplint.analysis.project.scaler_stored import Stored


def constructed_texts(module: Optional[ast.Module], function_key: str, receiver: str, cls: str,
                      stored: Sequence[Stored]) -> Dict[str, str]:
    """`self.attr` -> the calling function's text of what `receiver = Cls(...)` passed for the
    stored parameter; {} when that cannot be told exactly."""
    function = function_def(module, function_key) if stored else None
    if function is None or _bindings(function, receiver) != 1:
        return {}
    made = _only_construction(function, receiver)
    if made is None or _called_name(made.func) != cls or any(
            isinstance(arg, ast.Starred) for arg in made.args) or any(k.arg is None for k in made.keywords):
        return {}
    if not _only_method_calls(function, receiver):
        return {}
    keywords = {k.arg: k.value for k in made.keywords}
    found: Dict[str, str] = {}
    for attr, param, position, _none_default in stored:
        value = keywords.get(param)
        if value is None and 0 <= position < len(made.args):
            value = made.args[position]
        text = dotted_text(value) if value is not None else None
        if text is not None and _bindings(function, text.split(".", 1)[0]) == 1:
            found["self." + attr] = text
    return found


def _bindings(function: ast.AST, name: str) -> int:
    """How many times `function` binds `name`: parameters, stores and deletes anywhere in it
    (nested scopes too: more, never fewer); a `global`/`nonlocal` of it counts as many."""
    count = sum(1 for a in ast.walk(function.args) if isinstance(a, ast.arg) and a.arg == name)  # type: ignore[attr-defined]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            count += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            count += 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name).split(".", 1)[0] == name for a in node.names):
            count += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name \
                and node is not function:
            count += 1
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            count += 1
        elif isinstance(node, ast.arg) and node.arg == name and not _is_own_arg(function, node):
            count += 1  # a nested function's or lambda's parameter
    return count


def _is_own_arg(function: ast.AST, node: ast.arg) -> bool:
    return any(node is a for a in ast.walk(function.args))  # type: ignore[attr-defined]


def _only_construction(function: ast.AST, receiver: str) -> Optional[ast.Call]:
    """The call of the function's one plain `receiver = Call(...)` statement, or None."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id == receiver:
            return node.value if isinstance(node.value, ast.Call) else None
    return None


def _only_method_calls(function: ast.AST, name: str) -> bool:
    """Every use of `name` in `function` but its one binding calls a method of it."""
    names = calls = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name:
            names += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            calls += 1
    return names == calls + 1


def _called_name(func: ast.expr) -> Optional[str]:
    """The last part of a dotted callee (`utils.GradAccumulator` -> "GradAccumulator")."""
    dotted = dotted_text(func)
    return dotted.rsplit(".", 1)[-1] if dotted is not None else None
