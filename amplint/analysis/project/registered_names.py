"""Project classes registered under a literal name by a register decorator, for a config that
selects a class by that name (issue 26): threestudio's

    @threestudio.register("dreamfusion-system")
    class DreamFusion(BaseLift3DSystem): ...

with `system_type: "dreamfusion-system"` beside `trainer: precision: 16-mixed` in the YAML that
`launch.py` reads (`threestudio.find(cfg.system_type)(cfg.system)`, `Trainer(**cfg.trainer)`).

A decorator counts when it is a call whose callee's last name holds `register`
(`X.register("n")`, `register("n")`, `register_model(name="n")`) and whose first argument (or
`name=`) is the string literal. A name registered to two classes of the project names neither.
Text first: only the Python files whose text holds `register` and the name in quotes are parsed
(with `ast`, once, through the string configs' parser)."""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Set, Tuple


def registered_classes(project, names: Iterable[str]) -> Dict[str, Tuple[str, str]]:
    """name -> (file, class) of the module-level classes registered under each of `names`."""
    wanted = {name for name in names if name}
    if not wanted:
        return {}
    memo = project.__dict__.setdefault("_registered_names", {})
    key = frozenset(wanted)
    if key in memo:
        return memo[key]
    found: Dict[str, Set[Tuple[str, str]]] = {}
    trees = project.flow.strings.params
    for path in project.python:
        text = project.files[path]
        if "register" not in text or not any(_quoted(name, text) for name in wanted):
            continue
        tree = trees._tree(path)
        for node in (tree.body if tree is not None else ()):
            if type(node) is not ast.ClassDef:
                continue
            for name in _decorator_names(node.decorator_list):
                if name in wanted:
                    found.setdefault(name, set()).add((path, node.name))
    out = {name: next(iter(targets)) for name, targets in found.items() if len(targets) == 1}
    memo[key] = out
    return out


def _quoted(name: str, text: str) -> bool:
    return f'"{name}"' in text or f"'{name}'" in text


def _decorator_names(decorators: List[ast.expr]) -> List[str]:
    out = []
    for dec in decorators:
        if type(dec) is not ast.Call or not _register_callee(dec.func):
            continue
        first = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "name"), None)
        if type(first) is ast.Constant and type(first.value) is str:
            out.append(first.value)
    return out


def _register_callee(func: ast.expr) -> bool:
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
    return "register" in name
