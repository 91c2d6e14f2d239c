"""For AMP103 across files, the other way round from half_callees.py: a factory that casts the
model it returns (whisper's `load_model` halving it under `if fp16:`, a classmethod
`from_pretrained`-like constructor ending in `return model.half()`), whose caller runs the
returned value under an autocast region of its own.

Driven by the regions, not by the factories: for each call the class flow records under a
first-pass file's own active region on a local (`model(x)`) or on `self.x` (`self.model(x)`),
the values bound to that name (`model = whisper.load_model(...)`, `self.model = load(...)` in
a method of the same class) that are calls of exactly one project function, classmethod or
staticmethod. A function returns a half value when a `return` gives a cast (`return
m.half()`) or a local the function casts (`m.half()` as a statement, `m = m.to(torch.float16)`);
a `return` of another such call is followed, up to `_MAX_CHAIN` functions. The answer travels
as an EntryReturnsHalf of the file holding the cast, with the literal arguments the caller
passes (the rule stays silent when the caller turns off a flag guarding the cast). Nothing is
parsed or summarised here beyond what the region pass read; the caller's file is read with
`ast` only when a chain was found, for its arguments."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.half_callees import EntryReturnsHalf
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.config_flags import flags_on
from amplint.analysis.project.half_inplace import floated_back, floated_between, floated_on_return, halved_in_place
from amplint.analysis.project.halfspread import STATEMENT_CASTS
from amplint.analysis.project.param_arguments import passed_values
from amplint.analysis.project.string_sources import function_node
from amplint.analysis.project.flowvalues import same_local

_MAX_CHAIN = 3  # functions from the caller's call to the one that casts
_CALLABLE = ("func", "cfunc", "bound")

# (file, function, names, the functions on the way, the one handing the model to a helper that
# halves its parameter in place or "")
Cast = Tuple[str, str, Tuple[str, ...], Tuple[str, ...], str]


def half_return_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryReturnsHalf, ...]]:
    found: Dict[str, List[EntryReturnsHalf]] = {}
    memo: Dict[Tuple[str, str], Optional[Cast]] = {}
    trees: Dict[str, Optional[ast.Module]] = {}
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None or summary.flow is None:
            continue
        seen = set()
        for key, receiver, attr, _text, line, index in summary.flow.roots:
            info = summary.region_infos[index]
            if attr not in ("", "forward") or info.enabled == Enabled.FALSE or receiver[0] not in ("local", "self"):
                continue
            for where, caller, value in _bound_values(project, path, key, receiver):
                cast = _factory_cast(project, where, caller, value, memo)
                if value[0] == "item":  # `model, preprocess = clip.load(...)`
                    value = value[1]
                if cast is None or (value, cast) in seen or _without_grad(project, path, key, line, trees):
                    continue
                if (where, caller) == (path, key) and receiver[0] == "local" \
                        and floated_between(project, path, key, receiver[1], value[3], line):
                    continue  # `model = w.export()` then `model = model.float()`: float32 at the call
                seen.add((value, cast))
                cpath, ckey, names, chain, passer = cast
                region = f"{project.display(info.origin.path)}:{info.origin.line}"
                function = summary.flow.functions.get(key)
                if receiver[0] == "local" and function is not None and receiver[1] in function.params:
                    region += f" (`{key}` receives it as its parameter `{receiver[1]}`)"
                call = f"{value[2]} at {project.display(where)}:{value[3]}"
                passed = _literal_args(project.files.get(where) or "", value[3], chain[0])
                scaler = any("GradScaler" in (project.files.get(p) or "") for p in {path, where})
                found.setdefault(cpath, []).append(EntryReturnsHalf(
                    ckey, names, call, region, scaler, passed if len(chain) == 1 else None,
                    passer, flags_on(project, cpath, ckey)))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def _bound_values(project, path: str, key: str, receiver, passed: bool = False):
    """(file, function, value) of each call bound to the receiver: a local of the function, a
    parameter's arguments at its call sites (param_arguments.py: locals of the callers, bound
    to such a call there), or `self.x` stored in a method of the same class in this file."""
    summary = project.summary(path)
    flow = summary.flow if summary is not None else None
    if flow is None:
        return
    if receiver[0] == "local":
        function = flow.functions.get(key)
        if function is None:
            return
        if receiver[1] in function.params and not passed:  # what the callers pass, bound to a call there
            for where, caller, value in passed_values(project, path, key, receiver[1]):
                if value[0] == "local":
                    yield from _bound_values(project, where, caller, value, passed=True)
            return
        for value in function.assigns.get(receiver[1], ()):
            if value[0] == "call" or (value[0] == "item" and value[1][0] == "call"):
                yield path, key, value
        return
    if passed:
        return
    if key.count(".") != 1:
        return
    cls = key.split(".")[0]
    for other, function in flow.functions.items():
        if other.split(".")[0] != cls or other.count(".") != 1:
            continue
        for attr, value in function.stores:
            if attr == receiver[1] and value[0] == "call":
                yield path, other, value


def _factory_cast(project, path: str, key: str, value, memo, depth: int = 0) -> Optional[Cast]:
    """The cast that makes the value of call `value` (in function `key` of `path`) half: in the
    one project function it calls, or in one that function's return calls in turn."""
    if depth >= _MAX_CHAIN:
        return None
    item = None
    if value[0] == "item":  # element `item` of the tuple the factory returns
        value, item = value[1], value[2]
    target = _one_target(project, path, key, value[1])
    if target is None:
        return None
    # the literals the call passes decide a float32 cast back under `if str(device) == "cpu":`;
    # read (with `ast`) only when such a cast is met, and only for the function called directly
    caller = (path, value[3]) if depth == 0 else None
    literals = _Literals(project, path, value[3], target[1]) if caller is not None else None
    asked = target + (item, caller)
    if asked not in memo:
        memo[asked] = None  # a recursive factory answers nothing
        memo[asked] = _returns_half(project, target, memo, depth, item, literals)
    if memo[asked] is not None and item is None and floated_on_return(project, path, key, value[3], value[1]):
        return None  # `model = w.export().float()`: the class flow drops the cast back (read only then)
    return memo[asked]


