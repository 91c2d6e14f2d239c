"""What a project function returns to its callers in other files, when every `return` agrees:
an outside function value (`partial(torch.nn.utils.clip_grad_norm_, max_norm=...)` or the
function's own name) or a list/tuple display of distinct names (`[dense_optimizer,
sparse_optimizer]`). Asked only for the calls a scaler summary marks as wanted (their value is
bound once to a local that the caller then calls, or iterates over with a scaler step inside:
scaler_summaries.py), and answered from the callee's text with Python's `ast`. Anything else
(a bare `return`, a path that falls off the end, a decorator, a generator, a name the module
binds twice, a target inside the project) gives no answer: the caller's rules stay as silent as
they were. The answer travels as a `facts.returned_values.EntryReturn` of the caller's file."""

from __future__ import annotations

import ast
import sys
from typing import Dict, Optional, Tuple

from amplint.analysis.facts.names import _CANONICAL, _KEYWORD_READERS, _READ_KEYWORDS
from amplint.analysis.project.opener_names import dotted_text

# the targets a returned function value may have: outside the project for sure
_LIBRARIES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy"}
_MEMO: Dict[Tuple[str, int], Dict[str, Tuple[str, int, int]]] = {}

Returned = Tuple[str, int]  # (outside function, or ""; display length, or 0)


def function_returns(path: str, text: str, key: str) -> Optional[Tuple[str, int, int]]:
    """What module function `key` of the file returns on every path, and the line of its `def`
    (for messages), or None."""
    memo_key = (path, hash(text))
    found = _MEMO.get(memo_key)
    if found is None:
        found = _MEMO[memo_key] = _module_returns(text)
        if len(_MEMO) > 2000:
            _MEMO.clear()
    return found.get(key)


def _module_returns(text: str) -> Dict[str, Tuple[str, int, int]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    imports: Dict[str, str] = {}
    counts: Dict[str, int] = {}
    for stmt in tree.body:
        for name, target in _bound(stmt):
            counts[name] = counts.get(name, 0) + 1
            if target is not None:
                imports[name] = target
    imports = {name: target for name, target in imports.items() if counts[name] == 1}
    out: Dict[str, Tuple[str, int, int]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and counts.get(stmt.name) == 1 and not stmt.decorator_list:
            value = _returns(stmt, imports)
            if value is not None:
                out[stmt.name] = (*value, stmt.lineno)
    return out


def _bound(stmt: ast.stmt):
    """(name, the import's qualified target or None) for each module-level binding."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            target = f"{stmt.module}.{alias.name}" if stmt.module and not stmt.level else None
            yield alias.asname or alias.name, target
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name, None
    else:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                yield node.id, None
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    yield (alias.asname or alias.name).split(".")[0], None


def _returns(function: ast.FunctionDef, imports: Dict[str, str]) -> Optional[Returned]:
    if not function.body or not isinstance(function.body[-1], ast.Return):
        return None  # a path may fall off the end (None)
    local = {a.arg for a in (*function.args.posonlyargs, *function.args.args,
                             *function.args.kwonlyargs)}
    local |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
    returns = []
    for node in _own_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return None
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Return):
            returns.append(node.value)
    answers = {_value(value, imports, local) for value in returns}
    if len(answers) != 1:
        return None
    (answer,) = answers
    return answer


def _own_nodes(function: ast.FunctionDef):
    """The function's nodes, nested defs, lambdas and classes left out (their returns are not
    this function's)."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _value(node: Optional[ast.expr], imports: Dict[str, str], local) -> Optional[Returned]:
    if isinstance(node, (ast.List, ast.Tuple)):
        texts = [dotted_text(e) for e in node.elts]
        if len(texts) < 2 or None in texts or len(set(texts)) != len(texts):
            return None
        return ("", len(texts))
    if isinstance(node, ast.Call):
        if _qualified(node.func, imports, local) != "functools.partial" or not node.args:
            return None
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            return None  # positional arguments bound: not the function at its calls
        if any(k.arg is None or k.arg in _READ_KEYWORDS for k in node.keywords):
            return None
        target = _qualified(node.args[0], imports, local)
        return (target, 0) if target is not None and target not in _KEYWORD_READERS else None
    target = _qualified(node, imports, local) if node is not None else None
    return (target, 0) if target is not None else None



def _qualified(node: ast.expr, imports: Dict[str, str], local) -> Optional[str]:
    """The outside name `node` spells through the module's imports (None: a local, a name of
    the project, anything not a dotted name)."""
    text = dotted_text(node)
    if text is None:
        return None
    root, _, rest = text.partition(".")
    if root in local or root not in imports:
        return None
    full = imports[root] + ("." + rest if rest else "")
    if full.split(".", 1)[0] not in _LIBRARIES:
        return None
    return _CANONICAL.get(full, full)
