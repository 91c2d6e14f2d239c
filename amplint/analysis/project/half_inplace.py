"""Two steps of a factory chain for AMP103's returned-half case (half_returns.py) that the
class flow's facts do not spell as a cast of the returned local:

- a helper of the project that halves its parameter in place (openai/CLIP's `build_model`
  calls `convert_weights(model)`, whose body runs `model.half()`): the local handed to it is
  half. The helper is exactly one module-level function, the argument binds the parameter by
  position or keyword, and the helper never rebinds that parameter.
- a cast back to float32 of the returned local on every path (`model.float()` as a statement of
  the function's body, not under an `if`, a loop or a `try`): the local is float32 whatever the
  factory it came from did. Under a condition (`if str(device) == "cpu": model.float()`), the
  model may still be half and the chain is kept. Read with `ast`, once per file, only for a
  local a chain of factories reaches. The caller's side reads the same step (`floated_between`):
  `model = wrapper.export()` then `model = model.float()` before the region's call runs the
  model, the cast model the factory returns is float32 again when the region gets it."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

from amplint.analysis.project.halfspread import STATEMENT_CASTS
from amplint.analysis.project.flowvalues import same_local

_FLOAT32 = ("float32", "float")  # `torch.float32` / `torch.float`


def halved_in_place(project, path: str, key: str, function, name: str) -> Optional[Tuple[str, str, Tuple[str, ...]]]:
    """(file, helper, (its parameter,)) of the helper call in function `key` that halves the local
    `name` in place, or None."""
    for _last, callee, args, _line in function.calls:
        for slot, value in args:
            if not same_local(value, name):
                continue
            held = project.flow.values(path, key, callee)
            if len(held) != 1:
                continue
            (thing,) = held
            if thing[0] != "func" or "." in thing[2]:
                continue
            summary = project.summary(thing[1])
            flow = summary.flow if summary is not None else None
            helper = flow.functions.get(thing[2]) if flow is not None else None
            if helper is None:
                continue
            param = _parameter(helper, slot)
            if param is None or param in helper.assigns or _rebinds(project, thing[1], thing[2], param):
                continue  # `model = copy.deepcopy(model)`: what it halves is not the caller's
            if any(receiver == ("local", param) and attr in STATEMENT_CASTS
                   for receiver, attr, _text, _line in helper.dynamic):
                return thing[1], thing[2], (param,)
    return None


def floated_back(project, path: str, key: str, name: str, literals=None) -> bool:
    """Does function `key` of `path` cast the local `name` back to float32 on every path, or
    under an `if` that the call's literal arguments decide true (`literals()`: (position or
    keyword, literal or "?") of each argument; CLIP's `if str(device) == "cpu": model.float()`
    called with `device="cpu"`)?"""
    node = _parsed_function(project, path, key)
    if node is None:
        return True  # not found: not known to stay half
    for stmt in _unconditional(node.body):
        if _float_back(stmt, name):
            return True
        if isinstance(stmt, ast.If) and literals is not None and "." not in key and _holds(stmt.test, node, literals):
            if any(_float_back(inner, name) for inner in _unconditional(stmt.body)):
                return True
    return False


def floated_between(project, path: str, key: str, name: str, after: int, before: int) -> bool:
    """Does function `key` of `path` cast the local `name` back to float32 on every path by a
    statement after line `after` (where the name is bound) and before line `before` (where the
    region's call reads it)? Only statements of the function's own body (through `with`) count:
    one under an `if`, a loop or a `try` may not run."""
    node = _parsed_function(project, path, key) if key else _parsed_module(project, path)
    if node is None:
        return False
    return any(after < stmt.lineno and (stmt.end_lineno or stmt.lineno) < before and _float_back(stmt, name)
               for stmt in _unconditional(node.body))


def floated_on_return(project, path: str, key: str, line: int, callee) -> bool:
    """Does the statement at `line` of function `key` of `path` cast what the call of `callee`
    (a flow value: its last name is compared) returns back to float32 (`model = wrapper.export().float()`, `return
    build(cfg).to(torch.float32)`)? The class flow drops such carriers (the instance is the
    same); the dtype is not. The outermost dtype step of the chain decides."""
    node = _parsed_function(project, path, key) if key else _parsed_module(project, path)
    if node is None:
        return False
    last = callee[2] if callee[0] == "attr" else callee[1].rsplit(".", 1)[-1] if callee[0] in ("ref", "local") \
        and isinstance(callee[1], str) else None
    if not last:
        return False
    for stmt in ast.walk(node):
        if getattr(stmt, "lineno", None) != line or not isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)):
            continue
        value, floated = stmt.value, None
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            if floated is None and _to_float32(value):
                floated = True
            elif floated is None and _to_half(value):
                floated = False
            inner = value.func.value
            if isinstance(inner, ast.Call) and _last_name(inner.func) == last:
                if floated:
                    return True
            value = inner
    return False


def undone_at_once(project, path: str, key: str, line: int) -> bool:
    """Is the half cast written as a statement at `line` of function `key` of `path`
    (`ddp_model.to(device=device, dtype=torch.float16)`, `model.half()`) undone by the very next
    statement of its body, a float32 cast of the same receiver (`ddp_model.to(device=device,
    dtype=torch.float32)`, `model = model.float()`)? Nothing runs between the two, so no forward
    ever sees the module half: the cast makes no half model (fairscale's test that `.to()`
    changes a wrapper's dtype and back, in a loop after its forward). Read with `ast` only
    when a float32 cast is written on one of the next lines."""
    split: Dict[str, list] = project.__dict__.setdefault("_half_inplace_lines", {})
    if path not in split:
        split[path] = (project.files.get(path) or "").splitlines()
    lines = split[path]
    if not any(".float()" in text or "float32" in text for text in lines[line:line + 3]):
        return False
    scope = _parsed_function(project, path, key) if key else _parsed_module(project, path)
    if scope is None:
        return False
    for node in ast.walk(scope):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for stmt, following in zip(body, body[1:]):
                if stmt.lineno == line and isinstance(stmt, ast.Expr):
                    receiver = _cast_receiver(stmt.value, _to_half)
                    return receiver is not None and _undoes(following, receiver)
    return False


def _cast_receiver(value: ast.expr, step) -> Optional[str]:
    """`ast.dump` of the module a chain of method calls casts, when its outermost dtype step
    is `step` (`m.cuda().half()` -> `m`); None otherwise."""
    decided = None
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if decided is None and (_to_half(value) or _to_float32(value)):
            decided = step(value)
        value = value.func.value
    return ast.dump(value) if decided else None


def _undoes(stmt: ast.stmt, receiver: str) -> bool:
    if isinstance(stmt, ast.Expr):
        return _cast_receiver(stmt.value, _to_float32) == receiver
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = ast.dump(stmt.targets[0]).replace("ctx=Store()", "ctx=Load()")
        return target == receiver and _cast_receiver(stmt.value, _to_float32) == receiver
    return False


def _last_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _holds(test: ast.expr, function, literals) -> bool:
    """`param == "lit"` or `str(param) == "lit"`, with the call passing that literal for param."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str)):
        return False
    left = test.left
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "str" \
            and len(left.args) == 1 and not left.keywords:
        left = left.args[0]
    if not isinstance(left, ast.Name):
        return False
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if left.id not in names + [a.arg for a in function.args.kwonlyargs] or _rebinds_node(function, left.id):
        return False
    passed = literals()
    if passed is None:
        return False
    position = names.index(left.id) if left.id in names else None
    for slot, value in passed:
        if slot == left.id or (position is not None and slot == position):
            return value == test.comparators[0].value
    default = _default(function.args, left.id)  # left out: `load(name)` with `device="cpu"`
    return isinstance(default, ast.Constant) and default.value == test.comparators[0].value


def _default(args: ast.arguments, name: str) -> Optional[ast.expr]:
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults.get(name)


def _rebinds(project, path: str, key: str, name: str) -> bool:
    """Does function `key` of `path` bind `name` anywhere (an assignment, a loop or `with`
    target, a walrus, a `global`)? True when the function is not found."""
    node = _parsed_function(project, path, key)
    return node is None or _rebinds_node(node, name)


def _rebinds_node(node, name: str) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id == name and isinstance(inner.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(inner, (ast.Global, ast.Nonlocal)) and name in inner.names:
            return True
    return False


def _parsed_function(project, path: str, key: str):
    tree = _parsed_module(project, path)
    return _function(tree, key) if tree is not None else None


def _parsed_module(project, path: str) -> Optional[ast.Module]:
    memo: Dict[str, Optional[ast.Module]] = project.__dict__.setdefault("_half_inplace_trees", {})
    if path not in memo:
        try:
            memo[path] = ast.parse(project.files.get(path) or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            memo[path] = None
    return memo[path]


def _function(tree: ast.Module, key: str):
    body = tree.body
    found = None
    for part in key.split("."):
        found = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _unconditional(body):
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _unconditional(stmt.body)
        else:
            yield stmt


def _float_back(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Expr):
        value = stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id == name:
        value = stmt.value
    else:
        return False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if _to_float32(value) and isinstance(value.func.value, (ast.Name, ast.Call)):
            root = value.func.value
            while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
                root = root.func.value
            return isinstance(root, ast.Name) and root.id == name
        value = value.func.value
    return False


def _to_float32(call: ast.Call) -> bool:
    method = call.func.attr  # type: ignore[union-attr]
    if method == "float":
        return not call.args
    if method not in ("to", "type"):
        return False
    values = list(call.args) + [k.value for k in call.keywords if k.arg == "dtype"]
    return any(isinstance(v, ast.Attribute) and v.attr in _FLOAT32 for v in values)


def _to_half(call: ast.Call) -> bool:
    method = call.func.attr  # type: ignore[union-attr]
    if method in ("half", "bfloat16"):
        return not call.args
    if method not in ("to", "type"):
        return False
    values = list(call.args) + [k.value for k in call.keywords if k.arg == "dtype"]
    return any(isinstance(v, ast.Attribute) and v.attr in ("float16", "half", "bfloat16") for v in values)


def _parameter(function, slot) -> Optional[str]:
    if isinstance(slot, int):
        return function.params[slot] if slot < function.positional else None
    return slot if slot in function.params else None


def floated_before_read(tree: ast.Module, line: int, name: str) -> bool:
    """Is the local `name` cast back to float32 in place (`name.float()` as a statement, or
    `name = name.float()`) by a statement of the innermost function holding `line`, before the
    statement that holds `line`, with no binding of `name` after it? Only the function's own
    statements (through `with`) count: one under an `if`, a loop or a `try` may not run."""
    function = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and (function is None or node.lineno > function.lineno):
            function = node
    floated = False
    for stmt in _unconditional(function.body if function is not None else tree.body):
        if (stmt.end_lineno or stmt.lineno) >= line:
            break
        if _float_back(stmt, name):
            floated = True
        elif _rebinds_node(stmt, name):
            floated = False
    return floated
