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
