"""A namespace looked up by a name that is not a literal (issue 26): `models.__dict__[args.arch]`,
`getattr(esm.pretrained, args.model_name)`, `vars(models)[name]`, `globals()[name]`, a loop over
`module.__dict__.items()`. Its value is the SET of every project class and function the namespace
can give: its own classes, functions and module-level names, the names it imports, and what its
`from .x import *` brings (`__all__` where the source declares one). That is a sound
over-approximation, not a guess: a member outside the project contributes nothing. Narrowed only
by what the code itself filters: the key's argparse `choices=` (a literal list, or a comprehension
over the namespace with `name.islower()` / `name.startswith(...)` tests, as pytorch/examples'
`model_names`). Each member is cited with the key value that selects it."""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Optional, Tuple

from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.resolve import STAR_IMPORT as _STAR, ALL_NAMES as _ALL, QUOTED_NAME as _QUOTED
from amplint.analysis.project.flowvalues import plain_local
# more members than this: named in --show-regions, not followed (a lazy `__init__` of hundreds
# of models would reach every one of them from one lookup)
MAX_MEMBERS = 40


def namespace_files(cv, path: str, key: str, base, depth: int) -> List[str]:
    """The project files whose module namespace `base` (a value written in `key` of `path`)
    is: a module reference, `globals()` (("ref", "@")), or a value holding imported modules."""
    if base == ("ref", "@"):
        return [path]
    if base[0] == "ref":
        found = cv.p.resolve_ref(path, base[1])
        return [found[0]] if found is not None and not found[1] else []
    out = []
    for thing in cv.values(path, key, base, depth):
        if thing[0] == "module":
            found = cv.p.resolve_ref(thing[2], thing[1])
            if found is not None and not found[1] and found[0] not in out:
                out.append(found[0])
    return out


def member_names(cv, where: str) -> List[str]:
    """The names module `where` binds at its top level, in a stable order: its classes and
    functions, its imports, its other globals, then what its star imports bring."""
    summary = cv.p.summary(where)
    if summary is None:
        return []
    names = list(summary.classes) + [k for k in summary.functions if "." not in k and k not in summary.classes]
    names += list(summary.imports)
    names += sorted(summary.flow.globals) if summary.flow is not None else []
    for source in _STAR.findall(cv.p.files[where]):
        found = cv.p.resolve_ref(where, source)
        if found is not None and not found[1] and found[0] != where:
            names += _exported(cv, found[0])
    seen: set = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def _exported(cv, where: str) -> List[str]:
    """What `from where import *` brings: its `__all__`, else its public top-level names."""
    declared = _ALL.search(cv.p.files[where])
    if declared is not None:
        return _QUOTED.findall(declared.group(1))
    return [n for n in member_names(cv, where) if not n.startswith("_")]


def members(cv, files: List[str], keep: Callable[[str], bool], depth: int) -> Dict[tuple, List[str]]:
    """Project class or function -> the names under which one of `files` gives it."""
    out: Dict[tuple, List[str]] = {}
    for where in files:
        for name in member_names(cv, where):
            if not keep(name):
                continue
            for thing in member_value(cv, where, name, depth):
                if thing[0] in ("class", "func") and name not in out.get(thing, ()):
                    out.setdefault(thing, []).append(name)
    return out


def as_set(found: Dict[tuple, List[str]], key_text: str, namespace: str, text: str) -> Things:
    """The members as class-flow values, each cited with the key values that select it;
    too many: one `unnamed` value that says so."""
    total = len({name for names in found.values() for name in names})
    if len(found) > MAX_MEMBERS:
        return {("unnamed", text, f"it is looked up by `{key_text}` among the {total} names of `{namespace}` "
                 f"(more than {MAX_MEMBERS} project classes and functions)"): Hold("")}
    out: Things = {}
    # factories first: where a factory and its class make the same model, the factory's name
    # is the key a user gives (`resnet18`, not `ResNet`), so it is the one cited
    for thing, names in sorted(found.items(), key=lambda item: item[0][0] != "func"):
        said = " or ".join(repr(n) for n in names[:3]) + (" ..." if len(names) > 3 else "")
        out[thing] = Hold(f"when {key_text} is {said}, {len(names)} of the {total} names of {namespace}")
    return out


def choices_filter(cv, path: str, dest: Optional[str]) -> Tuple[Callable[[str], bool], str]:
    """The names the argparse option `dest` of `path`'s parser accepts, as a test, and how
    it was read ("" where the option has no `choices=`, or it is not read)."""
    anything: Tuple[Callable[[str], bool], str] = (lambda name: True, "")
    if not dest or "add_argument" not in cv.p.files[path] or "choices" not in cv.p.files[path]:
        return anything
    tree = cv.strings.params._tree(path)
    if tree is None:
        return anything
    for node in ast.walk(tree):
        if (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "add_argument"
                and _dest(node) == dest):
            choices = next((k.value for k in node.keywords if k.arg == "choices"), None)
            if choices is None:
                return anything
            literal = _literal_names(choices)
            if literal is not None:
                return (lambda name: name in literal), "choices"
            if type(choices) is ast.Name:
                test = _comprehension_test(tree, choices.id)
                if test is not None:
                    return test, "choices"
            return anything
    return anything


