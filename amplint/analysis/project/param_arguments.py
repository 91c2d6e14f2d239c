"""What the call sites of a project function pass for one of its parameters, as the callers'
own flow values (issue 26): the step from a parameter back to the argument, for the facts that
follow a value the class flow does not hold (a half model, not a class): nanoT5's
`train_step(model, batch, scaler)` runs `model(**batch)` under autocast, `train(model, ...)`
passes its own parameter on, and main.py passes `model = get_model(args)`.

The sites are the class flow's own (`_binding_sites`: a call whose callee the flow resolves to
this function, positional or keyword, `self` and constructors counted). A parameter passed on
as the caller's parameter is followed to that caller's sites, up to `MAX_HOPS` functions. Exact
or nothing: a site passing the parameter through `*args` / `**kwargs` is not a binding the flow
records, and a function the flow finds no site of gives nothing."""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from amplint.analysis.project.unseen_calls import starred_call, used_as_value

MAX_HOPS = 3  # functions from the one asked about to the caller that binds the value

# (file, function key, the caller's value for the argument (flowfacts.Val), the call's line)
Passed = Tuple[str, str, tuple]


def passed_values(project, path: str, key: str, name: str, hops: int = 0) -> Iterator[Passed]:
    """(file, caller, value) for each call site of function `key` of `path` that fills its
    parameter `name`; a caller's own parameter passed on is replaced by what its sites pass."""
    flow = project.flow
    summary = project.summary(path)
    facts = summary.flow if summary is not None else None
    function = facts.functions.get(key) if facts is not None else None
    if function is None or name not in function.params or hops >= MAX_HOPS:
        return
    slots = call_slots(summary, key, function, name)
    if slots is None:
        return
    names, init, keyword, positional = slots
    wanted = frozenset({keyword} | ({positional, positional - 1} if positional is not None else set()))
    for callee_name in names:
        for where, caller, args, offset in flow._binding_sites(callee_name, (path, key), init, 0, wanted):
            for slot, value in args:
                if slot != keyword and (positional is None or slot != positional - offset):
                    continue
                if value[0] == "local":
                    other = project.summary(where)
                    calling = other.flow.functions.get(caller) if other is not None and other.flow else None
                    if calling is not None and value[1] in calling.params:
                        yield from passed_values(project, where, caller, value[1], hops + 1)
                        continue
                yield where, caller, value


def every_site_value(project, path: str, key: str, name: str, hops: int = 0) -> Optional[List[tuple]]:
    """What passed_values yields, exact or nothing: (file, caller, value) of every call site
    binding parameter `name` of `key`, a caller's own parameter passed on replaced by what its
    sites pass; None when one is not known (no site, a default a call may leave in place, the
    function passed on as a value or called with a star, too many hops)."""
    summary = project.summary(path)
    function = _function(project, path, key)
    if function is None or name not in function.params or name in function.defaults or hops >= MAX_HOPS:
        return None
    slots = call_slots(summary, key, function, name)
    if slots is None or used_as_value(project, key.split(".")[-1]) \
            or starred_call(project, key.split(".")[-1], name):
        return None  # `hooks.append(evaluate)`, `evaluate(*args)`: called where the flow does not bind it
    names, init, keyword, positional = slots
    wanted = frozenset({keyword} | ({positional, positional - 1} if positional is not None else set()))
    out: List[tuple] = []
    for callee_name in names:
        for where, caller, args, offset in project.flow._binding_sites(callee_name, (path, key), init, 0, wanted):
            for slot, value in args:
                if slot != keyword and (positional is None or slot != positional - offset):
                    continue
                calling = _function(project, where, caller)
                if value[0] == "local" and calling is not None and value[1] in calling.params:
                    deeper = every_site_value(project, where, caller, value[1], hops + 1)
                    if deeper is None:
                        return None
                    out.extend(deeper)
                else:
                    out.append((where, caller, value))
    return out or None


def call_slots(summary, key: str, function, name: str) -> Optional[tuple]:
    """(the names a call of it is written with, whether a class call runs it, the keyword, the
    position among the parameters or None for a keyword-only one)."""
    index = function.params.index(name)
    positional = index if index < function.positional else None
    parts = key.split(".")
    is_method = len(parts) == 2 and parts[0] in summary.classes
    if len(parts) > 2 or (is_method and function.is_classmethod):
        return None  # nested functions and classmethods: their sites are not all visible here
    if is_method and parts[1] == "__init__":
        return (parts[0],), True, name, positional
    return (parts[-1],), False, name, positional


def _function(project, path: str, key: str):
    summary = project.summary(path)
    flow = summary.flow if summary is not None else None
    return flow.functions.get(key) if flow is not None else None
