"""Registry classes keyed by strings (issue 26), for the class flow (classvalues.py): a project
class whose classmethod `register(name)` stores a class under `name` and whose lookup classmethod
(`by_name(name)`, `get(name)`, any name) returns what is stored under its argument, as allenai/
allennlp's `Registrable`:

    @Model.register("basic_classifier")          # or Model.register("basic_classifier", Cls)
    class BasicClassifier(Model): ...
    model_class = Model.by_name(params.pop("type"))

The lookup makes the classes registered through that same class under the names that reach its
argument, where every such name is known exactly (string_sources.py): a literal, a key of a dict
literal the argument is read from (`params = dict(CONFIG["model"])`), a module-level function's
parameter every call site gives a literal. A key no literal fixes (`self.attention_type`,
`input()`), or several names the configs give, stands for the SET of the classes registered in
the linted tree (those the configs name, when they do): each is held with a cite that says so and
names the key's value that selects it (`_KeySet`), up to MAX_SET classes. A literal name with no
registration, or a larger set, holds an `("unnamed", call, why)` value for --show-regions.

Shape first, text next: the class must define both methods (`register` storing `X[name] = ...`,
the lookup returning `X[...][param]`), and only the files whose text holds `<Class>.register(`
are parsed for registrations."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project.flowindex import SET_WORDS, Hold, Things
from amplint.analysis.project.string_classes import MAX_SET, several
from amplint.analysis.project.string_sources import call_in, function_node, string_values

MAX_NAMED = 4


def registry_lookup(cv, path: str, key: str, thing: tuple, cite: str) -> Optional[Things]:
    """What a call of `thing` in function `key` of `path` makes when it is a registry's lookup
    by name: a registry class's classmethod (("cfunc", file, "Base.by_name", file, Cls)) or a
    module-level getter function (("func", file, "get_model")); else None."""
    params = cv.strings.params
    if thing[0] not in ("cfunc", "func"):
        return None
    shapes = cv.__dict__.setdefault("_registry_shapes", {})  # (file, function key) -> its shape
    if (thing[1], thing[2]) not in shapes:
        # text first: a registry's file defines a register function and returns the lookup's item
        registry_text = _may_register(cv.p.files.get(thing[1], ""))
        shapes[(thing[1], thing[2])] = _shape(params._tree(thing[1]), thing[2]) if registry_text else None
    shape = shapes[(thing[1], thing[2])]
    if shape is None:
        return None
    if thing[0] == "cfunc":
        method, cpath, cls = thing[2].rpartition(".")[2], thing[3], thing[4]
        registry, shown, how = ("class", cpath, cls), f"{cls}.{method}", f"`{cls}.register`"
    elif thing[0] == "func" and shape:
        method, registers = thing[2], shape
        registry, shown, how = ("func", thing[1], registers), method, f"`{registers[0]}`"
    else:
        return None
    text = f"{shown}(...)"
    tree = params._tree(path)
    call = call_in(function_node(tree, key), method) if tree is not None else None
    if call is None or len(call.args) != 1 or call.keywords:
        return {("unnamed", text, f"`{shown}` is a registry lookup whose call could not be read"): Hold(cite)}
    found = string_values(cv.strings, path, key, call.args[0])
    registered = _registered(cv, registry)
    keyed = _KeySet(cv, path, call, shown, how, len(registered))
    if found is None:
        # a key no literal fixes: any class registered in the tree may be the one (team rule,
        # issue 26): the set, each class cited with the key that selects it
        return keyed.every(registered) or {("unnamed", text, f"it is looked up in the registry of `{shown}` "
                                                          "by a name whose values are not all literals of the "
                                                          "project"): Hold(cite)}
    names, configured = found
    out: Things = {}
    missing = []
    for value, vpath, line in names:
        hit = registered.get(value)
        if hit is None:
            missing.append(value)
            continue
        out.setdefault(("class", hit[0], hit[1]), Hold(f"{shown}({value!r}) at {cv.p.display(vpath)}:{line}"))
    if missing or not out:
        why = (f"the names {', '.join(sorted(set(missing))[:3])} given to `{shown}` have no class "
               f"registered with {how}")
        return {("unnamed", text, why): Hold(cite)}
    if len(out) > MAX_NAMED or configured and len(out) > 1:
        # several configured names, none decided by a file: the set of the classes they name
        chosen = {value: registered[value] for value, _, _ in names}
        return keyed.every(chosen, configured) or {("unnamed", text, several(sorted(thing[2] for thing in out),
                                                                 f"the configs give `{shown}` names of")): Hold(cite)}
    return out


class _KeySet:
    """The classes a lookup by a key no literal fixes may make, each held with a cite that says
    so and names the key that selects it: "AttentionRegistry.spec(self.attention_type) at
    builders.py:9, one of the 2 classes registered with `AttentionRegistry.register`, when
    `self.attention_type` is 'full'". Bounded like a registry build (MAX_SET): a larger set is
    left `unnamed`."""

    def __init__(self, cv, path: str, call, shown: str, how: str, size: int) -> None:
        self.key = ast.unparse(call.args[0])
        self.head = f"{shown}({self.key}) at {cv.p.display(path)}:{call.lineno}"
        self.how, self.size = how, size

    def every(self, classes: Dict[str, Tuple[str, str]], configured: bool = False) -> Things:
        if not classes or len(classes) > MAX_SET:
            return {}
        among = (f"the {len(classes)} classes the configs name of those registered with {self.how}"
                 if configured else f"the {self.size} classes registered with {self.how}")
        return {("class", target[0], target[1]): Hold(
                    f"{self.head}, one of {among}{SET_WORDS}{self.key}` is {name!r}")
                for name, target in sorted(classes.items())}


# each led by its literal (a pattern led by `\b` or `^` is tried at every position: ~20x and ~4x
# the CPU on the mixed monorepo tree's texts); the word boundary and the line's indent are
# tested at each match (`_led_search`)
_REGISTER_DEF = re.compile(r"def\s+\w*register\w*\s*\(")


def _shape(tree, fkey: str):
    """A class registry's lookup classmethod: (); a getter of register functions: their names;
    else None."""
    owner, _, method = fkey.rpartition(".")
    if owner:
        return () if "." not in owner and _class_registry(tree, owner, method) else None
    return _function_registry(tree, method) or None


# the lookup's `return REGISTRY[name]` / `return Registrable._registry[cls][name]` (or a tuple of such)
_WORD = re.compile(r"\w")
_RETURN_ITEM = re.compile(r"return[ \t]+[\w.]+(?:\[[\w.]+\])*\[\w+\](?:[ \t]*,[^\n#]*)?[ \t]*(?:#.*)?$", re.M)


def _may_register(text: str) -> bool:
    r"""`"register" in text` and `\bdef\s+\w*register\w*\s*\(` and the lookup's
    `^[ \t]*return ...` (re.M) each find a match."""
    return ("register" in text and _led_search(_REGISTER_DEF, text, _after_word_break)
            and _led_search(_RETURN_ITEM, text, _line_indent))


def _led_search(pattern: re.Pattern, text: str, fits) -> bool:
    """Whether `pattern` matches at a position `fits(text, position)` accepts (each position
    tried: a match turned down is searched again from the next character)."""
    at = 0
    while True:
        match = pattern.search(text, at)
        if match is None:
            return False
        if fits(text, match.start()):
            return True
        at = match.start() + 1


def _after_word_break(text: str, position: int) -> bool:
    return not (position and _WORD.match(text, position - 1))


def _line_indent(text: str, position: int) -> bool:
    """Only spaces and tabs between the line's start and `position`."""
    line = text.rfind("\n", 0, position) + 1
    return not text[line:position].strip(" \t")


