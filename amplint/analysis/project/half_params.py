"""Half models handed to a function of another file (AMP140 across files): SlowFast's
tools/train_net.py halves the model (`model = model.half()`, or `model.half()` in place) and
passes it to `construct_optimizer(model, cfg)` of slowfast/models/optimizer.py, which builds
`AdamW(..., eps=1e-8)` over `model.named_parameters()`. Within one file the rule sees the
caller's cast (rules/_param_sources.py); here the class flow's facts of the half-casting file
say which parameter of which project function receives the half value, and the answer travels
as an EntryHalfParam of the file defining that function.

Candidates are the files whose text holds a half cast (as for half_callees.py). A function's
local is half when one of its assignments is a half cast (`m = m.half()`, `m = Net().half()`)
or the function casts it in place (`m.half()`); `.half()` converts a module in place, so the
order of the cast and the call does not matter. The callee must be exactly one module-level
function of another project file (the class flow's answer for the call) that never rebinds
that parameter."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.half_callees import EntryHalfParam
from amplint.analysis.project.text_tests import half_cast
from amplint.analysis.project.half_locals import half_locals, passed_half
from amplint.analysis.project.half_param_flow import every_site_half, passed_on


def half_param_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryHalfParam, ...]]:
    found: Dict[str, List[EntryHalfParam]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = project.files.get(path)
        if not text or not half_cast(project, path):
            continue
        summary = _summary(project, path)
        flow = summary.flow if summary is not None else None
        if flow is None:
            continue
        for key in sorted(flow.functions):
            function = flow.functions[key]
            halves = half_locals(function)
            if not halves:
                continue
            for _name, callee, args, line in function.calls:
                passed = [(where, passed_half(value, halves)) for where, value in args]
                passed = [(where, half) for where, half in passed if half is not None]
                if not passed:
                    continue
                target = _one_function(project, path, key, callee)
                if target is None:
                    continue
                cpath, ckey, cfunction = target
                for where, (name, dtype, cast_line) in passed:
                    param = _parameter(cfunction, where)
                    if param is None or param in cfunction.assigns:
                        continue  # not bound by this argument, or rebound in the function
                    cast = f" at line {cast_line}" if cast_line else ""
                    cite = (f"`{name}`, cast to {dtype} in {project.display(path)}{cast}, passed at "
                            f"{project.display(path)}:{line}")
                    every = every_site_half(project, cpath, ckey, param) == dtype and param not in cfunction.defaults
                    found.setdefault(cpath, []).append(EntryHalfParam(ckey, param, dtype, cite, every))
            for tpath, tkey, param, dtype, cite in passed_on(project, path, key, function, halves):
                found.setdefault(tpath, []).append(EntryHalfParam(tkey, param, dtype, cite, True))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def _summary(project, path: str):
    summary = project.made_summary(path)
    if summary is None:
        summary = project.summary(path) if project.flow.owes(path) else project.planned_summary(path)
    return summary


def _one_function(project, path: str, key: str, callee):
    """(file, key, flow function) of the one module-level function of another file the call
    reaches, or None."""
    held = project.flow.values(path, key, callee)
    if len(held) != 1:
        return None
    (thing,) = held
    if thing[0] != "func" or thing[1] == path or "." in thing[2]:
        return None
    summary = project.summary(thing[1])
    flow = summary.flow if summary is not None else None
    function = flow.functions.get(thing[2]) if flow is not None else None
    if function is None:
        return None
    return thing[1], thing[2], function


def _parameter(function, where) -> Optional[str]:
    """The parameter an argument binds: by position among the positional ones, or by keyword."""
    if isinstance(where, int):
        return function.params[where] if where < function.positional else None
    return where if where in function.params else None