class _Literals:
    """The literal arguments of one call, read when first asked."""

    def __init__(self, project, path: str, line: int, function: str) -> None:
        self._where = (project, path, line, function)
        self._read = False
        self._found = None

    def __call__(self):
        if not self._read:
            project, path, line, function = self._where
            self._found = _literal_args(project.files.get(path) or "", line, function)
            self._read = True
        return self._found


def _one_target(project, path: str, key: str, callee) -> Optional[Tuple[str, str]]:
    held = project.flow.values(path, key, callee)
    targets = {(t[3], t[4]) if t[0] == "bound" else (t[1], t[2]) for t in held if t[0] in _CALLABLE}
    if len(targets) != 1 or len(held) != 1:
        return None  # anything else it may be: not known exactly
    return targets.pop()


def _returns_half(project, target: Tuple[str, str], memo, depth: int, item: Optional[int] = None,
                  literals=None) -> Optional[Cast]:
    path, key = target
    summary = project.summaries.get(path)
    flow = summary.flow if summary is not None else None
    function = flow.functions.get(key) if flow is not None else None
    if function is None:
        return None
    names: List[str] = []
    for value in function.returns:
        if item is not None:  # `return model, transform`: the element the caller takes
            if value[0] != "tuple" or len(value[1]) <= item:
                continue
            value = value[1][item]
        if _is_half(value):
            names.append("")  # `return model.half()`
        elif value[0] == "local" and value[1] not in function.params:
            name = value[1]
            if floated_back(project, path, key, name, literals):
                continue  # `model.float()` on every path, after a cast of its own too
            assigned = function.assigns.get(name, ())
            if any(_is_half(v) for v in assigned) or any(
                    same_local(receiver, name) and attr in STATEMENT_CASTS
                    for receiver, attr, _text, _line in function.dynamic):
                names.append(name)
                continue
            for inner in assigned:
                if inner[0] == "call":
                    found = _factory_cast(project, path, key, inner, memo, depth + 1)
                    if found is not None:
                        return found[:3] + ((key,) + found[3],) + found[4:]
            found = halved_in_place(project, path, key, function, name)  # `convert_weights(model)`
            if found is not None:
                return found[0], found[1], found[2], (key, found[1]), key
        elif value[0] == "call":
            found = _factory_cast(project, path, key, value, memo, depth + 1)
            if found is not None:
                return found[:3] + ((key,) + found[3],) + found[4:]
    if not names:
        return None
    return path, key, tuple(sorted(set(names))), (key,), ""


def _without_grad(project, path: str, key: str, line: int, trees) -> bool:
    """Whether the region's call at `line` runs with gradients off (`with torch.no_grad():`
    around it, `@torch.inference_mode()` on its function): inference, which trains nothing
    (sd-scripts' anima_minimal_inference.py runs its bfloat16 DiT so). Read with `ast` only
    when a chain to a cast was found."""
    if path not in trees:
        try:
            trees[path] = ast.parse(project.files.get(path) or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            trees[path] = None
    scope = function_node(trees[path], key) if trees[path] is not None else None
    if scope is None:
        return False
    if any(_grad_off(dec) for dec in getattr(scope, "decorator_list", ())):
        return True
    return any(type(node) in (ast.With, ast.AsyncWith) and any(_grad_off(item.context_expr) for item in node.items)
               and node.lineno <= line <= (node.end_lineno or node.lineno) for node in ast.walk(scope))


def _grad_off(expr) -> bool:
    if type(expr) is ast.Call:
        expr = expr.func
    name = expr.attr if type(expr) is ast.Attribute else expr.id if type(expr) is ast.Name else ""
    return name in ("no_grad", "inference_mode")


def _is_half(value) -> bool:
    if value[0] == "half":
        return True
    return value[0] == "any" and any(item is not None and _is_half(item) for item in value[1])


def _literal_args(text: str, line: int, function: str) -> Optional[Tuple[Tuple[object, object], ...]]:
    """(position or keyword, the literal or None) of each argument of the call of `function`
    (its last name) at `line` of the caller's text; None when no such call is found."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    name = function.split(".")[-1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node.lineno != line:
            continue
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if last != name or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        out = [(i, _literal(a)) for i, a in enumerate(node.args)]
        out += [(k.arg, _literal(k.value)) for k in node.keywords]
        return tuple(out)
    return None


def _literal(node: ast.expr):
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, type(None), str)):
        return node.value
    return "?"