def _class_registry(tree: Optional[ast.Module], owner: str, method: str) -> bool:
    """Class `owner` defines classmethods `register` (storing `X[name] = ...`, in its body or a
    function nested in it) and `method` (returning `X...[param]`)."""
    found = [node for node in (tree.body if tree is not None else ())
             if type(node) is ast.ClassDef and node.name == owner]
    if len(found) != 1 or method == "register":
        return False
    methods = {node.name: node for node in found[0].body if type(node) is ast.FunctionDef and _classmethod(node)}
    register, lookup = methods.get("register"), methods.get(method)
    if register is None or lookup is None or len(register.args.args) < 2 or len(lookup.args.args) != 2:
        return False
    return _stores(register, register.args.args[1].arg, None) and _returns(lookup, lookup.args.args[1].arg, None)


def _function_registry(tree: Optional[ast.Module], getter: str) -> Tuple[str, ...]:
    """The module-level functions that register into the dict the module-level function
    `getter(name)` returns `D[name]` of (`D` a module-level name; a register function takes
    the name first and stores `D[name] = ...`, in its body or a function nested in it, and is
    called `register...` / `..._register...`)."""
    defs = {node.name: node for node in (tree.body if tree is not None else ())
            if type(node) is ast.FunctionDef}
    lookup = defs.get(getter)
    if lookup is None or len(lookup.args.args) != 1 or lookup.args.vararg or lookup.args.kwarg:
        return ()
    returned = [node.value.value for node in ast.walk(lookup) if type(node) is ast.Return
                and type(node.value) is ast.Subscript and type(node.value.value) is ast.Name]
    names = {node.id for node in returned}
    if len(names) != 1 or not _returns(lookup, lookup.args.args[0].arg, names):
        return ()
    return tuple(sorted(name for name, node in defs.items() if name != getter and "register" in name
                        and node.args.args and _stores(node, node.args.args[0].arg, names)))


