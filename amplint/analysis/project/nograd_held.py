"""No-grad forwards of a held module (AMP150 across files): a region's call `guesser(x)` that
the class flow resolves to the `__call__` (or `forward`) of one project class of another file,
which stores the module it is built with (`self.model = model` in `__init__`, the only store
of that attribute) and calls `self.model(...)` under no_grad. When the instance is built in
the calling function from one of its names (`guesser = LabelGuesser(model)`), or every call
site of the calling function passes both the instance built there and the module it was built
with (`train(..., model, ..., guesser)` after `guesser = LabelGuesser(model)`), the calling
file gets an `EntryNoGradHeld`: the call is a no-grad forward of that name, which the rule
pairs with a later grad forward of it in the same region. Anything less exact gives none.

Cost: only classes whose file says `no_grad` or `inference_mode` and whose method calls a
stored attribute are parsed (once each, shared with the other entry passes)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from amplint.analysis.facts.nograd_methods import EntryNoGradHeld, nograd_self_attrs
from amplint.analysis.project.function_entries import parsed_facts
from amplint.analysis.project.flowvalues import same_local

_WORDS = ("no_grad", "inference_mode")
_MAX_CALLERS = 2  # functions from the one building the instance to the one calling it

Held = Dict[str, Tuple[int, str]]  # stored attribute -> (`__init__` position after self, parameter)


def note_nograd_held(project, path: str, key: str, receiver, attr: str, target: Tuple[str, str]) -> None:
    where, method_key = target
    if attr not in ("", "forward", "__call__") or receiver[0] != "local" or not key or method_key.count(".") != 1:
        return
    cls, method = method_key.split(".")
    if method not in ("__call__", "forward"):
        return
    memo: Dict[Tuple[str, str], Optional[Tuple[Held, int]]] = project.__dict__.setdefault("_nograd_held", {})
    if target not in memo:
        memo[target] = _held_params(project, where, cls, method)
    found = memo[target]
    if found is None:
        return
    held, line = found
    if {t[0] for t in project.flow.call_targets(path, key, receiver, attr)} != {target}:
        return  # the receiver may hold another class too
    for stored, (position, param) in sorted(held.items()):
        name = _module_name(project, path, key, receiver[1], (where, cls), position, param, 0)
        if name is None:
            continue
        calls = project.__dict__.setdefault("nograd_calls", {})
        calls.setdefault(path, set()).add(EntryNoGradHeld(
            key, (receiver[1],), (name,), cls, method, f"{project.display(where)}:{line}"))
        project.__dict__.setdefault("nograd_deps", {}).setdefault(path, set()).add(where)


def _held_params(project, path: str, cls: str, method: str) -> Optional[Tuple[Held, int]]:
    """The attributes `method` of `cls` calls under no_grad that `__init__` stores straight
    from one of its parameters (their only store), and the method's line."""
    text = project.files.get(path) or ""
    summary = project.summary(path) if any(word in text for word in _WORDS) else None
    flow = summary.flow if summary is not None else None
    if flow is None or cls not in summary.classes:
        return None
    init = flow.functions.get(f"{cls}.__init__")
    called = flow.functions.get(f"{cls}.{method}")
    if init is None or called is None:
        return None
    stores: Dict[str, list] = {}
    for name in summary.classes[cls].methods:
        function = flow.functions.get(f"{cls}.{name}")
        for stored, value in (function.stores if function is not None else ()):
            stores.setdefault(stored, []).append((name, value))
    held: Held = {}
    for receiver, attr, _text, _line in called.dynamic:
        if receiver[0] != "self" or attr not in ("", "forward") or receiver[1] in held:
            continue
        found = stores.get(receiver[1], [])
        if len(found) != 1 or found[0][0] != "__init__" or found[0][1][0] != "local":
            continue
        param = found[0][1][1]
        if param in init.params[1:init.positional] and param not in init.assigns:
            held[receiver[1]] = (init.params.index(param) - 1, param)
    if not held:
        return None
    parsed = parsed_facts(project, path)
    frame = parsed[1].tree.classes.get(cls) if parsed is not None else None
    function = frame.functions.get(method) if frame is not None else None
    nograd = set(nograd_self_attrs(function))
    held = {attr: slot for attr, slot in held.items() if attr in nograd}
    if not held:
        return None
    from amplint.analysis.project.lines import node_lines

    node = function.node.name  # type: ignore[union-attr]
    return held, node_lines(parsed[0], [node]).get(id(node), 0)  # type: ignore[index]


def _module_name(project, path: str, key: str, local: str, cls: Tuple[str, str], position: int,
                 param: str, depth: int) -> Optional[str]:
    """The name in function `key` of `path` holding the module the instance in `local` was
    built with, when that is known exactly."""
    summary = project.summaries.get(path)
    function = summary.flow.functions.get(key) if summary is not None and summary.flow is not None else None
    if function is None:
        return None
    if local in function.params:
        return _through_callers(project, path, key, function, local, cls, position, param, depth)
    values = function.assigns.get(local, ())
    if len(values) != 1 or values[0][0] != "call":
        return None
    built = values[0]
    if set(project.flow.values(path, key, built[1])) != {("class",) + cls}:
        return None
    for last, _callee, args, line in function.calls:
        if line != built[3] or last != cls[1]:
            continue
        value = _argument(args, param, position)
        if value is not None and value[0] == "local" and len(function.assigns.get(value[1], ())) <= 1:
            return value[1]
    return None


def _through_callers(project, path, key, function, local, cls, position, param, depth) -> Optional[str]:
    """`local` is a parameter: every call site of `key` passes an instance built there and the
    module it was built with, always into the same parameter of `key`."""
    if depth >= _MAX_CALLERS or "." in key or function.assigns.get(local):
        return None
    index = function.params.index(local)
    answer = None
    sites = 0
    for where, caller, args, offset in project.flow._binding_sites(key, (path, key), False, 0):
        sites += 1
        value = _argument(args, local, index - offset if index < function.positional else None)
        if value is None or value[0] != "local":
            return None
        module = _module_name(project, where, caller, value[1], cls, position, param, depth + 1)
        if module is None:
            return None
        names = {name for i, name in enumerate(function.params) if not function.assigns.get(name)
                 and same_local(_argument(args, name, i - offset if i < function.positional else None), module)}
        if len(names) != 1 or answer not in (None, *names):
            return None
        answer = names.pop()
    return answer if sites else None


def _argument(args, name: str, position: Optional[int]):
    for slot, value in args:
        if slot == name or (position is not None and slot == position):
            return value
    return None
