"""A helper that hands back what it is given, read per call (issue 26), for the class flow's calls
(classcalls.py). ultralytics' (yolov5, yolov8, yolov10) torch_utils is the shape:

    def de_parallel(model):
        return model.module if is_parallel(model) else model

    ckpt = {"model": deepcopy(de_parallel(self.model)).half(), ...}   # trainer.py
    gs = max(int(de_parallel(self.model).stride.max()), 32)           # detect/train.py

Context-insensitive, `de_parallel(x)` would hold what every call of the project passes (its
parameter bound at all its sites), so one half cast of one call's result would make every model
ever unwrapped half. Here a function whose every `return` is made only of its own parameters (the
parameter, `.module` of it, an attribute of it, `nn.DataParallel` of it, a conditional between such; a parameter rebound
only to such values, `model = model.module`) returns, at one call, what THAT call passes.

Exact or nothing: None (the caller keeps today's union over every call) where the function has a
return of any other shape, is a classmethod or a method reached without its instance, where the
call passes the parameter through `*args`/`**kwargs`, leaves it to its default, passes something
the flow does not record (a literal), or where the call cannot be told apart from another call of
the same callee on its line."""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from amplint.analysis.project.flowindex import Hold, Things, merge_things

_ROUNDS = 4  # a parameter rebound to an attribute of itself: steps of `model = model.inner`


def passed_params(function) -> Optional[FrozenSet[str]]:
    """The parameters the returns of `function` (flowfacts.FlowFunction) are made of, when every
    return (and every rebinding of such a parameter) is made of parameters only; None otherwise."""
    if function is None or not function.returns or function.is_classmethod or function.is_property:
        return None
    used: set = set()
    pending = list(function.returns)
    seen: set = set()
    while pending:
        value = pending.pop()
        if not _shape(value, function.params, used):
            return None
        for name in list(used):
            if name not in seen:
                seen.add(name)
                pending.extend(function.assigns.get(name, ()))
    return frozenset(used)


def _shape(value, params, used: set) -> bool:
    if type(value) is not tuple or not value:
        return False
    kind = value[0]
    if kind == "local":
        if value[1] not in params or value[1] in ("self", "cls"):
            return False
        used.add(value[1])
        return True
    if kind in ("unwrap", "wrap"):  # `model.module`, `nn.DataParallel(model)`
        return _shape(value[1], params, used)
    if kind == "attr":
        return _shape(value[1], params, used)
    if kind == "any":
        return all(_shape(item, params, used) for item in value[1])
    return False


def per_call(cv, path: str, key: str, val, kind: str, fpath: str, fkey: str, function,
             depth: int, given: Optional[Dict[tuple, Things]] = None) -> Optional[Things]:
    """What call `val` (("call", callee, text, line) in function `key` of `path`) returns when its
    callee, function `fkey` of `fpath` held as `kind` ("func" or "bound"), hands back its own
    parameters: each read from this call's argument (from `given` where it names the argument).
    None where that cannot be told exactly."""
    params = passed_params(function)
    if not params:
        return None
    offset = _offset(cv, fpath, fkey, function, kind, val[1])
    if offset is None:
        return None
    args = _arguments(cv, path, key, val)
    if args is None:
        return None
    known = given
    env: Dict[str, Things] = {}
    for name in params:
        index = function.params.index(name)
        slots = {name} if index >= function.positional else {name, index - offset}
        passed = [value for slot, value in args if slot in slots]
        if len(passed) != 1:
            return None  # left to its default, or not recorded (a literal, after a `*args`)
        env[name] = dict(known[passed[0]] if known and passed[0] in known else cv.values(path, key, passed[0], depth))
    for _ in range(_ROUNDS):  # `model = model.module`: the parameter's own rebindings
        changed = False
        for name in params:
            for value in function.assigns.get(name, ()):
                for thing, hold in _through(cv, value, env, depth, fpath).items():
                    known = env[name].get(thing)
                    if known is None or (hold.wrap is not None and known.wrap is None):
                        env[name][thing] = hold  # a model wrapped on one path is wrapped (keep())
                        changed = True
        if not changed:
            break
    else:
        return None
    out: Things = {}
    for value in function.returns:
        merge_things(out, _through(cv, value, env, depth, fpath))
    return out


def _through(cv, value, env: Dict[str, Things], depth: int, fpath: str) -> Things:
    kind = value[0]
    if kind == "local":
        return env.get(value[1], {})
    if kind == "unwrap":  # `model.module`: what the model holds, never its DataParallel
        return {thing: Hold(hold.cite, hold.half) if hold.wrap else hold
                for thing, hold in _through(cv, value[1], env, depth, fpath).items()}
    if kind == "wrap":  # `nn.DataParallel(model)`: this call's model, marked wrapped
        wrap = f"{value[2]} at {cv.p.display(fpath)}:{value[3]}"
        return {thing: Hold(hold.cite, hold.half, wrap) if thing[0] == "inst" else hold
                for thing, hold in _through(cv, value[1], env, depth, fpath).items()}
    if kind == "attr":
        return cv._attr_of(_through(cv, value[1], env, depth, fpath), value[2], depth)
    out: Things = {}
    for item in value[1]:  # "any"
        merge_things(out, _through(cv, item, env, depth, fpath))
    return out


def _offset(cv, fpath: str, fkey: str, function, kind: str, callee) -> Optional[int]:
    """How many leading parameters the call leaves out: 1 for a method called through its
    instance (`self.unwrap(m)`, `obj.unwrap(m)`), 0 for a plain function; None where it cannot be
    told (a method held without its instance, a staticmethod)."""
    parts = fkey.split(".")
    summary = cv.p.summary(fpath)
    is_method = len(parts) == 2 and summary is not None and parts[0] in summary.classes
    if not is_method:
        return 0 if kind == "func" else None
    if function.params[:1] != ("self",):
        return None
    return 1 if kind == "bound" or callee[0] == "self" else None


def _arguments(cv, path: str, key: str, val):
    """The recorded arguments ((slot, value), ...) of call `val`: the one call of its function
    with that callee on that line."""
    flow = cv._flow(path)
    function = flow.functions.get(key) if flow is not None else None
    if function is None:
        return None
    _, callee, _text, line = val
    found = [args for _, called, args, at in function.calls if at == line and called == callee]
    return found[0] if len(found) == 1 else None
