"""Project classes registered under a literal name by a register decorator, for a config that
selects a class by that name (issue 26): threestudio's

    @threestudio.register("dreamfusion-system")
    class DreamFusion(BaseLift3DSystem): ...

with `system_type: "dreamfusion-system"` beside `trainer: precision: 16-mixed` in the YAML that
`launch.py` reads (`threestudio.find(cfg.system_type)(cfg.system)`, `Trainer(**cfg.trainer)`).

A decorator counts when it is a call whose callee's last name holds `register`
(`X.register("n")`, `register("n")`, `register_model(name="n")`) and whose first argument (or
`name=`) is the string literal. A name registered to two classes of the project names neither.
Text first: the project's texts are searched once for register calls given a literal name; only
the files that give one of the names asked for are parsed (with `ast`, once, through the string
configs' parser)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, List, Set, Tuple

# `register("name")`, `X.register_model(name='name')`: a literal name given to a register call
_REGISTER_TEXT = re.compile(r"""register\w*\(\s*(?:name\s*=\s*)?["']([^"'\n]+)["']""")


def registered_classes(project, names: Iterable[str]) -> Dict[str, Tuple[str, str]]:
    """name -> (file, class) of the module-level classes registered under each of `names`."""
    index = _name_index(project)
    wanted = {name for name in names if name in index}
    found: Dict[str, Set[Tuple[str, str]]] = {}
    trees = project.flow.strings.params
    for path in sorted({path for name in wanted for path in index[name]}):
        tree = trees._tree(path)
        for node in (tree.body if tree is not None else ()):
            if type(node) is not ast.ClassDef:
                continue
            for name in _decorator_names(node.decorator_list):
                if name in wanted:
                    found.setdefault(name, set()).add((path, node.name))
    return {name: next(iter(targets)) for name, targets in found.items() if len(targets) == 1}


def _name_index(project) -> Dict[str, List[str]]:
    """Text first, once per project: literal name -> the Python files whose text calls a
    `...register...("name")` (the files to parse for that name)."""
    index = project.__dict__.get("_register_name_index")
    if index is None:
        index = {}
        for path in project.python:
            text = project.files[path]
            if "register" in text:
                for name in set(_REGISTER_TEXT.findall(text)):
                    index.setdefault(name, []).append(path)
        project.__dict__["_register_name_index"] = index
    return index


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
