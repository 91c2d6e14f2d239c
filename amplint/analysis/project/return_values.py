"""What a project function returns to its callers in other files, when every `return` agrees:
an outside function value (`partial(torch.nn.utils.clip_grad_norm_, max_norm=...)` or the
function's own name) or a list/tuple display of distinct names (`[dense_optimizer,
sparse_optimizer]`). Asked only for the calls a scaler summary marks as wanted (their value is
bound once to a local that the caller then calls, or iterates over with a scaler step inside:
scaler_summaries.py), and answered from the callee's text with Python's `ast`. Anything else
(a bare `return`, a path that falls off the end, a decorator, a generator, a name the module
binds twice, a target inside the project) gives no answer: the caller's rules stay as silent as
they were. The answer travels as a `facts.returned_values.EntryReturn` of the caller's file.

The same reading gives the KIND of value a function returns, the cross-file side of the
same-file summary (facts/function_returns.py) that the facts classifying a value read through a
call (`return_kind`, read only in files whose text can return one: return_kinds.py asks):
- "device": every `return` is `torch.device(...)` (or a conditional between two): sam2's
  `setup_device(accelerator, rank)` (AMP131);
- "finfo": every `return` is `[-]torch.finfo(p.dtype).min/max` of one parameter `p` never
  rebound: ldm's `max_neg_value(t)` (AMP111, with the call's argument for `p`);
- "half": every `return` gives one local that a statement of the function casts with `.half()`
  (`model = model.half()`, `model.cuda().half()`), or every `return` is itself a `.half()` call
  (latent-diffusion's `return model.half()` loader): waveglow's builder (AMP152); `param` names
  the parameter guarding the cast (`if fp16_run:`), `bound` "off" when its default is
  False/None (a call leaving it out gets the float32 model)."""

from __future__ import annotations

import ast
import sys
from typing import Dict, Optional, Tuple

from amplint.analysis.facts.names import _CANONICAL, _KEYWORD_READERS, _READ_KEYWORDS
from amplint.analysis.project.opener_names import dotted_text

# the targets a returned function value may have: outside the project for sure
_LIBRARIES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy"}
_MEMO: Dict[Tuple[str, int], Dict[str, Tuple[str, int, int]]] = {}
_KIND_MEMO: Dict[Tuple[str, int], Dict[str, "Kind"]] = {}

# (kind, the parameter it reads or "", its position or -1, "min"/"max" or "", line of the `def`)
Kind = Tuple[str, str, int, str, int]
KIND_WORDS = {"device": "device(", "finfo": "finfo(", "half": ".half()"}  # a file that can return one holds this

Returned = Tuple[str, int]  # (outside function, or ""; display length, or 0)


def function_returns(path: str, text: str, key: str) -> Optional[Tuple[str, int, int]]:
    """What module function `key` of the file returns on every path, and the line of its `def`
    (for messages), or None."""
    memo_key = (path, hash(text))
    found = _MEMO.get(memo_key)
    if found is None:
        found = _MEMO[memo_key] = _module_returns(text)
        if len(_MEMO) > 2000:
            _MEMO.clear()
    return found.get(key)


