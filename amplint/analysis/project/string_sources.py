"""The string literals that can reach an expression (issue 26), for the lookups by name
(registry_classes.py), read with `ast` from the file's own text:

- a string literal;
- a key read from a dict literal: `CONFIG["model"]["type"]`, `params.pop("type")`,
  `params.get("type")` with `params = dict(CONFIG["model"])` (also `X.copy()`,
  `copy.deepcopy(X)`), `CONFIG` a module-level dict literal;
- a name bound once (in the function, else at module level) to one of these;
- a parameter of a module-level function every call site gives a literal (string_params.py);
- a configured value: `args.arch` (the argparse option `--arch` of the project: its `choices=`,
  else its literal `default=`, the script's own parser first), `cfg.MODEL.NAME` and
  `config["model"]["name"]` with `config = yaml.safe_load(...)` (every literal the project's
  YAMLs and yacs / ml_collections assignments give under that key path of two keys or more,
  string_classes.StringConfigs.scalars).

Exact or nothing: None where a step is anything else, where a name is bound more than once,
where a dict the key is read from is written to (`d["type"] = ...`, `d.update(...)`,
`d.setdefault(...)`, `del d[...]`) in its scope, or where the key is missing or `**`-spread."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

Literal = tuple  # (value, file, line)
_COPIES = frozenset({"dict", "copy", "deepcopy"})
_WRITES = frozenset({"update", "setdefault", "__setitem__", "clear"})
_MAX_STEPS = 8


def function_node(tree: ast.Module, key: str):
    """The def of function key `key` ("main", "Cls.method"; "" is the module)."""
    node = tree
    for part in key.split(".") if key else ():
        found = [n for n in getattr(node, "body", ())
                 if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and n.name == part]
        if len(found) != 1:
            return None
        node = found[0]
    return node


def call_in(scope, method: str) -> Optional[ast.Call]:
    """The one call `X.method(...)` or `method(...)` in `scope` (a def, or the module without
    its defs)."""
    if scope is None:
        return None
    found = [node for node in _walk(scope) if type(node) is ast.Call and (
        type(node.func) is ast.Attribute and node.func.attr == method
        or type(node.func) is ast.Name and node.func.id == method)]
    return found[0] if len(found) == 1 else None


def string_values(strings, path: str, key: str, expr) -> Optional[Tuple[List[Literal], bool]]:
    """(value, file, line) of every literal that can reach `expr` (in function `key` of `path`),
    and whether some come from a configuration (which of several runs, no file decides);
    `strings`: the class flow's string_classes.StringConfigs."""
    tree = strings.params._tree(path)
    scope = function_node(tree, key) if tree is not None else None
    if scope is None:
        return None
    reader = _Reader(strings, path, key, tree, scope)
    found = reader.strings(expr, 0)
    return (found, reader.configured) if found else None


_LOADERS = frozenset({("yaml", "safe_load"), ("yaml", "load"), ("yaml", "full_load"), ("json", "load"),
                      ("OmegaConf", "load")})