def _stores(function, key: str, containers) -> bool:
    return any(type(target) is ast.Subscript and _keyed_by(target, key)
               and (containers is None or type(target.value) is ast.Name and target.value.id in containers)
               for node in ast.walk(function) if type(node) is ast.Assign for target in node.targets)


def _returns(function, key: str, containers) -> bool:
    """Every return is `X...[key]`, or a tuple of such items (fast-transformers'
    `return cls._classes[key], cls._parameters[key]`: the first is the class; the unpacking
    `attention_class, names = ...` holds the classes in each name, and only a call makes one)."""
    returns = [node.value for node in ast.walk(function) if type(node) is ast.Return]
    returns = [value.elts[0] if type(value) is ast.Tuple and value.elts and all(
        type(item) is ast.Subscript and _keyed_by(item, key) for item in value.elts) else value
        for value in returns]
    return bool(returns) and all(
        type(value) is ast.Subscript and _keyed_by(value, key)
        and (containers is None or type(value.value) is ast.Name and value.value.id in containers)
        for value in returns)


def _classmethod(node: ast.FunctionDef) -> bool:
    return any(type(dec) is ast.Name and dec.id == "classmethod" for dec in node.decorator_list)


def _keyed_by(node: ast.Subscript, name: str) -> bool:
    return type(node.slice) is ast.Name and node.slice.id == name


def _registered(cv, registry: tuple, named: Optional[frozenset] = None) -> Dict[str, Tuple[str, str]]:
    """name -> (file, class) of every registration into `registry` of the project: for a
    registry class `Cls`, `@Cls.register("name")` on a module-level class and the module-level
    `Cls.register("name", Other, ...)` / `Cls.register("name")(Other)`; for register functions,
    `@register_model("name")` (or `name="name"`) and the same calls. A name registered to two
    classes is left out. Only the files whose text calls `Cls.register(` / `register_model(`
    are parsed; `named`: only the files whose text holds one of these names (the rest of the
    registrations are left out)."""
    memo = cv.__dict__.setdefault("_registry_classes", {})
    if (registry, named) in memo:
        return memo[(registry, named)]
    found: Dict[str, List[Tuple[str, str]]] = {}
    words = [f"{registry[2]}.register("] if registry[0] == "class" else [f"{name}(" for name in registry[2]]
    for path in cv.p.python:
        text = cv.p.files[path]
        if not any(word in text for word in words) or named is not None and not any(n in text for n in named):
            continue
        tree = cv.strings.params._tree(path)
        for node in (tree.body if tree is not None else ()):
            for call, name, registered in _registrations(node):
                if _into(cv.p, path, call.func, registry):
                    target = _ref(cv.p, path, registered)
                    if target is not None:
                        found.setdefault(name, []).append(target)
    out = {name: targets[0] for name, targets in found.items() if len(set(targets)) == 1}
    memo[(registry, named)] = out
    return out


def _into(project, path: str, func, registry: tuple) -> bool:
    if registry[0] == "class":
        return (type(func) is ast.Attribute and func.attr == "register"
                and _ref(project, path, func.value) == registry[1:])
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
    return name in registry[2] and _ref(project, path, func, "functions") == (registry[1], name)


def _registrations(node):
    """(the register call, the name, the class expression it registers) in one module-level
    statement: a class decorator, `R("name", Cls)`, `R("name")(Cls)`."""
    if type(node) is ast.ClassDef:
        for dec in node.decorator_list:
            name = _register_call(dec)
            if name is not None and len(dec.args) <= 1:
                yield dec, name, ast.Name(id=node.name, ctx=ast.Load())
    elif type(node) is ast.Expr and type(node.value) is ast.Call:
        call = node.value
        name = _register_call(call)
        if name is not None and len(call.args) >= 2 and type(call.args[0]) is ast.Constant:
            yield call, name, call.args[1]  # `Registry.register("linear", LinearAttention)`
        inner = _register_call(call.func)
        if inner is not None and len(call.func.args) <= 1 and len(call.args) == 1 and not call.keywords:
            yield call.func, inner, call.args[0]  # `Model.register("name")(Net)`


def _register_call(node) -> Optional[str]:
    """The literal name a call `f("name")` / `f(name="name")` gives, or None."""
    if type(node) is not ast.Call or type(node.func) not in (ast.Attribute, ast.Name):
        return None
    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
    return first.value if type(first) is ast.Constant and type(first.value) is str else None


def _ref(project, path: str, expr, kind: str = "classes") -> Optional[Tuple[str, str]]:
    """(file, class) a (dotted) name of `path` resolves to (a function for kind "functions"),
    or None."""
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
    elif len(dotted) == 1 and dotted[0] in getattr(summary, kind):
        found = (path, (dotted[0],))
    else:
        return None
    if found is None or len(found[1]) != 1:
        return None
    target = project.summary(found[0])
    return (found[0], found[1][0]) if target is not None and found[1][0] in getattr(target, kind) else None