def _module_returns(text: str) -> Dict[str, Tuple[str, int, int]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    imports, counts = _module_names(tree)
    out: Dict[str, Tuple[str, int, int]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and counts.get(stmt.name) == 1 and not stmt.decorator_list:
            value = _returns(stmt, imports)
            if value is not None:
                out[stmt.name] = (*value, stmt.lineno)
    return out


def _module_names(tree: ast.Module) -> Tuple[Dict[str, str], Dict[str, int]]:
    """The module's imports bound once (name -> qualified target) and how often it binds each name."""
    imports: Dict[str, str] = {}
    counts: Dict[str, int] = {}
    for stmt in tree.body:
        for name, target in _bound(stmt):
            counts[name] = counts.get(name, 0) + 1
            if target is not None:
                imports[name] = target
    imports = {name: target for name, target in imports.items() if counts[name] == 1}
    return imports, counts


def _bound(stmt: ast.stmt):
    """(name, the import's qualified target or None) for each module-level binding."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            target = f"{stmt.module}.{alias.name}" if stmt.module and not stmt.level else None
            yield alias.asname or alias.name, target
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name, None
    else:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                yield node.id, None
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    yield (alias.asname or alias.name).split(".")[0], None


def _returns(function: ast.FunctionDef, imports: Dict[str, str]) -> Optional[Returned]:
    if not function.body or not isinstance(function.body[-1], ast.Return):
        return None  # a path may fall off the end (None)
    local = {a.arg for a in (*function.args.posonlyargs, *function.args.args,
                             *function.args.kwonlyargs)}
    local |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
    returns = []
    for node in _own_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return None
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Return):
            returns.append(node.value)
    answers = {_value(value, imports, local) for value in returns}
    if len(answers) != 1:
        return None
    (answer,) = answers
    return answer


def _own_nodes(function: ast.FunctionDef):
    """The function's nodes, nested defs, lambdas and classes left out (their returns are not
    this function's)."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _value(node: Optional[ast.expr], imports: Dict[str, str], local) -> Optional[Returned]:
    if isinstance(node, (ast.List, ast.Tuple)):
        texts = [dotted_text(e) for e in node.elts]
        if len(texts) < 2 or None in texts or len(set(texts)) != len(texts):
            return None
        return ("", len(texts))
    if isinstance(node, ast.Call):
        if _qualified(node.func, imports, local) != "functools.partial" or not node.args:
            return None
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            return None  # positional arguments bound: not the function at its calls
        if any(k.arg is None or k.arg in _READ_KEYWORDS for k in node.keywords):
            return None
        target = _qualified(node.args[0], imports, local)
        return (target, 0) if target is not None and target not in _KEYWORD_READERS else None
    target = _qualified(node, imports, local) if node is not None else None
    return (target, 0) if target is not None else None



def _qualified(node: ast.expr, imports: Dict[str, str], local) -> Optional[str]:
    """The outside name `node` spells through the module's imports (None: a local, a name of
    the project, anything not a dotted name)."""
    text = dotted_text(node)
    if text is None:
        return None
    root, _, rest = text.partition(".")
    if root in local or root not in imports:
        return None
    full = imports[root] + ("." + rest if rest else "")
    if full.split(".", 1)[0] not in _LIBRARIES:
        return None
    return _CANONICAL.get(full, full)


def return_kind(path: str, text: str, key: str) -> Optional[Kind]:
    """The kind of value module function `key` of the file returns on every path, or None."""
    memo_key = (path, hash(text))
    found = _KIND_MEMO.get(memo_key)
    if found is None:
        found = _KIND_MEMO[memo_key] = _module_kinds(text) if any(
            word in text for word in KIND_WORDS.values()) else {}
        if len(_KIND_MEMO) > 2000:
            _KIND_MEMO.clear()
    return found.get(key)


def _module_kinds(text: str) -> Dict[str, Kind]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    imports, counts = _module_names(tree)
    out: Dict[str, Kind] = {}
    lines = text.splitlines()
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and counts.get(stmt.name) == 1:
            for key, function, method in _class_methods(stmt):
                _add_kind(out, key, function, imports, lines, method)
        if not isinstance(stmt, ast.FunctionDef) or counts.get(stmt.name) != 1 or stmt.decorator_list:
            continue
        _add_kind(out, stmt.name, stmt, imports, lines, False)
    return out


def _class_methods(cls: ast.ClassDef):
    """("Cls.m", the def, whether its first parameter is the receiver) for the staticmethods and
    classmethods of a class (a call `Cls.m(...)` reaches them), each defined once in its body."""
    names = [s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef) or names.count(stmt.name) != 1 or len(stmt.decorator_list) != 1:
            continue
        decorator = stmt.decorator_list[0]
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            yield f"{cls.name}.{stmt.name}", stmt, decorator.id == "classmethod"


def _add_kind(out: Dict[str, Kind], key: str, function: ast.FunctionDef, imports, lines, method: bool) -> None:
    own = "\n".join(lines[function.lineno - 1:function.end_lineno or function.lineno])
    if any(word in own for word in KIND_WORDS.values()):  # its text can return one
        kind = _kind(function, imports, method)
        if kind is not None:
            out[key] = kind if len(kind) == 5 else (*kind, function.lineno)  # type: ignore[assignment]


def _kind(function: ast.FunctionDef, imports: Dict[str, str],
          method: bool = False) -> Optional[Tuple[str, str, int, str]]:
    """`method`: a classmethod, whose first parameter the call does not fill."""
    if not _terminates(function.body):
        return None  # a path may fall off the end (None)
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method:
        if not positional:
            return None
        receiver, positional = positional[0], positional[1:]
        if _stores(function, receiver):
            return None
    else:
        receiver = ""
    local = set(positional) | {a.arg for a in args.kwonlyargs} | ({receiver} if receiver else set())
    local |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    stored = set()
    returns = []
    for node in _own_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)):
            return None
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stored.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Return):
            if node.value is None:
                return None
            returns.append(node.value)
    local |= stored
    if not returns:
        return None  # every path raises
    if all(_half_call(value) for value in returns):  # `return model.half()`: the cast is the value
        return ("half", "", -1, "", returns[0].lineno)
    if all(isinstance(value, ast.Name) for value in returns):
        found = _half_kind(function, {value.id for value in returns}, stored)  # type: ignore[attr-defined]
        return None if found is not None and found[1] and receiver else found  # a guard's position would be off
    answers = {_value_kind(value, imports, local) for value in returns}
    if len(answers) != 1:
        return None
    (answer,) = answers
    if answer is None:
        return None
    if answer[0] == "finfo":
        param = answer[1]
        if param in stored or param not in positional and param not in {a.arg for a in args.kwonlyargs}:
            return None  # not a parameter, or rebound in the function
        index = positional.index(param) if param in positional else -1
        return ("finfo", param, index, answer[3])
    return answer


