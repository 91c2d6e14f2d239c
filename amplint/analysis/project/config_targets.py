"""Classes a config's dotted-path string names, built by a project import helper (issue 26):
the `instantiate_from_config(config)` of CompVis/taming-transformers, latent-diffusion and
Stability-AI/generative-models, whose body returns `get_obj_from_str(config["target"])(...)`,
and whose `get_obj_from_str(string)` returns `getattr(importlib.import_module(module), cls)`.

`instantiate_from_config(lossconfig)` in `Net.__init__`, `lossconfig` a parameter of it, makes
the class named under `params: lossconfig: target:` of the project's YAML mappings whose own
`target:` names `Net` (the script builds Net from that mapping, passing its `params:` as
keyword arguments). Exact or nothing: every such string must name one project class, all the
same one; no Python code of the project may call Net itself (the strings it passes would be out
of sight); any other argument is left to the rest of the class flow."""

from __future__ import annotations

import ast
import re
from typing import Optional

from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.frameworks import yaml_keys
from amplint.analysis.project.string_classes import Node, first_arg_text, several
from amplint.analysis.project.string_sources import function_node

PARAMS = "params"


def config_target_call(cv, path: str, key: str, thing: tuple, text: str, cite: str) -> Optional[Things]:
    """What the call `text` (in function `key` of `path`) of the project function `thing` makes,
    when that function instantiates a config's target string and the argument is a parameter
    of the enclosing `__init__` that the project's YAMLs give; else None."""
    if thing[0] != "func" or not key.endswith(".__init__") or key.count(".") != 1:
        return None
    arg = first_arg_text(text)
    if arg is None or "." in arg:
        return None
    flow = cv._flow(path)
    function = flow.functions.get(key) if flow is not None else None
    if function is None or arg not in function.params or arg in function.assigns:
        return None
    target_key = _instantiator(cv, thing[1], thing[2])
    if target_key is None:
        return None
    cls = key.split(".")[0]
    if _called_in_python(cv.p, cls):
        return None
    out: Things = {}
    for node in _yaml_targets(cv, target_key, path, cls, arg):
        hit = cv.strings._resolve(node)
        where = f"{arg}: {target_key}: {node.target} at {cv.p.display(node.path)}:{node.line}"
        if hit is None:
            return None  # a string that names no project class: what it builds is out of sight
        out.setdefault(("inst", hit[0], hit[1]), Hold(f"{cite} ({where})"))
    if len(out) > 1:
        names = sorted(thing[2] for thing in out)
        return {("unnamed", text, several(names, f"the configs give `{arg}`")): Hold(cite)}
    return out or None


def _yaml_targets(cv, target_key: str, path: str, cls: str, arg: str):
    """Nodes for the strings under `params: <arg>: <target_key>:` of the YAML mappings whose
    `<target_key>:` names class `cls` of `path`."""
    memo = cv.__dict__.setdefault("_config_target_keys", {})
    found = []
    for ypath in sorted(cv.p.files):
        if not ypath.endswith((".yaml", ".yml")) or target_key + ":" not in cv.p.files[ypath]:
            continue
        entries = memo.get((ypath, target_key))
        if entries is None:
            entries = memo[(ypath, target_key)] = {
                keys[:-1]: (value, line) for keys, value, line in yaml_keys(cv.p.files[ypath])
                if keys[-1] == target_key}
        for mapping, (value, line) in entries.items():
            owner = cv.strings._resolve(Node(ypath, line, mapping, value, target_key))
            child = entries.get(mapping + (PARAMS, arg))
            if owner == (path, cls) and child is not None:
                found.append(Node(ypath, child[1], mapping + (PARAMS, arg), child[0], target_key))
    return found


def _instantiator(cv, fpath: str, fkey: str) -> Optional[str]:
    """The key `K` when module-level function `fkey` of `fpath` returns `helper(config[K])(...)`
    on every path that returns a value (`return None` aside), `config` its first parameter and
    `helper` an import helper of the same module (`_import_helper`)."""
    memo = cv.__dict__.setdefault("_config_instantiators", {})
    if (fpath, fkey) in memo:
        return memo[(fpath, fkey)]
    memo[(fpath, fkey)] = None
    tree = cv.strings.params._tree(fpath)
    node = function_node(tree, fkey) if tree is not None and "." not in fkey else None
    if type(node) is not ast.FunctionDef or not node.args.args:
        return None
    param = node.args.args[0].arg
    keys = set()
    for ret in _returns(node):
        value = ret.value
        if value is None or type(value) is ast.Constant and value.value is None:
            continue
        inner = value.func if type(value) is ast.Call else None
        if (type(inner) is not ast.Call or type(inner.func) is not ast.Name or len(inner.args) != 1
                or inner.keywords or not _keyed(inner.args[0], param)
                or not _import_helper(function_node(tree, inner.func.id))):
            return None
        keys.add(inner.args[0].slice.value)
    found = keys.pop() if len(keys) == 1 else None
    memo[(fpath, fkey)] = found
    return found


def _keyed(node, name: str) -> bool:
    """`name["target"]`."""
    return (type(node) is ast.Subscript and type(node.value) is ast.Name and node.value.id == name
            and type(node.slice) is ast.Constant and type(node.slice.value) is str)


def _import_helper(node) -> bool:
    """A function of one string parameter whose every returned value is
    `getattr(importlib.import_module(...), ...)`."""
    if type(node) is not ast.FunctionDef or not node.args.args:
        return False
    returns = [ret.value for ret in _returns(node)]
    return bool(returns) and all(
        type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "getattr"
        and len(value.args) == 2 and type(value.args[0]) is ast.Call
        and _dotted(value.args[0].func) in ("importlib.import_module", "import_module")
        for value in returns)


def _returns(node):
    """The return statements of a def, not of the defs nested in it."""
    todo = list(node.body)
    while todo:
        item = todo.pop()
        if type(item) is ast.Return:
            yield item
        elif type(item) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            todo.extend(child for child in ast.iter_child_nodes(item)
                        if isinstance(child, (ast.stmt, ast.excepthandler)))


def _dotted(node) -> Optional[str]:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _called_in_python(project, cls: str) -> bool:
    """Whether a Python file of the project calls something named `cls` (or `cls.from_...`)."""
    pattern = re.compile(r"\b%s\s*\(" % re.escape(cls))
    definition = "class " + cls
    for path in project.python:
        text = project.files[path]
        if cls in text and any(not text[max(0, m.start() - 6):m.start() + len(cls)].startswith(definition)
                               for m in pattern.finditer(text)):
            return True
    return False
