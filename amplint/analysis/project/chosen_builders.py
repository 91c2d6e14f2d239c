"""A builder of another project file that picks a class by a string (issue 26), delivered to the
file that imports and calls it as an `EntryReturn` of kind "chosen": facts/chosen_classes.py
then reads `build_loss("bce", reduction="mean")` there as a `torch.nn.BCELoss` instance, as it
reads the builder of its own file (pytorchvideo_trainer's module/losses.py `LOSSES` and
`build_loss(name, **kwargs)`, called by module/video_classification.py).

The callee's side, read from its text with `ast`, exact or nothing as the same-file reading:
a module-level dict bound once to a display with string keys and dotted values (imported names
resolved through the module's absolute imports, its own classes kept as "@Name"), every other
mention of it a read (`D[k]`, `k in D`, `sorted(D)`, `len(D)`); a module-level function without
decorators every `return` of which is `D[p](...)` (kind "chosen", the instance) or `D[p]`
("chosen_class", the class), `p` a parameter never rebound.

Asked only where a reader can meet the call: the callee's text names a class some rule asks
for (`BCELoss`, AMP102; `GradScaler`, the scaler facts), and the caller may run under autocast
or itself names an autocast or a scaler."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.returned_values import EntryReturn
from amplint.analysis.project.function_entries import leads_to, may_run_under_autocast
from amplint.analysis.project.return_kinds import _imported_calls
from amplint.analysis.project.text_tests import holds
from amplint.analysis.project.text_views import called_names, code_view

WANTED = ("BCELoss", "GradScaler")  # the classes whose choice a rule reads
_READERS = frozenset({"sorted", "len", "list", "tuple", "set"})
# function -> (kind, param, index, default, choices)
Builder = Tuple[str, str, int, Optional[str], Tuple[Tuple[str, str], ...]]
_MEMO: Dict[Tuple[str, int], Dict[str, Builder]] = {}


def chosen_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryReturn, ...]]:
    found: Dict[str, Tuple[EntryReturn, ...]] = {}
    held: Dict[str, bool] = {}  # a builder's file: asked by every file importing from it

    def holding(path: str) -> bool:
        if path not in held:
            held[path] = _holds_wanted(project, path)
        return held[path]

    for path in paths:
        text = project.files.get(path) or ""
        if not path.endswith(".py") or not (may_run_under_autocast(project, path)
                                            or holds(project, path, "autocast") or holds(project, path, "GradScaler")):
            continue
        entries: List[EntryReturn] = []
        for name, ref in _imported_calls(project, path, code_view(project, path), called_names(project, path)):
            if not leads_to(project, path, ref, holding, False):
                continue
            target = project.resolve_ref(path, ref)
            if target is None or len(target[1]) != 1 or target[0] == path:
                continue
            where, (attr,) = target
            builder = builders(where, project.files.get(where) or "").get(attr)
            if builder is None:
                continue
            kind, param, index, default, choices = builder
            entries.append(EntryReturn("", name, -1, f"{project.display(where)}: {attr}", kind=kind,
                                       param=param, index=index, choices=choices, key_default=default))
        if entries:
            found[path] = tuple(entries)
    return found


def _holds_wanted(project, path: str) -> bool:
    text = project.files.get(path) or ""
    return any(word in text for word in WANTED)


def builders(path: str, text: str) -> Dict[str, Builder]:
    key = (path, hash(text))
    if key not in _MEMO:
        if len(_MEMO) > 2000:
            _MEMO.clear()
        try:
            _MEMO[key] = _builders(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            _MEMO[key] = {}
    return _MEMO[key]


def _builders(tree: ast.Module) -> Dict[str, Builder]:
    dicts = _dicts(tree)
    out: Dict[str, Builder] = {}
    if not dicts:
        return out
    for node in tree.body:
        if type(node) is not ast.FunctionDef or node.decorator_list:
            continue
        shapes = set()
        for part in _own_nodes(node):
            if type(part) in (ast.Yield, ast.YieldFrom, ast.Await):
                shapes.add(None)
            elif type(part) is ast.Return:
                shapes.add(_shape(part.value, dicts))
        if len(shapes) != 1 or None in shapes:
            continue
        dict_name, param, returns_class = shapes.pop()
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        names = positional + [a.arg for a in args.kwonlyargs]
        if param not in names or any(type(n) is ast.Name and n.id in (param, dict_name) and type(n.ctx) is not ast.Load
                                     for n in ast.walk(node)):
            continue
        default = _default(args, param)
        if default is False:
            continue
        out[node.name] = ("chosen_class" if returns_class else "chosen", param,
                          positional.index(param) if param in positional else -1, default,
                          tuple(sorted(dicts[dict_name].items())))
    return out


def _default(args: ast.arguments, name: str):
    """The literal default (None: no default; False: a default that is not a string literal)."""
    positional = args.posonlyargs + args.args
    offset = len(positional) - len(args.defaults)
    pairs = [(a, args.defaults[i - offset] if i >= offset else None) for i, a in enumerate(positional)]
    pairs += list(zip(args.kwonlyargs, args.kw_defaults))
    for arg, default in pairs:
        if arg.arg == name:
            if default is None:
                return None
            return default.value if type(default) is ast.Constant and type(default.value) is str else False
    return None


def _own_nodes(function: ast.FunctionDef):
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if type(child) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
                stack.append(child)


def _shape(value, dicts):
    returns_class = type(value) is not ast.Call
    subscript = value if returns_class else value.func
    if type(subscript) is not ast.Subscript or type(subscript.value) is not ast.Name \
            or subscript.value.id not in dicts or type(subscript.slice) is not ast.Name:
        return None
    return subscript.value.id, subscript.slice.id, returns_class


def _dicts(tree: ast.Module) -> Dict[str, Dict[str, str]]:
    imports: Dict[str, str] = {}
    classes = set()
    shapes: Dict[str, Dict[str, str]] = {}
    bound: Dict[str, int] = {}
    for node in tree.body:
        if type(node) is ast.Import:
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    imports[root] = root
        elif type(node) is ast.ImportFrom and node.level == 0 and node.module:
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif type(node) is ast.ClassDef:
            classes.add(node.name)
    for node in ast.walk(tree):
        if type(node) in (ast.Global, ast.Nonlocal):
            return {}
        if type(node) is ast.Name and type(node.ctx) is not ast.Load:
            bound[node.id] = bound.get(node.id, 0) + 1
    for node in tree.body:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and type(node.value) is ast.Dict:
            values = _display(node.value, imports, classes)
            if values:
                shapes[node.targets[0].id] = values
    shapes = {name: values for name, values in shapes.items() if bound.get(name) == 1}
    if not shapes:
        return {}
    allowed = set()
    for node in ast.walk(tree):
        if type(node) is ast.Subscript and type(node.value) is ast.Name and type(node.ctx) is ast.Load:
            allowed.add(id(node.value))
        elif type(node) is ast.Compare and all(type(op) in (ast.In, ast.NotIn) for op in node.ops):
            allowed.update(id(c) for c in node.comparators if type(c) is ast.Name)
        elif type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in _READERS \
                and node.func.id not in bound and len(node.args) == 1 and not node.keywords:
            allowed.add(id(node.args[0]))
    for node in ast.walk(tree):
        if type(node) is ast.Name and node.id in shapes and type(node.ctx) is ast.Load and id(node) not in allowed:
            shapes.pop(node.id)
        if not shapes:
            break
    return shapes


def _display(node: ast.Dict, imports: Dict[str, str], classes) -> Optional[Dict[str, str]]:
    out: Dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if key is None or type(key) is not ast.Constant or type(key.value) is not str or key.value in out:
            return None
        parts: List[str] = []
        while type(value) is ast.Attribute:
            parts.append(value.attr)
            value = value.value
        if type(value) is not ast.Name:
            return None
        if value.id in imports:
            out[key.value] = ".".join([imports[value.id]] + list(reversed(parts)))
        elif value.id in classes and not parts:
            out[key.value] = "@" + value.id
        else:
            return None
    return out
