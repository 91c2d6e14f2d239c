"""A module-level dict that register functions fill, read by a subscript anywhere (issue 26), for
the class flow (classvalues.py): fairseq's criterions package before its `setup_registry`,

    CRITERION_REGISTRY = {}
    def register_criterion(name):
        def register_criterion_cls(cls):
            CRITERION_REGISTRY[name] = cls
            return cls
        return register_criterion_cls
    ...
    return CRITERION_REGISTRY[cfg._name].build_criterion(cfg, task)

registry_classes.py follows such a dict when a getter returns `D[name]`; here the read is the
subscript itself, `D[key]` in any function of the file that defines `D` (or of a file importing
it). The classes are those the project registers with those functions
(`@register_criterion("multilabel_bce")`, registry_classes._registered). The key as in
registry_classes: literals exactly (string_sources.py), a key no literal fixes stands for the
set of the registered classes, each cited with the key that selects it, up to MAX_SET.

Shape first: the file's text must define a `register` function and store into a subscript; the
dict must be bound once at module level to an empty dict display, and the register function must
take the key first and store `D[key] = ...` (in its body or a function nested in it). Read with
`ast` once per file."""

from __future__ import annotations

import ast
import re
from typing import Optional, Tuple

from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.registry_classes import _KeySet, _registered, _stores
from amplint.analysis.project.string_classes import MAX_SET
from amplint.analysis.project.string_sources import function_node, string_values

_REGISTER_DEF = re.compile(r"\bdef\s+\w*register\w*\s*\(")


def dict_lookup(cv, path: str, key: str, base) -> Optional[Things]:
    """What `D[k]` (in function `key` of `path`, `base` the flow value of `D`) holds when `D` is
    a register functions' dict; None when it is not one."""
    where = _dict_of(cv, path, key, base)
    if where is None:
        return None
    dpath, name = where
    registers = _register_functions(cv, dpath, name)
    if not registers:
        return None
    tree = cv.strings.params._tree(path)
    scope = function_node(tree, key) if tree is not None else None
    reads = [node for node in (ast.walk(scope) if scope is not None else ())
             if type(node) is ast.Subscript and type(node.ctx) is ast.Load and _names(node.value, name)]
    if len(reads) != 1:
        return None  # which read the value is cannot be told: nothing
    read = reads[0]
    found = string_values(cv.strings, path, key, read.slice)
    names = None if found is None else {value for value, _, _ in found[0]}
    if not _few_registrations(cv, registers, names):
        return {}  # more classes than a set stands for (MAX_SET), or none named: nothing is read
    registered = _registered(cv, ("func", dpath, registers), None if names is None else frozenset(names))
    shown, how = name, f"`{registers[0]}`"
    lookup = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[read.slice], keywords=[])
    ast.copy_location(lookup, read)
    keyed = _KeySet(cv, path, lookup, shown, how, len(registered))
    keyed.head = f"{name}[{ast.unparse(read.slice)}] at {cv.p.display(path)}:{read.lineno}"
    if found is None:
        return keyed.every(registered)
    names, configured = found
    chosen = {value: registered[value] for value, _, _ in names if value in registered}
    if len(chosen) != len({value for value, _, _ in names}):
        return {}  # a name no class is registered under: nothing is guessed
    if len(chosen) == 1 and not configured:
        (value, target), = chosen.items()
        return {("class", target[0], target[1]): Hold(f"{name}[{value!r}] at {cv.p.display(path)}:{read.lineno}")}
    return keyed.every(chosen, configured)


def _few_registrations(cv, registers: Tuple[str, ...], names) -> bool:
    """Text first (fairseq's own `MODEL_REGISTRY` has hundreds of `@register_model(...)`, each
    file of them parsed and summarised by `_registered`): with a key no literal fixes, at most
    MAX_SET registrations written in the project; with literal keys (MAX_SET at most), one
    written for each, and only the files that name them are parsed."""
    call = re.compile(r"\b(?:%s)\(\s*(?:name\s*=\s*)?['\"]([^'\"]+)['\"]" % "|".join(map(re.escape, registers)))
    seen = []
    for path in cv.p.python:
        text = cv.p.files[path]
        if any(register in text for register in registers):
            seen.extend(match.group(1) for match in call.finditer(text))
            if names is None and len(seen) > MAX_SET:
                return False
    return bool(seen) and (names is None or len(names) <= MAX_SET and names <= set(seen))


def _dict_of(cv, path: str, key: str, base) -> Optional[Tuple[str, str]]:
    if base is None:
        return None
    if base[0] == "local":
        flow = cv._flow(path)
        module = flow.functions.get("") if flow is not None else None
        function = flow.functions.get(key) if flow is not None and key else None
        if module is None or base[1] not in module.assigns or function is not None and (
                base[1] in function.assigns or base[1] in function.params):
            return None
        return path, base[1]
    if base[0] == "ref" and not base[1].startswith(("torch.", "?", "@")):
        found = cv.p.resolve_ref(path, base[1])
        if found is not None and len(found[1]) == 1:
            return found[0], found[1][0]
    return None


def _register_functions(cv, path: str, name: str) -> Tuple[str, ...]:
    memo = cv.__dict__.setdefault("_registry_dicts", {})
    if (path, name) not in memo:
        text = cv.p.files.get(path, "")
        found: Tuple[str, ...] = ()
        if "register" in text and _REGISTER_DEF.search(text) and f"{name}[" in text:
            tree = cv.strings.params._tree(path)
            body = tree.body if tree is not None else []
            bound = [node for node in body if type(node) is ast.Assign
                     and any(type(t) is ast.Name and t.id == name for t in node.targets)]
            if len(bound) == 1 and type(bound[0].value) is ast.Dict and not bound[0].value.keys:
                found = tuple(sorted(
                    node.name for node in body if type(node) is ast.FunctionDef and "register" in node.name
                    and node.args.args and _stores(node, node.args.args[0].arg, {name})))
        memo[(path, name)] = found
    return memo[(path, name)]


def _names(expr, name: str) -> bool:
    return type(expr) is ast.Name and expr.id == name or type(expr) is ast.Attribute and expr.attr == name