def _value_kind(node: ast.expr, imports: Dict[str, str], local) -> Optional[Tuple[str, str, int, str]]:
    if isinstance(node, ast.IfExp):
        body, orelse = _value_kind(node.body, imports, local), _value_kind(node.orelse, imports, local)
        return body if body is not None and body == orelse and body[0] == "device" else None
    if isinstance(node, ast.Call) and _qualified(node.func, imports, local) == "torch.device":
        return ("device", "", -1, "")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if not (isinstance(node, ast.Attribute) and node.attr in ("min", "max")):
        return None
    call = node.value
    if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords
            and _qualified(call.func, imports, local) == "torch.finfo"):
        return None
    arg = call.args[0]
    if not (isinstance(arg, ast.Attribute) and arg.attr == "dtype" and isinstance(arg.value, ast.Name)):
        return None
    return ("finfo", arg.value.id, -1, node.attr)


def _terminates(body) -> bool:
    """Does every path through `body` end in a `return` or `raise`?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    if isinstance(last, ast.With):
        return _terminates(last.body)
    return False


def _half_kind(function: ast.FunctionDef, names, stored) -> Optional[Kind]:
    """("half", guarding parameter or "", its position, "off" or "", the cast's line) when the
    one local every `return` gives is cast with `.half()` by a statement of the function."""
    if len(names) != 1:
        return None
    (name,) = names
    if name not in stored:
        return None  # a parameter: what the callers pass (half_params.py), not a built model
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    cast = _cast_guards(function.body, name, ())
    if cast is None:
        return None
    cast, line = cast
    if _undone_after(function, name, line):
        return None  # `model = model.float()` (or another binding) after the cast
    guard = next((test for test in cast if test in positional or test in {a.arg for a in args.kwonlyargs}), "")
    if not guard:
        return ("half", "", -1, "", line)
    index = positional.index(guard) if guard in positional else -1
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    default = defaults.get(guard)
    off = isinstance(default, ast.Constant) and default.value in (False, None)
    return ("half", guard, index, "off" if off else "", line)


def _stores(function: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del))
               for n in _own_nodes(function))


def _half_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "half" \
        and not node.args and not node.keywords


def _undone_after(function: ast.FunctionDef, name: str, line: int) -> bool:
    """Something after the cast's line may make `name` not the half model: a binding of it that
    is not a move of itself (`name = name.cuda()`), or a call of a dtype method on it
    (`name.float()`, `name.to(torch.float32)`, `name.type(...)`); `.to(device)` moves it."""
    for node in _own_nodes(function):
        if getattr(node, "lineno", 0) <= line:
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            parent_value = _assigned_value(function, node)
            if parent_value is None or not _moves_only(parent_value, name):
                return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _DTYPE_METHODS and _root_name(node.func.value) == name
                and not (node.func.attr == "to" and _device_only(node))):
            return True
    return False


_DTYPE_METHODS = frozenset({"float", "double", "bfloat16", "to", "type"})


def _assigned_value(function: ast.FunctionDef, target: ast.Name) -> Optional[ast.expr]:
    for node in _own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is target:
            return node.value
    return None


def _moves_only(value: ast.expr, name: str) -> bool:
    """`name.cuda()`, `name.to(device)`, `name.cuda().train()`: the same model, moved."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr not in _MOVES or (value.func.attr == "to" and not _device_only(value)):
            return False
        value = value.func.value
    return isinstance(value, ast.Name) and value.id == name


def _device_only(call: ast.Call) -> bool:
    """`.to(device)`, `.to("cuda")`, `.to(args.device)`: one argument that names a device."""
    if call.keywords or len(call.args) != 1:
        return False
    text = ast.unparse(call.args[0])
    return "device" in text or text.strip("'\"") in ("cuda", "cpu")


def _root_name(node: ast.expr) -> Optional[str]:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


def _cast_guards(body, name: str, tests: Tuple[str, ...]) -> Optional[Tuple[Tuple[str, ...], int]]:
    """The names tested by the `if NAME:`s around the first statement that casts `name` to half
    (`name = name.half()`, `name.cuda().half()`) and its line, or None when no statement does."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = (stmt.test.id,) if isinstance(stmt.test, ast.Name) else ()
            found = _cast_guards(stmt.body, name, tests + test)
            if found is None:
                found = _cast_guards(stmt.orelse, name, tests)
        elif isinstance(stmt, (ast.With, ast.For, ast.While, ast.Try)):
            found = _cast_guards(stmt.body, name, tests)
        else:
            found = (tests, stmt.lineno) if _casts_half(stmt, name) else None
        if found is not None:
            return found
    return None


def _casts_half(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or stmt.targets[0].id != name:
            return False
        value = stmt.value
    elif isinstance(stmt, ast.Expr):
        value = stmt.value
    else:
        return False
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "half"
            and not value.args and not value.keywords):
        return False
    root = value.func.value
    while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and root.func.attr in _MOVES:
        root = root.func.value  # `model.cuda().half()`
    return isinstance(root, ast.Name) and root.id == name


_MOVES = frozenset({"cuda", "cpu", "to", "train", "eval"})
