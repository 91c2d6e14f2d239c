"""What a helper class's constructor stores of its parameters, for a method of it composed
across files.

EfficientNet-style gradient accumulation moves the optimizer step into a small class of another
file: `GradAccumulator.__init__(self, optimizer, accum_steps=1, scaler=None)` stores
`self.optimizer = optimizer` and `self.scaler = scaler`, and `maybe_step` runs
`self.scaler.step(self.optimizer)` when a scaler was handed to it, else `self.optimizer.step()`.
The caller's `accumulator = GradAccumulator(optimizer, 2)` decides both: `self.optimizer` is its
`optimizer`, and `self.scaler` is `None`, so only the plain step runs. The caller's side
(facts/scaler_stored.py) reads the constructor call; this side says, per stored attribute, which
parameter it holds.

Exact or nothing: a module-level class bound once, with no base but `object` (no base's method
can store the attribute) and no `__new__`; its own `__init__`, undecorated, with `self` first; the
attribute stored once in the whole class, by a plain `self.attr = param` straight in `__init__`'s
body (no branch), of a parameter `__init__` never binds again; no `setattr` or `__dict__` in the
class."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

# (attribute, parameter, its position among the positional parameters without `self`, -1 for a
# keyword-only one, whether its default is `None`)
Stored = Tuple[str, str, int, bool]


def stored_parameters(module: Optional[ast.Module], key: str) -> Tuple[Stored, ...]:
    """The attributes the constructor of the class of method `key` ("Cls.m") stores of its
    parameters, as the module docstring says; () when it cannot say."""
    cls_name, _, method = key.partition(".")
    if module is None or not method or "." in method:
        return ()
    cls = _plain_class(module, cls_name)
    if cls is None:
        return ()
    inits = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
    if len(inits) != 1 or inits[0].decorator_list:
        return ()
    init = inits[0]
    args = init.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if not positional or positional[0] != "self":
        return ()
    defaults: Dict[str, Optional[ast.expr]] = dict(zip(positional[len(positional) - len(args.defaults):],
                                                       args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults))
    positional = positional[1:]
    keywords = [a.arg for a in args.kwonlyargs]
    rebound = {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stores = _self_stores(cls)
    found = []
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (_self_attr(target) and isinstance(value, ast.Name)):
            continue
        attr, param = target.attr, value.id  # type: ignore[attr-defined]
        if param not in positional and param not in keywords or param in rebound or stores.get(attr) != 1:
            continue
        default = defaults.get(param)
        found.append((attr, param, positional.index(param) if param in positional else -1,
                      isinstance(default, ast.Constant) and default.value is None))
    return tuple(found)


def _plain_class(module: ast.Module, name: str) -> Optional[ast.ClassDef]:
    """The module-level class `name`, bound once at module level, with no base but `object`, no
    keywords (metaclass), no decorators, no `__new__`, no `setattr` or `__dict__`."""
    bound = [n for n in module.body if getattr(n, "name", None) == name
             or isinstance(n, (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom))
             and name in _bound_names(n)]
    if len(bound) != 1 or not isinstance(bound[0], ast.ClassDef):
        return None
    cls = bound[0]
    if cls.keywords or cls.decorator_list or any(
            not (isinstance(b, ast.Name) and b.id == "object") for b in cls.bases):
        return None
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef) and node.name == "__new__":
            return None
        if isinstance(node, ast.Name) and node.id == "setattr" or isinstance(node, ast.Attribute) \
                and node.attr == "__dict__":
            return None
    return cls


def _bound_names(node) -> set:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".", 1)[0] for a in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _self_attr(node) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _self_stores(cls: ast.ClassDef) -> Dict[str, int]:
    """attribute -> how many times the class's code binds or deletes `self.attribute` (a
    method's `self` taken as the instance: every def of the class is counted; an augmented
    assignment's target is a store, counted once)."""
    counts: Dict[str, int] = {}
    for node in ast.walk(cls):
        if _self_attr(node) and not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
            counts[node.attr] = counts.get(node.attr, 0) + 1  # type: ignore[attr-defined]
    return counts