class _Reader:
    def __init__(self, strings, path: str, key: str, tree: ast.Module, scope) -> None:
        self.strings_, self.params = strings, strings.params
        self.path, self.key, self.tree, self.scope = path, key, tree, scope
        self.configured = False

    def strings(self, expr, steps: int) -> Optional[List[Literal]]:
        if steps > _MAX_STEPS:
            return None
        if type(expr) is ast.Constant and type(expr.value) is str:
            return [(expr.value, self.path, expr.lineno)]
        if type(expr) is ast.Name:
            bound = self._bound(expr.id)
            if bound == "param":
                if self.scope is self.tree or "." in self.key:
                    return None
                return self.params.literals(self.path, self.key, expr.id)
            return self.strings(bound[0], steps + 1) if bound is not None else None
        item = _item(expr)
        if item is not None:
            mapping = self.mapping(item[0], steps + 1)
            if mapping is None:
                return self._configured(expr)
            value = _value_of(mapping, item[1])
            return self.strings(value, steps + 1) if value is not None else None
        if type(expr) is ast.Attribute:
            return self._configured(expr)
        return None

    def _configured(self, expr) -> Optional[List[Literal]]:
        """`args.arch` (argparse), `cfg.MODEL.NAME`, `config["model"]["name"]` of a loaded YAML."""
        keys: List[str] = []
        loaded = False
        while True:
            item = _item(expr)
            if item is not None:
                keys.append(item[1])
                expr = item[0]
            elif type(expr) is ast.Attribute:
                keys.append(expr.attr)
                expr = expr.value
            else:
                break
        if type(expr) is not ast.Name:
            return None
        bound = self._bound(expr.id)
        if bound is not None and bound != "param":
            func = bound[0].func if type(bound[0]) is ast.Call else None
            loaded = (type(func) is ast.Attribute and type(func.value) is ast.Name
                      and (func.value.id, func.attr) in _LOADERS)
            if not loaded and not _parsed(bound[0]):
                return None  # a dict literal or another value: not a config the project's files give
        keys.reverse()
        self.configured = True
        if len(keys) == 1 and not loaded:
            if bound is None and expr.id in _imported(self.tree):
                return None  # an attribute of a module
            return argparse_values(self.strings_.p, self.params, self.path, keys[0])
        if len(keys) < 2:
            return None
        return list(self.strings_.scalars(tuple(keys))) or None

    def mapping(self, expr, steps: int) -> Optional[ast.Dict]:
        """The dict literal `expr` holds (a copy of it, or a key of it holding one)."""
        if steps > _MAX_STEPS:
            return None
        if type(expr) is ast.Dict:
            return expr
        if type(expr) is ast.Name:
            bound = self._bound(expr.id)
            if bound is None or bound == "param" or _written(bound[1], expr.id):
                return None
            return self.mapping(bound[0], steps + 1)
        if type(expr) is ast.Call and len(expr.args) == 1 and not expr.keywords:
            name = expr.func.id if type(expr.func) is ast.Name else (
                expr.func.attr if type(expr.func) is ast.Attribute and type(expr.func.value) is ast.Name
                and expr.func.value.id == "copy" else None)
            if name in _COPIES:
                return self.mapping(expr.args[0], steps + 1)
        if (type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "copy"
                and not expr.args and not expr.keywords):
            return self.mapping(expr.func.value, steps + 1)
        item = _item(expr)
        if item is not None:
            mapping = self.mapping(item[0], steps + 1)
            value = _value_of(mapping, item[1]) if mapping is not None else None
            return self.mapping(value, steps + 1) if value is not None else None
        return None

    def _bound(self, name: str):
        """("param") for a parameter of the scope, (value, scope) of the name's one binding in
        the scope, else at module level; None where it is bound otherwise or more than once."""
        if self.scope is not self.tree:
            args = self.scope.args
            if any(a.arg == name for a in args.posonlyargs + args.args + args.kwonlyargs):
                return "param"
            found = _bindings(self.scope, name)
            if found:
                return (found[0], self.scope) if len(found) == 1 and found[0] is not None else None
        found = _bindings(self.tree, name)
        return (found[0], self.tree) if len(found) == 1 and found[0] is not None else None


def argparse_values(project, params, path: str, dest: str) -> Optional[List[Literal]]:
    """The values an argparse option with destination `dest` takes: its literal `choices=`,
    else its literal `default=` (the option of the script's own parser, else of any parser of
    the project); None where an option gives neither."""
    flag = "--" + dest
    found = []
    for where in [path] + [p for p in project.python if p != path]:
        text = project.files[where]
        if "add_argument" not in text or not ("--" + dest.replace("_", "-") in text or flag in text):
            continue
        tree = params._tree(where)
        for node in (ast.walk(tree) if tree is not None else ()):
            if (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "add_argument"
                    and _option_dest(node) == dest):
                values = _option_values(node, where)
                if values is None:
                    return None
                found.extend(values)
        if found and where == path:
            break
    return found or None


def _option_dest(call: ast.Call) -> Optional[str]:
    for keyword in call.keywords:
        if keyword.arg == "dest":
            return keyword.value.value if type(keyword.value) is ast.Constant else None
    for arg in call.args:
        if type(arg) is ast.Constant and type(arg.value) is str and arg.value.startswith("--"):
            return arg.value[2:].replace("-", "_")
    return None