def _dest(call: ast.Call) -> Optional[str]:
    for keyword in call.keywords:
        if keyword.arg == "dest":
            return keyword.value.value if type(keyword.value) is ast.Constant else None
    flags = [a.value for a in call.args if type(a) is ast.Constant and type(a.value) is str]
    long = [f for f in flags if f.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    return flags[0] if flags and not flags[0].startswith("-") else None


def _literal_names(node) -> Optional[frozenset]:
    if type(node) in (ast.List, ast.Tuple, ast.Set) and all(
            type(e) is ast.Constant and type(e.value) is str for e in node.elts):
        return frozenset(e.value for e in node.elts)
    return None


def _comprehension_test(tree: ast.Module, name: str) -> Optional[Callable[[str], bool]]:
    """`model_names = sorted(name for name in models.__dict__ if name.islower() and not
    name.startswith("__") and callable(models.__dict__[name]))` (one module-level binding): its
    conditions on the name as a test; None where one is not understood (a literal list bound
    to the name: that list)."""
    bound = [s for s in tree.body if type(s) is ast.Assign and any(
        type(t) is ast.Name and t.id == name for t in s.targets)]
    if len(bound) != 1:
        return None
    value = bound[0].value
    literal = _literal_names(value)
    if literal is not None:
        return lambda n: n in literal
    while type(value) is ast.Call and len(value.args) == 1 and type(value.func) is ast.Name and value.func.id in (
            "sorted", "list", "tuple", "set"):
        value = value.args[0]
    if type(value) not in (ast.GeneratorExp, ast.ListComp, ast.SetComp) or len(value.generators) != 1:
        return None
    generator = value.generators[0]
    if type(generator.target) is not ast.Name or type(value.elt) is not ast.Name or value.elt.id != generator.target.id:
        return None
    tests: List[Callable[[str], bool]] = []
    for condition in generator.ifs:
        for part in (condition.values if type(condition) is ast.BoolOp and type(condition.op) is ast.And
                     else [condition]):
            test = _name_test(part, generator.target.id)
            if test is None:
                return None
            tests.append(test)
    return lambda n: all(test(n) for test in tests)


def _name_test(node, var: str) -> Optional[Callable[[str], bool]]:
    negate = type(node) is ast.UnaryOp and type(node.op) is ast.Not
    inner = node.operand if negate else node
    if type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id == "callable":
        return (lambda n: True) if not negate else None  # every member kept is a class or function
    if not (type(inner) is ast.Call and type(inner.func) is ast.Attribute and type(inner.func.value) is ast.Name
            and inner.func.value.id == var):
        return None
    method, args = inner.func.attr, inner.args
    if method in ("islower", "isupper", "isidentifier") and not args:
        test = lambda n, m=method: getattr(n, m)()  # noqa: E731
    elif method in ("startswith", "endswith") and len(args) == 1 and type(args[0]) is ast.Constant and type(
            args[0].value) is str:
        test = lambda n, m=method, a=args[0].value: getattr(n, m)(a)  # noqa: E731
    else:
        return None
    return (lambda n: not test(n)) if negate else test


def with_selection(cite: str, inner: str) -> str:
    """`cite`, with the key value of a namespace lookup that `inner` (the cite of what a
    factory returned) rests on: "build(...) at a.py:3 (when arch is 'vgg11', 1 of the 4 names
    of models)"."""
    start = inner.find("(when ")
    if start < 0 or "(when " in cite:
        return cite
    end = inner.find(")", start)
    return f"{cite} {inner[start:end + 1 if end > 0 else len(inner)]}"


def call_shape(cv, path: str, line: int) -> Optional[Tuple[int, frozenset]]:
    """(positional count, keywords) of the one namespace-lookup call at `line` of `path`
    (`vits.__dict__[arch](patch_size=16)`, `getattr(m, name)()`); None where a star argument
    may give anything, or the call is not found alone on its line."""
    if not line:
        return None
    tree = cv.strings.params._tree(path)
    found = [node for node in (ast.walk(tree) if tree is not None else ()) if type(node) is ast.Call
             and node.lineno == line and (type(node.func) is ast.Subscript or (
                 type(node.func) is ast.Call and type(node.func.func) is ast.Name and node.func.func.id == "getattr"))]
    if len(found) != 1:
        return None
    call = found[0]
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    return len(call.args), frozenset(k.arg for k in call.keywords)


def cannot_take(cv, thing: tuple, shape: Tuple[int, frozenset]) -> bool:
    """A member class or module-level function that a call of this shape cannot call: it
    raises TypeError there, so that member gives nothing (`getattr(esm.pretrained, name)()`
    never runs `load_model_and_alphabet_core(model_name, model_data)`; dino's
    `vits.__dict__[args.arch](patch_size=16)` never builds `Attention(dim, ...)`)."""
    path, name = thing[1], thing[2]
    if thing[0] == "class":
        method = cv.p.method(path, name, "__init__")
        if method is None:
            return False  # torch's or another library's constructor: not read
        path, name = method
    tree = cv.strings.params._tree(path)
    body = tree.body if tree is not None else []
    node = None
    for part in name.split("."):
        found = [s for s in body if type(s) in (ast.FunctionDef, ast.ClassDef) and s.name == part]
        if len(found) != 1:
            return False
        node = found[0]
        body = node.body
    if type(node) is not ast.FunctionDef or node.decorator_list and thing[0] != "class":
        return False
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args][1 if thing[0] == "class" else 0:]
    given, keywords = shape
    if given > len(positional) and args.vararg is None:
        return True
    if any(k not in positional[given:] and k not in {a.arg for a in args.kwonlyargs} for k in keywords) \
            and args.kwarg is None:
        return True
    required = positional[:len(positional) - len(args.defaults)] if args.defaults else positional
    if any(p not in keywords for p in required[given:]):
        return True
    return any(d is None and a.arg not in keywords for a, d in zip(args.kwonlyargs, args.kw_defaults))


