"""Registry classes keyed by strings (issue 26), for the class flow (classvalues.py): a project
class whose classmethod `register(name)` stores a class under `name` and whose lookup classmethod
(`by_name(name)`, `get(name)`, any name) returns what is stored under its argument, as allenai/
allennlp's `Registrable`:

    @Model.register("basic_classifier")          # or Model.register("basic_classifier", Cls)
    class BasicClassifier(Model): ...
    model_class = Model.by_name(params.pop("type"))

The lookup makes the classes registered through that same class under the names that reach its
argument, and only where every such name is known exactly (string_sources.py): a literal, a key
of a dict literal the argument is read from (`params = dict(CONFIG["model"])`), a module-level
function's parameter every call site gives a literal. Otherwise, or where a name has no
registration, the call holds an `("unnamed", call, why)` value for --show-regions.

Shape first, text next: the class must define both methods (`register` storing `X[name] = ...`,
the lookup returning `X[...][param]`), and only the files whose text holds `<Class>.register(`
are parsed for registrations."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.string_sources import call_in, function_node, string_values

MAX_NAMED = 4


def registry_lookup(cv, path: str, key: str, thing: tuple, cite: str) -> Optional[Things]:
    """What a call of `thing` (a classmethod held as ("cfunc", file, "Base.by_name", file, Cls))
    in function `key` of `path` makes when it is a registry class's lookup; else None."""
    if thing[0] != "cfunc":
        return None
    fpath, fkey, cpath, cls = thing[1], thing[2], thing[3], thing[4]
    params = cv.strings.params
    owner, _, method = fkey.rpartition(".")
    if not owner or "." in owner or not _is_registry(params._tree(fpath), owner, method):
        return None
    text = f"{cls}.{method}(...)"
    tree = params._tree(path)
    call = call_in(function_node(tree, key), method) if tree is not None else None
    if call is None or len(call.args) != 1 or call.keywords:
        return {("unnamed", text, f"`{cls}.{method}` is a registry lookup whose call could not be read"): Hold(cite)}
    names = string_values(cv.p, params, path, key, call.args[0])
    if names is None:
        return {("unnamed", text, f"it is looked up in the registry of `{cls}` by a name whose values "
                 "are not all literals of the project"): Hold(cite)}
    registered = _registered(cv, cpath, cls)
    out: Things = {}
    missing = []
    for value, vpath, line in names:
        hit = registered.get(value)
        if hit is None:
            missing.append(value)
            continue
        out.setdefault(("class", hit[0], hit[1]), Hold(f"{cls}.{method}({value!r}) at {cv.p.display(vpath)}:{line}"))
    if missing or not out or len(out) > MAX_NAMED:
        why = (f"the names {', '.join(sorted(set(missing))[:3])} given to `{cls}.{method}` have no class "
               f"registered with `{cls}.register`" if missing or not out else
               f"{len(out)} registered classes reach `{cls}.{method}`")
        return {("unnamed", text, why): Hold(cite)}
    return out


def _is_registry(tree: Optional[ast.Module], owner: str, method: str) -> bool:
    """Class `owner` defines classmethods `register` (storing `X[name] = ...`, in its body or a
    function nested in it) and `method` (returning `X...[param]`)."""
    found = [node for node in (tree.body if tree is not None else ()) if type(node) is ast.ClassDef and node.name == owner]
    if len(found) != 1 or method == "register":
        return False
    methods = {node.name: node for node in found[0].body if type(node) is ast.FunctionDef and _classmethod(node)}
    register, lookup = methods.get("register"), methods.get(method)
    if register is None or lookup is None or len(register.args.args) < 2 or len(lookup.args.args) != 2:
        return False
    name = register.args.args[1].arg
    stores = any(type(target) is ast.Subscript and _keyed_by(target, name)
                 for node in ast.walk(register) if type(node) is ast.Assign for target in node.targets)
    param = lookup.args.args[1].arg
    returns = [node.value for node in ast.walk(lookup) if type(node) is ast.Return and node.value is not None]
    return stores and bool(returns) and all(type(value) is ast.Subscript and _keyed_by(value, param) for value in returns)


def _classmethod(node: ast.FunctionDef) -> bool:
    return any(type(dec) is ast.Name and dec.id == "classmethod" for dec in node.decorator_list)


def _keyed_by(node: ast.Subscript, name: str) -> bool:
    return type(node.slice) is ast.Name and node.slice.id == name


def _registered(cv, cpath: str, cls: str) -> Dict[str, Tuple[str, str]]:
    """name -> (file, class) of every `@Cls.register("name")` on a module-level class and every
    module-level `Cls.register("name", Other, ...)` of the project, where `Cls` resolves to the
    class `cls` of `cpath`. A name registered twice (to two classes) is left out."""
    memo = cv.__dict__.setdefault("_registry_classes", {})
    if (cpath, cls) in memo:
        return memo[(cpath, cls)]
    found: Dict[str, List[Tuple[str, str]]] = {}
    word = f"{cls}.register("
    for path in cv.p.python:
        if word not in cv.p.files[path]:
            continue
        tree = cv.strings.params._tree(path)
        for node in (tree.body if tree is not None else ()):
            for call, registered in _registrations(node):
                name = call.args[0].value
                if _ref(cv.p, path, call.func.value) == (cpath, cls):
                    target = _ref(cv.p, path, registered)
                    if target is not None:
                        found.setdefault(name, []).append(target)
    out = {name: targets[0] for name, targets in found.items() if len(set(targets)) == 1}
    memo[(cpath, cls)] = out
    return out


def _registrations(node):
    """(the `X.register("name", ...)` call, the class expression it registers) in one
    module-level statement."""
    if type(node) is ast.ClassDef:
        for dec in node.decorator_list:
            if _register_call(dec) and len(dec.args) == 1:
                yield dec, ast.Name(id=node.name, ctx=ast.Load())
    elif type(node) is ast.Expr and _register_call(node.value) and len(node.value.args) >= 2:
        yield node.value, node.value.args[1]  # `Registry.register("linear", LinearAttention)`
    elif (type(node) is ast.Expr and type(node.value) is ast.Call and _register_call(node.value.func)
          and len(node.value.func.args) == 1 and len(node.value.args) == 1 and not node.value.keywords):
        yield node.value.func, node.value.args[0]  # `Model.register("name")(Net)`


def _register_call(node) -> bool:
    return (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "register"
            and bool(node.args) and type(node.args[0]) is ast.Constant and type(node.args[0].value) is str)


def _ref(project, path: str, expr) -> Optional[Tuple[str, str]]:
    """(file, class) a (dotted) name of `path` resolves to, or None."""
    parts: List[str] = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    dotted = [expr.id] + list(reversed(parts))
    summary = project.summary(path)
    if summary is None:
        return None
    if dotted[0] in summary.imports:
        found = project.resolve_ref(path, ".".join([summary.imports[dotted[0]]] + dotted[1:]))
    elif len(dotted) == 1 and dotted[0] in summary.classes:
        found = (path, (dotted[0],))
    else:
        return None
    if found is None or len(found[1]) != 1:
        return None
    target = project.summary(found[0])
    return (found[0], found[1][0]) if target is not None and found[1][0] in target.classes else None
