"""Where a name of a package's `__init__.py` leads, read from its imports alone (issue 34).

`from detectron2.modeling import build_model` resolves through modeling/__init__.py and
meta_arch/__init__.py to build.py; resolve.py asks each `__init__` only whether the name is
defined there, imported there (and from where), or neither — which a summary of the file
answers, at the cost of summarising it. This reader answers the same question from the file's
`ast` tree (shared with the other `ast` readers: python_tree keeps it) when the file is flat:
every module-level statement an import, a docstring, a call or an assignment to plain names,
and the name bound, if at all, by module-level imports only. Then the summary's answer is
known without it: no class or function can define the name, its import is the summary's
(the last relative import binding it, else the last absolute one: ast_summary.py's
`imports` updated with the relative ones), and a name no statement mentions is in none of the
summary's tables. Anything else (an `if`/`try` around imports, a name also assigned, a
`del`) returns None: the summary decides, as before."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Tuple

from amplint.analysis.parsing import python_tree
from amplint.analysis.project.ast_tree import import_bindings

# ("import", target) | ("absent", "")
Answer = Tuple[str, str]

_FLAT = (ast.Import, ast.ImportFrom, ast.Expr, ast.Assign)


class _Flat:
    """A flat file's import bindings (as the summary's `imports` holds them) and every other
    name it mentions (bound, read, a parameter: in no case only a re-export)."""

    def __init__(self, imports: Dict[str, str], mentioned: FrozenSet[str]) -> None:
        self.imports = imports
        self.mentioned = mentioned


_MEMO: Dict[Tuple[str, int], Optional[_Flat]] = {}
_MEMO_MAX = 20000


def reexport(path: str, text: str, name: str) -> Optional[Answer]:
    """("import", target): `name` is only imported by the file, from `target` as the summary
    spells it; ("absent", ""): the file neither defines nor imports it; None: ask the summary."""
    flat = _flat(path, text)
    if flat is None or name in flat.mentioned:
        return None
    target = flat.imports.get(name)
    return ("import", target) if target is not None else ("absent", "")


def _flat(path: str, text: str) -> Optional[_Flat]:
    key = (path, hash(text))
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = _read(text)
    return _MEMO[key]


def _read(text: str) -> Optional[_Flat]:
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    absolute: Dict[str, str] = {}
    relative: Dict[str, str] = {}
    for stmt in tree.body:
        if type(stmt) not in _FLAT:
            return None
        if type(stmt) is ast.Assign and not all(type(t) is ast.Name for t in stmt.targets):
            return None
        if type(stmt) in (ast.Import, ast.ImportFrom):
            relative_import = type(stmt) is ast.ImportFrom and bool(stmt.level)
            for bound, target in import_bindings(stmt):
                (relative if relative_import else absolute)[bound] = target
    mentioned = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            mentioned.add(node.id)
        elif kind is ast.arg:
            mentioned.add(node.arg)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            mentioned.add(node.name)  # (inside an expression's lambda: never, but no doubt)
        elif kind in (ast.Global, ast.Nonlocal):
            mentioned.update(node.names)
        elif kind is ast.ExceptHandler and node.name:
            mentioned.add(node.name)
    imports = dict(absolute)
    imports.update(relative)
    return _Flat(imports, frozenset(mentioned))
