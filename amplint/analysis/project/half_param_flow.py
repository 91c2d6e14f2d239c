"""A half model handed on from parameter to parameter (issue 26): BEiT-3's evaluation script
halves the model and passes it to `evaluate(data_loader, model, device, handler)` of
engine_for_finetuning.py, which passes it on as `handler.eval_batch(model=model, **data)`; the
handler's class is what the class flow says `handler` holds. The parameter `model` of
`RetrievalHandler.eval_batch` then holds the half model, and calling it (`model(image=image)`)
yields float16 there (amplint.analysis.facts.half_values).

Candidates start where project/half_params.py starts: a function of a half-casting file that
passes one of its half locals to a call. Each callee the class flow resolves the call to (a
module-level function or a method of any project file, this one included; every member of the
receiver's class set) is a candidate, and so is each callee it passes that parameter on to, up
to MAX_HOPS calls from the cast. Exact or nothing: a candidate's parameter holds the half model
only when every call site the class flow finds for it (param_arguments.passed_values, which
follows a caller's own parameter back to that caller's sites) passes a half local of its caller,
all of one dtype; a parameter with a default (a call may leave it out), or one the function binds
again, gives nothing. A site the flow cannot resolve, or one binding the parameter through
`**kwargs`, is a call the project cannot see (the rule RULES.md states under "Dtype of values")."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

from amplint.analysis.project.flowindex import callee_targets
from amplint.analysis.project.param_arguments import passed_values

MAX_HOPS = 3  # calls from the cast to the function whose parameter is asked about

# (file, function key, parameter, dtype, cite)
Found = Tuple[str, str, str, str, str]


def passed_on(project, path: str, key: str, function, halves: Dict[str, Tuple[str, int]]) -> Iterator[Found]:
    """The parameters of project functions that every visible call binds to a half model,
    starting from the calls of function `key` of `path` that pass one of its half locals
    (`halves`: name -> (dtype, cast line)). A module-level function of another file called
    directly is left to half_params.py, which reports it already."""
    display = project.display
    start = {name: f"`{name}`, cast to {dtype} in {display(path)}" + (f" at line {line}" if line else "")
             for name, (dtype, line) in halves.items()}
    frontier: List[Tuple[str, str, object, Dict[str, str], int]] = [(path, key, function, start, 0)]
    seen = set()
    while frontier:
        fpath, fkey, ffunction, held, hop = frontier.pop()
        for _name, callee, args, line in ffunction.calls:
            slots = [(where, held[value[1]]) for where, value in args
                     if value[0] == "local" and value[1] in held]
            if not slots:
                continue
            direct, _classes = callee_targets(project.flow.values(fpath, fkey, callee))
            for (tpath, tkey), (_position, offset) in sorted(direct.items()):
                target = _function(project, tpath, tkey)
                if target is None:
                    continue
                for where, origin in slots:
                    param = _parameter(target, where, offset)
                    if param is None or param in target.assigns or param in target.defaults \
                            or (tpath, tkey, param) in seen:
                        continue
                    seen.add((tpath, tkey, param))
                    cite = f"{origin}, passed to `{tkey}` at {display(fpath)}:{line}"
                    if hop + 1 < MAX_HOPS:
                        frontier.append((tpath, tkey, target, {param: origin}, hop + 1))
                    if hop == 0 and tpath != path and "." not in tkey:
                        continue  # half_params.py's own entry
                    dtype = every_site_half(project, tpath, tkey, param)
                    if dtype is not None:
                        yield tpath, tkey, param, dtype, cite


def every_site_half(project, path: str, key: str, param: str) -> Optional[str]:
    """The dtype every call site the class flow finds for parameter `param` of `key` passes, when
    each passes a half local of its caller; else None (no site, or one passing anything else)."""
    from amplint.analysis.project.half_params import _half_locals, _passed_half

    dtypes = set()
    for where, caller, value in passed_values(project, path, key, param):
        summary = project.summary(where)
        flow = summary.flow if summary is not None else None
        function = flow.functions.get(caller) if flow is not None else None
        half = _passed_half(value, _half_locals(function)) if function is not None else None
        if half is None:
            return None
        dtypes.add(half[1])
    return dtypes.pop() if len(dtypes) == 1 else None


def _function(project, path: str, key: str):
    summary = project.summary(path)
    flow = summary.flow if summary is not None else None
    return flow.functions.get(key) if flow is not None else None


def _parameter(function, where, offset: int) -> Optional[str]:
    """The parameter an argument binds, `offset` parameters (`self`) left out by the call."""
    if isinstance(where, int):
        index = where + offset
        return function.params[index] if index < function.positional else None
    return where if where in function.params else None
