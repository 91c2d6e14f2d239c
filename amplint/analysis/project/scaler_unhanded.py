"""The `self.` scalers of a helper class that no construction in the project hands one
(facts/scaler_unhanded.py delivers them to the class's own file).

A class of a linted file whose method steps `self.scaler`, where `__init__` stores
`self.scaler = scaler` of a parameter defaulting to `None` (scaler_stored.stored_parameters):
when the project makes instances and every `Cls(...)` of it leaves that parameter out or passes
`None`, each instance holds `None` there, and the class's own protocol is no scaler's. Where a construction passes
anything else, the class's file reports as before.

Exact or nothing, on every file whose text names the class: each use of the name is an import
of it under its own name or a call of it (a base, an alias, a registry, a value passed on, a
string naming it (a config, `getattr`) or a non-Python file naming it gives no answer); a call
passes no `*args`/`**kwargs`, and its instance is used only to call its methods: a statement,
`Cls(...).m()`, or a local of a function bound once and only called methods of (never passed
on, stored or written to, which could set its attribute). The class's file makes no instance
through `type(self)`, `__class__` or a class or static method (`cls(...)`), and writes the
attribute on nothing but `self`."""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Mapping, Optional, Set

from amplint.analysis.facts.scaler_unhanded import EntryUnhanded
from amplint.analysis.project.scaler_stored import stored_parameters
from amplint.analysis.project.scan_view import texts_holding

AstOf = Callable[[str], Optional[ast.Module]]


def unhanded_entries(project, summaries: Mapping[str, object], ast_of: AstOf) -> Dict[str, List[EntryUnhanded]]:
    """path -> the EntryUnhanded of its classes, from the protocol summaries of the linted
    files (scaler_summaries.ScalerSummary: a method `Cls.m` stepping `self.<attr>`)."""
    found: Dict[str, List[EntryUnhanded]] = {}
    for path, summary in sorted(summaries.items()):
        functions = getattr(summary, "functions", None)
        if not functions:
            continue
        stepped: Dict[str, Set[str]] = {}
        for key, function in functions.items():
            cls, _, method = key.partition(".")
            if method and "." not in method:
                for event in function[2]:
                    if event[0] == "step" and event[1].startswith("self.") and event[1].count(".") == 1:
                        stepped.setdefault(cls, set()).add(event[1][5:])
        text = project.files[path] if stepped else ""
        if "None" not in text:
            continue
        for cls in sorted(stepped):
            if not any(_stored_text(attr).search(text) for attr in stepped[cls]):
                continue
            stored = {attr: (param, position) for attr, param, position, none_default
                      in stored_parameters(ast_of(path), cls + ".__init__") if none_default}
            attrs = sorted(attr for attr in stepped[cls] if attr in stored)
            if not attrs or "__class__" in text or "type(self)" in text or _other_makers(ast_of(path), cls) \
                    or _hands_self(ast_of(path), cls):
                continue
            attrs = [attr for attr in attrs if not _stored_elsewhere(project, attr)]
            passed = _passed(project, cls, {stored[a][0]: stored[a][1] for a in attrs}, ast_of)
            for attr in attrs if passed is not None else ():
                param = stored[attr][0]
                if param not in passed:
                    found.setdefault(path, []).append(EntryUnhanded(
                        cls, "self." + attr, f"no `{cls}(...)` of the project passes `{param}`"))
    return found


def _other_makers(module: Optional[ast.Module], cls: str) -> bool:
    """The class has a class or static method (`cls(...)`, an alternative constructor)."""
    for node in module.body if module is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.decorator_list
                       for n in node.body)
    return True


