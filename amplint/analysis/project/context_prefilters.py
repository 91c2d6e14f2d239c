"""The cheap tests (text, then `ast`) the project pass makes before it parses a file with LibCST
to read the context managers it defines (context_openers.py: module functions and classes;
context_methods.py: methods). Each is a superset of what the LibCST read accepts."""

from __future__ import annotations

import ast
import re
from typing import Tuple

from amplint.analysis.project.module_defs import module_functions
from amplint.analysis.project.summary import CALLER_WORDS

_DECORATED = re.compile(r"@[\w.\s]*contextmanager")
# a `return` whose line names a region word (`return torch.autocast(...)`, `return nullcontext()
# if cpu else torch.amp.autocast(...)`); `return ctx` of a name bound earlier is not looked for
# (a call of a name ending in the word, or in `autocast_context...` / `autocast_ctx...`: not
# `torch.get_autocast_dtype(...)` nor `torch.amp.autocast_mode._cast(...)`, which transformers returns)
# or a partial of autocast (an opener factory: open_clip's `return partial(torch.amp.autocast, ...)`)
_CALL = r"(?:(?:autocast|autocast_context\w*|autocast_ctx\w*|optim_context)\s*\(|partial\(\s*[\w.]*autocast\b)"
_RETURNS = re.compile(r"return[ \t][^\n]*" + _CALL)
_RETURNED_CALL = re.compile(_CALL)
# a partial of autocast anywhere: a module-level name (or table) holding one that a function
# returns (`return _PRECISION_CONTEXTS[precision]`, facts/module_tables.py)
_PARTIAL = re.compile(r"partial\(\s*[\w.]*autocast\b")


def opener_text_tests(text: str) -> Tuple[bool, bool, bool]:
    """(may define a `@contextmanager` function, may return an autocast call, may enter one in
    `__enter__`): the text tests before the parses of context_openers.py."""
    managers = "yield" in text and "contextmanager" in text and _DECORATED.search(text) is not None
    returns = _RETURNS.search(text) is not None or ("return" in text and _PARTIAL.search(text) is not None)
    return managers, returns, "__enter__" in text


def may_open(text: str, tree, managers: bool, returns: bool, enters: bool) -> bool:
    """A module-level function whose own text says `autocast` (or another region word) and
    that either is decorated `...contextmanager` with a `yield` inside a `with`, or has a
    `return` naming a region word; or a module-level context-manager class naming one (an
    alias of autocast bound outside the function, or `return ctx` of a name bound earlier, is
    not looked for: the file is parsed with LibCST only when this holds)."""
    if enters and _enters(text, tree):
        return True
    if not (managers or returns):
        return False
    lines = text.splitlines()
    held = _held_partials(tree, lines) if returns else set()
    for node, segment in module_functions(text, tree=tree):
        if held and _returns_held(node, held):
            return True
        if not any(word in segment for word in CALLER_WORDS):
            continue
        if managers and any(_last(dec).endswith("contextmanager") for dec in node.decorator_list):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.With, ast.AsyncWith)) and any(
                        isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(inner)):
                    return True
        elif returns and returns_a_context(node, lines):
            return True
    return False


def _enters(text: str, tree) -> bool:
    """A module-level class whose text says `autocast` (or another region word) and that
    defines `__enter__` and `__exit__`."""
    for node, segment in module_functions(text, (ast.ClassDef,), tree):
        own = {child.name for child in node.body if isinstance(child, ast.FunctionDef)}
        if {"__enter__", "__exit__"} <= own and any(word in segment for word in CALLER_WORDS):
            return True
    return False


def _held_partials(tree, lines) -> set:
    """Module-level names assigned a value whose text holds a partial of autocast."""
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and _PARTIAL.search("\n".join(lines[stmt.lineno - 1:stmt.end_lineno])):
            names.add(stmt.targets[0].id)
    return names


def _returns_held(function, held: set) -> bool:
    """A `return NAME` / `return NAME[...]` of one of `held`."""
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value.value if isinstance(node.value, ast.Subscript) else node.value
            if isinstance(value, ast.Name) and value.id in held:
                return True
    return False


def returns_a_context(function, lines) -> bool:
    """Does the function have a `return` whose own text calls an autocast-like name (`return
    torch.autocast(...)`, `return nullcontext() if cpu else torch.amp.autocast(...)`, `return
    self.autocast_context_manager()`)? `lines`: the file's lines. (A generator is told apart by
    the LibCST read.)"""
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            if _RETURNED_CALL.search("\n".join(lines[node.lineno - 1:node.end_lineno])):
                return True
    return False


def may_open_method(text: str, tree, managers: bool, returns: bool) -> bool:
    """A module-level class with a method whose own text says a region word and that yields
    inside a `with` (decorated `...contextmanager`, when `managers`: the text says so) or has a
    `return` naming a region word (when `returns`). `tree`: the text's `ast`."""
    lines = text.splitlines()
    for cls, _segment in module_functions(text, (ast.ClassDef,), tree):
        for node in cls.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            segment = "\n".join(lines[start - 1:node.end_lineno])
            if not any(word in segment for word in CALLER_WORDS):
                continue
            decorated = any(_name(d).endswith("contextmanager") for d in node.decorator_list)
            if managers and decorated and any(
                    isinstance(w, (ast.With, ast.AsyncWith)) and any(
                        isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(w)) for w in ast.walk(node)):
                return True
            if returns and not decorated and returns_a_context(node, lines):
                return True
    return False


def _name(expr) -> str:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _last(expr) -> str:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""