def _option_values(call: ast.Call, path: str) -> Optional[List[Literal]]:
    given = {keyword.arg: keyword.value for keyword in call.keywords}
    choices = given.get("choices")
    if choices is not None:
        if type(choices) not in (ast.List, ast.Tuple, ast.Set) or not all(
                type(e) is ast.Constant and type(e.value) is str for e in choices.elts):
            return None
        return [(e.value, path, e.lineno) for e in choices.elts]
    default = given.get("default")
    if type(default) is ast.Constant and type(default.value) is str and given.get("nargs") is None:
        return [(default.value, path, default.lineno)]
    return None


def _parsed(value) -> bool:
    """`parser.parse_args()` (its attributes are the options)."""
    return (type(value) is ast.Call and type(value.func) is ast.Attribute
            and value.func.attr in ("parse_args", "parse_known_args"))


def _imported(tree: ast.Module) -> set:
    names = set()
    for node in tree.body:
        if type(node) in (ast.Import, ast.ImportFrom):
            names.update((a.asname or a.name.split(".")[0]) for a in node.names)
    return names


def _item(expr):
    """(the mapping, the key) of `m["k"]`, `m.pop("k")`, `m.get("k")`."""
    if type(expr) is ast.Subscript and type(expr.ctx) is ast.Load:
        key = expr.slice
        if type(key) is ast.Constant and type(key.value) is str:
            return expr.value, key.value
    if (type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in ("pop", "get")
            and len(expr.args) == 1 and not expr.keywords and type(expr.args[0]) is ast.Constant
            and type(expr.args[0].value) is str):
        return expr.func.value, expr.args[0].value
    return None


def _value_of(mapping: ast.Dict, key: str):
    found = None
    for k, v in zip(mapping.keys, mapping.values):
        if k is None:
            return None  # `**other`: the key may come from there
        if type(k) is ast.Constant and k.value == key:
            found = v
    return found


def _walk(scope):
    """The nodes of a def's body, or of a module outside its defs and classes' methods."""
    stack = list(scope.body)
    while stack:
        node = stack.pop()
        if scope_is_module(scope) and type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def scope_is_module(scope) -> bool:
    return type(scope) is ast.Module


def _bindings(scope, name: str) -> list:
    """The values `name` is assigned in the scope (None for a binding other than a plain
    `name = value`: a loop target, an augmented assignment, an import, a def)."""
    found = []
    for node in _walk(scope):
        if type(node) is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name and target.id == name:
                    found.append(node.value if len(node.targets) == 1 else None)
                elif type(target) in (ast.Tuple, ast.List) and any(
                        type(n) is ast.Name and n.id == name for n in ast.walk(target)):
                    found.append(None)
        elif type(node) in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.NamedExpr):
            targets = [node.target] if hasattr(node, "target") else [i.optional_vars for i in node.items]
            if any(t is not None and any(type(n) is ast.Name and n.id == name for n in ast.walk(t)) for t in targets):
                found.append(node.value if type(node) is ast.AnnAssign and node.value is not None else None)
        elif type(node) in (ast.Import, ast.ImportFrom):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                found.append(None)
        elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and node.name == name:
            found.append(None)
        elif type(node) in (ast.Global, ast.Nonlocal) and name in node.names:
            found.append(None)
    return found


def _written(scope, name: str) -> bool:
    """Is the dict `name` written to in the scope (a key stored or deleted, a mutating method)?
    `pop` reads the key it is asked for: a later read of that key in the same scope would see
    it gone, which the reader does not model, so a second `pop` counts as a write."""
    pops = 0
    # a module-level dict may be written to by any function of its file
    for node in (ast.walk(scope) if scope_is_module(scope) else _walk(scope)):
        if type(node) is ast.Subscript and type(node.ctx) is not ast.Load and _is_name(_base(node), name):
            return True
        if type(node) is ast.Call and type(node.func) is ast.Attribute and _is_name(_base(node.func.value), name):
            if node.func.attr in _WRITES:
                return True
            pops += node.func.attr in ("pop", "popitem")
    return pops > 1


def _base(node):
    while type(node) is ast.Subscript:
        node = node.value
    return node


def _is_name(node, name: str) -> bool:
    return type(node) is ast.Name and node.id == name