def _hands_self(module: Optional[ast.Module], cls: str) -> bool:
    """A method of the class uses a bare `self` (passes, returns, stores or yields it): the
    instance may then reach code that sets its attribute without naming the class."""
    for node in module.body if module is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            parents = {id(child): parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
            return any(isinstance(n, ast.Name) and n.id == "self" and isinstance(n.ctx, ast.Load)
                       and not isinstance(parents.get(id(n)), ast.Attribute) for n in ast.walk(node))
    return True


def _stored_elsewhere(project, attr: str) -> bool:
    """Some Python file of the project may set `<other>.<attr>` (an assignment, annotated or
    augmented, a tuple target, `setattr`), on any object but `self`: a method may set another
    instance's, or a caller the instance it was handed."""
    store = _foreign_store(attr)
    return any(store.search(text) or ("setattr" in text and attr in text)
               for _path, text in texts_holding(project, attr))


def _foreign_store(attr: str):
    """`<other>.<attr> = ...`, `<other>.<attr>: T = ...`, `<other>.<attr> += ...` or
    `<other>.<attr>, ... =` (a tuple target, or a mere argument list: kept, conservatively)."""
    return re.compile(r"(?<!\bself)\s*\.\s*%s\s*(?::[^=\n]*)?(?:[-+*/%%&|^@]|//|\*\*|<<|>>)?(?:=(?!=)|,)"
                      % re.escape(attr))


def _stored_text(attr: str):
    """A cheap text pre-test for `self.<attr> = <name>` (stored_parameters parses the file)."""
    return re.compile(r"\bself\.%s\s*=\s*\w+\s*$" % re.escape(attr), re.M)


def _passed(project, cls: str, params: Dict[str, int], ast_of: AstOf) -> Optional[Set[str]]:
    """Those of `params` (name -> position without `self`, -1 keyword-only) that some
    construction of `cls` in the project passes (a value other than `None`); None when some
    use of the name cannot be read as the module docstring says, or when the project makes no
    instance at all (a library's class: its users construct it outside the tree)."""
    word = re.compile(r"\b%s\b" % re.escape(cls))
    passed: Set[str] = set()
    constructed = False
    for path in project.files:
        text = project.files[path]
        if cls not in text or not word.search(text):
            continue
        if not path.endswith(".py"):
            return None
        module = ast_of(path)
        if module is None:
            return None
        parents = {id(child): node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(module):
            if isinstance(node, ast.alias):
                if node.name.rsplit(".", 1)[-1] == cls and node.asname not in (None, cls):
                    return None
            elif isinstance(node, ast.Constant) and node.value == cls:
                return None
            elif isinstance(node, ast.Name) and node.id == cls or isinstance(node, ast.Attribute) and node.attr == cls:
                call = parents.get(id(node))
                if not (isinstance(call, ast.Call) and call.func is node) or not _used_for_methods(call, parents):
                    return None
                found = _passed_by(call, params)
                if found is None:
                    return None
                passed |= found
                constructed = True
    return passed if constructed else None


def _passed_by(call: ast.Call, params: Dict[str, int]) -> Optional[Set[str]]:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    given = {k.arg: k.value for k in call.keywords}
    found = set()
    for param, position in params.items():
        value = given.get(param)
        if value is None and 0 <= position < len(call.args):
            value = call.args[position]
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            found.add(param)
    return found


def _used_for_methods(call: ast.Call, parents) -> bool:
    """The instance `call` makes is only called methods of (the module docstring)."""
    parent = parents.get(id(call))
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, ast.Attribute):  # `Cls(...).m()` as a statement: its result unused
        outer = parents.get(id(parent))
        return isinstance(outer, ast.Call) and outer.func is parent and isinstance(parents.get(id(outer)), ast.Expr)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    function = parents.get(id(parent))
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(function, (ast.ClassDef, ast.Module, ast.Lambda)):
            return False
        function = parents.get(id(function))
    if function is None:
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and node is not parent.targets[0]:
            use = parents.get(id(node))
            outer = parents.get(id(use))
            if not (isinstance(node.ctx, ast.Load) and isinstance(use, ast.Attribute)
                    and isinstance(outer, ast.Call) and outer.func is use):
                return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        elif isinstance(node, ast.arg) and node.arg == name:
            return False
    return True
