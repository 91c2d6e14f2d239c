"""The module-level functions of a text, read with `ast`, each with its source text (decorators
included): the cheap test the project pass makes before it parses a file with LibCST."""

from __future__ import annotations

import ast
from typing import Iterator, Tuple

from amplint.analysis.parsing import python_tree


def parse_or_none(text: str):
    try:
        return python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def module_functions(text: str, kinds=(ast.FunctionDef, ast.AsyncFunctionDef), tree=None) -> Iterator[Tuple[ast.AST, str]]:
    """(def node, its text from the first decorator to its end) for each module-level def (or
    other statement of `kinds`: `ast.ClassDef`); nothing when the text does not parse. `tree`:
    the text's `ast` when the caller has it already."""
    tree = tree if tree is not None else parse_or_none(text)
    if tree is None:
        return
    lines = text.splitlines()
    for node in tree.body:
        if isinstance(node, kinds):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            yield node, "\n".join(lines[start - 1:node.end_lineno])


def function_def(tree, key: str):
    """The def of function `key` ("f", "Cls.method") of a module's `ast`, or None."""
    scope, found = tree.body if tree is not None else [], None
    for part in key.split("."):
        found = next((node for node in scope if isinstance(
            node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == part), None)
        if found is None:
            return None
        scope = found.body
    return found if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def noop_function(tree, key: str) -> bool:
    """Function `key` of the module (its `ast`) does nothing: its body is only a docstring,
    `pass`, `...`, `return` or `return None`."""
    found = function_def(tree, key)
    return found is not None and all(_does_nothing(statement) for statement in found.body)


def loop_variable(tree, key: str, name: str) -> bool:
    """`name` in function `key` is bound only as the target of `for` loops (`for h in hooks`):
    each of its values is every item the loop runs over in turn."""
    found = function_def(tree, key)
    if found is None or name in {a.arg for a in ast.walk(found.args) if isinstance(a, ast.arg)}:
        return False
    loops = stores = 0
    for node in ast.walk(found):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) and node.target.id == name:
            loops += 1
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            stores += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return loops > 0 and stores == loops


def _does_nothing(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)  # a docstring or `...`
    if isinstance(statement, ast.Return):
        return statement.value is None or (
            isinstance(statement.value, ast.Constant) and statement.value.value is None)
    return False