def imported_modules(cv, path: str, key: str, name, depth: int) -> Things:
    """`importlib.import_module("models." + model_name + "_model")` (the name built there, or
    bound once to a local): every project module whose dotted name fits, cited with the part
    that selects it. A literal prefix is required: a bare name may import anything."""
    if name[0] == "local":
        flow = cv._flow(path)
        function = flow.functions.get(key) if flow is not None else None
        bound = function.assigns.get(name[1], ()) if function is not None else ()
        if len(bound) != 1 or name[1] in function.params:
            return {}
        name = bound[0]
    if name[0] != "str" or not name[1]:
        return {}
    _, prefix, suffix, hole = name
    from_path = re.compile(r"(?:^|/)" + re.escape(prefix.replace(".", "/")) + r"(\w+)"
                           + re.escape(suffix.replace(".", "/")) + r"(?:\.py|/__init__\.py)$")
    key_text = _key_text(hole)
    out: Things = {}
    for where in cv.p.python:
        match = from_path.search(where)
        if match is None or not (prefix + match.group(1) + suffix).replace(".", "").isidentifier():
            continue
        dotted = prefix + match.group(1) + suffix
        found = cv.p.resolve_ref(path, dotted)
        if found is not None and found[0] == where and not found[1]:
            out[("module", dotted, path)] = Hold(f"when {key_text} is {match.group(1)!r}")
    return out


def dict_items(cv, path: str, key: str, base, depth: int) -> Things:
    """`for name, cls in modellib.__dict__.items()`: every project class and function of the
    modules `modellib` holds, cited with the module's own selection."""
    out: Things = {}
    for thing, hold in cv.values(path, key, base, depth).items():
        if thing[0] != "module":
            continue
        found = cv.p.resolve_ref(thing[2], thing[1])
        if found is None or found[1]:
            continue
        given = members(cv, [found[0]], lambda n: True, depth)
        total = len({n for names in given.values() for n in names})
        if len(given) > MAX_MEMBERS:
            continue
        head = f"{hold.cite} and the scan takes" if hold.cite.startswith("when ") else "when the scan takes"
        for member, names in given.items():
            out.setdefault(member, Hold(f"{head} {names[0]!r}, 1 of the {total} names of {thing[1]}"))
    return out


def _key_text(val) -> str:
    parts = []
    while val is not None and val[0] == "attr":
        parts.append(val[2])
        val = val[1]
    if val is not None and val[0] in ("local", "self"):
        parts.append(plain_local(val[1]) if val[0] == "local" else f"self.{val[1]}")
        return ".".join(reversed(parts))
    return "the name"


def member_value(cv, path: str, name: str, depth: int) -> Things:
    """The module-level name `name` of `path` (`globals()[name]`): a class or function defined
    there, one imported by name, or one a `from models import *` brings."""
    summary = cv.p.summary(path)
    if summary is not None and name in summary.imports:
        ref = summary.imports[name]
        held = cv._ref(path, ref, depth)
        if not any(thing[0] in ("class", "func") for thing in held) and "." in ref:
            held = star_ref(cv, path, ref.rsplit(".", 1)[0], ref.rsplit(".", 1)[1], depth) or held
        return held
    held = cv._ref(path, "@" + name, depth)
    if any(thing[0] in ("class", "func") for thing in held):
        return held
    for source in _STAR.findall(cv.p.files[path]):
        found = cv._ref(path, f"{source}.{name}", depth)
        if not any(thing[0] in ("class", "func") for thing in found):
            found = star_ref(cv, path, source, name, depth)  # `models/__init__.py`'s own star
        if any(thing[0] in ("class", "func") for thing in found):
            return found
    return held


def star_ref(cv, path: str, module: str, name: str, depth: int) -> Things:
    """`name` re-exported by `from .resnet import *` in the package `module` (the class
    flow's resolver follows named re-exports only)."""
    found = cv.p.resolve_ref(path, module)
    if found is None or found[1]:
        return {}
    for source in _STAR.findall(cv.p.files[found[0]]):
        held = cv._ref(found[0], f"{source}.{name}", depth)
        if any(thing[0] in ("class", "func") for thing in held):
            return held
    return {}
