"""A value rebound through itself, for the class flow (classvalues.py): `model =
parallelize(model, device)` (a yolov3 fork's torch_utils helper returning `nn.DataParallel(model)`
or the model), `model = nn.DataParallel(model)`, `self.model = accelerator.prepare(self.model)`.

Flow-insensitive, a local holds what every binding of it holds. A binding that reads the local
itself is a cycle: evaluated as any value, the local being evaluated holds nothing there (the cut),
so what the call hands back for it was lost, and so was the DataParallel around the model. Here
such a binding is evaluated with the local's own value replaced by what its other bindings hold,
then by what that adds (up to ROUNDS): a DataParallel or half cast of it, the unwrapped model, and
a call of a resolved project helper that hands back its argument (passed_returns.py: the argument
itself, an attribute of it, a DataParallel of it), read for this call's argument only. A callee of
any other shape, or one the flow cannot resolve, is evaluated as before (the cycle cut: nothing for
it). A binding that is the local itself (`model = model.cuda()`, chains dropped) adds nothing.
What a rebinding gives depends only on the other bindings, never on which question asked first.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from amplint.analysis.project.flowindex import Hold, Things, merge_things

ROUNDS = 3  # rebindings applied on what rebindings gave: `m = wrap(m)` then `m = m.half()`
_SHAPES = frozenset({"wrap", "half", "unwrap"})


def merge_bindings(cv, path: str, bindings: Iterable[Tuple[str, tuple]], own: tuple, depth: int,
                   out: Things, also: Optional[Things] = None,
                   evaluate: Optional[Callable[[tuple], Things]] = None) -> None:
    """Merge into `out` (what the value `own` holds before its bindings: its parameter's) what
    `bindings` ((function key, value), in order) hold, each binding that reads `own` itself
    evaluated on what the others hold and on `also` (what `own` holds otherwise: a base class's
    stores, merged by the caller). `evaluate`: what a binding that does not read `own` holds,
    when not its value's (a module-level name bound to a registry)."""
    def plain(key: str, value) -> Things:
        return cv.values(path, key, value, depth) if evaluate is None else evaluate(value)

    bindings = list(bindings)
    rebinds = [at for at, (key, value) in enumerate(bindings)
               if value == own or _reads_itself(cv, path, key, value, own)]
    if not rebinds:
        for key, value in bindings:
            merge_things(out, plain(key, value))
        return
    held: List[Things] = [{} if at in rebinds else plain(key, value) for at, (key, value) in enumerate(bindings)]
    current: Things = dict(out)
    merge_things(current, also or {})
    for found in held:
        merge_things(current, found)
    for _ in range(ROUNDS):
        grown = False
        for at in rebinds:
            key, value = bindings[at]
            held[at] = {} if value == own else _rebound(cv, path, key, value, own, current, depth)
            grown = grown or _adds(current, held[at])
        if not grown:
            break
        for at in rebinds:
            merge_things(current, held[at])
    for found in held:
        merge_things(out, found)


def _adds(current: Things, found: Things) -> bool:
    for thing, hold in found.items():
        known = current.get(thing)
        if known is None or (hold.wrap is not None and known.wrap is None):
            return True
    return False


def _reads_itself(cv, path: str, key: str, value, own: tuple) -> bool:
    kind = value[0]
    if kind in _SHAPES:
        return value[1] == own
    if kind != "call":
        return False
    return own in _call_arguments(cv, path, key).get((value[1], value[3]), ())


def _call_arguments(cv, path: str, key: str) -> Dict[tuple, FrozenSet[tuple]]:
    """(callee, line) -> the locals and attributes of self a call of function `key` passes."""
    memo = cv.__dict__.setdefault("_rebind_args", {})
    found = memo.get((path, key))
    if found is None:
        flow = cv._flow(path)
        function = flow.functions.get(key) if flow is not None else None
        found = {}
        for _, callee, args, line in (function.calls if function is not None else ()):
            passed = frozenset(arg for _, arg in args if type(arg) is tuple and arg[:1] in (("local",), ("self",)))
            if passed:
                found[(callee, line)] = found.get((callee, line), frozenset()) | passed
        memo[(path, key)] = found
    return found


def _rebound(cv, path: str, key: str, value, own: tuple, current: Things, depth: int) -> Things:
    """What binding `value` gives when `own` holds `current`."""
    kind = value[0]
    if kind == "call":
        return cv._call(path, key, value, depth, given={own: current})
    if kind == "wrap":  # `model = nn.DataParallel(model)`
        wrap = f"{value[2]} at {cv.p.display(path)}:{value[3]}"
        return {thing: Hold(hold.cite, hold.half, wrap) if thing[0] == "inst" else hold
                for thing, hold in current.items()}
    if kind == "half":  # `policy = policy.half()`
        return {thing: Hold(hold.cite, value[2], hold.wrap) for thing, hold in current.items()}
    return {thing: Hold(hold.cite, hold.half) if hold.wrap else hold  # `model = model.module`
            for thing, hold in current.items()}


def argument_before(cv, path: str, key: str, value, line: int, depth: int) -> Optional[Things]:
    """What local `value` passes at the call on `line` of function `key` when that call rebinds
    it (`model = FullModel(model, criterion)`): what the local holds from its parameter and its
    bindings, less the rebindings of it at that line or after. Evaluated whole (flow-insensitive),
    the argument would hold what the call's own result becomes later (`model =
    nn.DataParallel(model)`, HRNet's tools/train.py): FullModel's `self.model` a DataParallel of
    FullModel, a value no run makes. None where the call does not rebind a local it passes."""
    if type(value) is not tuple or value[:1] != ("local",):
        return None
    flow = cv._flow(path)
    function = flow.functions.get(key) if flow is not None else None
    if function is None:
        return None
    own = value
    bindings = function.assigns.get(own[1], ())
    if not any(_line(binding) == line for binding in bindings):
        return None
    earlier = []
    for binding in bindings:
        if binding == own:
            continue
        if binding[0] in _SHAPES or binding[0] == "call":
            if _reads_itself(cv, path, key, binding, own):
                at = _line(binding)
                if at is None or at >= line:
                    continue
        earlier.append((key, binding))
    out: Things = {}
    if key and own[1] in function.params:
        if own[1] in function.annotations:
            merge_things(out, cv._annotated(path, key, function.annotations[own[1]], depth + 1))
        merge_things(out, cv._bound(path, key, function, own[1], depth + 1))
    evaluate = None if key else (lambda held: cv._global_binding(path, own[1], held, depth + 1))
    merge_bindings(cv, path, earlier, own, depth + 1, out, evaluate=evaluate)
    return out


def _line(value) -> Optional[int]:
    """The line of a call or wrap binding (("call", callee, text, line), ("wrap", inner, text, line))."""
    if value[0] in ("call", "wrap") and len(value) > 3 and type(value[3]) is int:
        return value[3]
    return None
