"""Methods that run their module's forward without grad (AMP150): a method decorated
`@torch.no_grad()` / `@torch.inference_mode()` whose body calls `self(...)` or
`self.forward(...)` (nanoGPT's `GPT.generate`, a sampler's `sample`). A call of it is a no-grad
forward of the receiver, whatever grad mode the caller is in.

Same file: the rule asks `nograd_forward(method frame)`. Another file: the project pass finds
the method a region's call runs through the class flow (`model.generate(...)` where `model`
holds `GPT` of model.py) and hands the calling file an `EntryNoGradCall` naming the call by its
function, receiver and method (amplint.analysis.project.nograd_entries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import calls_in, code_children, iter_nodes
from amplint.analysis.facts.tree import Frame

NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
           "torch.autograd.grad_mode.no_grad", "torch.autograd.inference_mode",
           "torch.autograd.grad_mode.inference_mode")
# grad back on inside a no_grad block (or maybe: `set_grad_enabled(flag)`)
GRAD_ON = ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad",
           "torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
           "torch.autograd.grad_mode.set_grad_enabled")


def _mode(expr, scope) -> Optional[bool]:
    """True: `expr` (a decorator or `with` item) turns grad off; False: it may turn it on;
    None: neither. `inference_mode(False)` / `set_grad_enabled(...)` other than a literal False
    may turn it on."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    name = resolve_expr(func, scope)
    args = list(expr.args) if isinstance(expr, cst.Call) else []
    first = args[0].value if args else None
    literal_false = isinstance(first, cst.Name) and first.value == "False"
    if name in NO_GRAD:
        return not (name.endswith("inference_mode") and first is not None and not (
            isinstance(first, cst.Name) and first.value == "True"))
    if name in GRAD_ON:
        return bool(name.endswith("set_grad_enabled") and literal_false)
    return None


@dataclass(frozen=True)
class EntryNoGradCall:
    """`receiver.method(...)` in function `scope` of this file ("" at module level) runs the
    receiver's forward under no_grad: `method` of `cls` (defined at `where`) is."""

    scope: str
    receiver: Tuple[str, ...]  # ("model",), ("self", "policy")
    method: str
    cls: str
    where: str  # "model.py:101", for messages


def nograd_forward(method: Optional[Frame]) -> bool:
    """The method is decorated no_grad/inference_mode and calls `self(...)`/`self.forward(...)`."""
    if method is None or method.kind != "function":
        return False
    node = method.node
    if not isinstance(node, cst.FunctionDef) or not node.params.params:
        return False
    scope = method.parent or method
    if not any(resolve_expr(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator, scope)
               in NO_GRAD for d in node.decorators):
        return False
    me = node.params.params[0].name.value
    nested = {id(call) for inner in iter_nodes(node.body) if inner is not node.body
              and isinstance(inner, (cst.FunctionDef, cst.ClassDef)) for call in calls_in(inner)}
    for call in calls_in(node.body):
        if id(call) in nested:
            continue  # a nested def's `self(...)` runs when it is called, maybe after no_grad
        func = call.func
        if isinstance(func, cst.Name) and func.value == me:
            return True
        if (isinstance(func, cst.Attribute) and func.attr.value == "forward"
                and isinstance(func.value, cst.Name) and func.value.value == me):
            return True
    return False


@dataclass(frozen=True)
class EntryNoGradFunction:
    """A call of the function `ref` (qualified, as the calling file's imports resolve it) runs
    the arguments bound to `params` ((position, name) of parameters) forward without grad:
    the function, defined at `where` in another file, calls those parameters under no_grad
    (FixMatch's `@torch.no_grad() def pseudo_label(model, inputs_u_w, ...)`)."""

    ref: str
    params: Tuple[Tuple[int, str], ...]
    where: str  # "utils/ssl.py:5"


@dataclass(frozen=True)
class EntryNoGradArgs:
    """`receiver.method(...)` in function `scope` of this file runs the arguments bound to
    `params` forward without grad: `method` of `cls` (defined at `where`, another file) calls
    those parameters under no_grad (a semi-supervised trainer's `self.ssl.pseudo_label(model,
    weak)`)."""

    scope: str
    receiver: Tuple[str, ...]
    method: str
    params: Tuple[Tuple[int, str], ...]
    cls: str
    where: str


@dataclass(frozen=True)
class EntryNoGradHeld:
    """`receiver(...)` in function `scope` of this file runs, without grad, the module this
    function also holds as `held`: the receiver's class (`cls`, its `method` defined at `where`
    in another file) stores the module it is built with and calls it under no_grad (MixMatch's
    label guesser built with the model the loop then trains)."""

    scope: str
    receiver: Tuple[str, ...]
    held: Tuple[str, ...]
    cls: str
    method: str
    where: str


def nograd_params(function: Optional[Frame]) -> Tuple[Tuple[int, str], ...]:
    """(position, name) of the parameters a module-level function, or a method, calls
    (`p(...)`, `p.forward(...)`) under no_grad: it is decorated no_grad/inference_mode, or the
    call sits in one of its own `with torch.no_grad():` blocks. A parameter it binds again is
    left out (it may no longer hold the argument); so is a call in a nested def (it runs
    later). A method's positions count from the parameter after `self` / `cls` (as the call
    `obj.m(model, x)` fills them); a staticmethod's from the first."""
    if function is None or function.kind != "function" or function.parent is None \
            or function.parent.kind not in ("module", "class"):
        return ()
    node = function.node
    if not isinstance(node, cst.FunctionDef):
        return ()
    scope = function.parent
    bound = scope.kind == "class" and not any(
        resolve_expr(d.decorator, scope) == "staticmethod" for d in node.decorators)
    names = _positions(node, bound)
    if names is None:
        return ()
    called, rebound = _nograd_calls(function)
    found = {}
    for func in called:
        if isinstance(func, cst.Name) and func.value in names:
            found[func.value] = names[func.value]
    return tuple(sorted((index, name) for name, index in found.items() if name not in rebound))


def _positions(node: cst.FunctionDef, bound: bool) -> Optional[Dict[str, int]]:
    """Each parameter's position among the call's positional arguments (-1: keyword-only);
    `bound`: a method's first parameter is its instance, not an argument (None: it has none)."""
    positional = list(node.params.posonly_params) + list(node.params.params)
    if bound:
        if not positional:
            return None
        positional = positional[1:]
    names = {p.name.value: i for i, p in enumerate(positional)}
    names.update({p.name.value: -1 for p in node.params.kwonly_params})
    return names


def grad_params(function: Optional[Frame]) -> Tuple[Tuple[int, str, cst.Call], ...]:
    """(position, name, the call) of the parameters a module-level function, or a method, runs
    forward (`p(...)`, `p.forward(...)`) in the grad mode of its caller: the call is in a
    statement straight in its body (no branch, loop, `with` or nested def on the way), the
    function has no decorator but `staticmethod`, and binds the parameter nowhere again.
    Positions count as nograd_params counts them."""
    if function is None or function.kind != "function" or function.parent is None \
            or function.parent.kind not in ("module", "class"):
        return ()
    node = function.node
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return ()
    scope = function.parent
    if any(resolve_expr(d.decorator, scope) != "staticmethod" for d in node.decorators):
        return ()
    names = _positions(node, scope.kind == "class" and not node.decorators)
    if names is None:
        return ()
    _called, rebound = _nograd_calls(function)
    found = {}
    for stmt in node.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine) or any(
                isinstance(n, (cst.IfExp, cst.BooleanOperation)) for n in iter_nodes(stmt)):
            continue  # a call in one branch of an expression may not run
        for call in calls_in(stmt):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                func = func.value
            if isinstance(func, cst.Name) and func.value in names and func.value not in rebound:
                found.setdefault(func.value, call)
    return tuple(sorted(((names[name], name, call) for name, call in found.items()), key=lambda t: t[:2]))


def nograd_only_after(function: Optional[Frame], name: str, grad_call: cst.Call) -> bool:
    """Every call the function makes of parameter `name` under no_grad sits in a statement of its
    body after the one holding `grad_call` (its grad forward of that parameter, grad_params):
    one call of the function runs the parameter with grad first, then without."""
    if function is None or not isinstance(function.node, cst.FunctionDef) \
            or not isinstance(function.node.body, cst.IndentedBlock):
        return False
    called, _rebound = _nograd_calls(function)
    targets = {id(func) for func in called if isinstance(func, cst.Name) and func.value == name}
    grad_at = None
    for index, stmt in enumerate(function.node.body.body):
        inside = {id(n) for n in iter_nodes(stmt)}
        if id(grad_call) in inside:
            grad_at = index
        if targets & inside and (grad_at is None or grad_at == index):
            return False  # a no-grad call before the grad forward, or in its statement
    return grad_at is not None


def nograd_self_attrs(function: Optional[Frame]) -> Tuple[str, ...]:
    """The attributes `x` a method calls as `self.x(...)` / `self.x.forward(...)` under no_grad
    (decorated, or in one of its own `with torch.no_grad():` blocks): a callable object holding
    a model it runs without grad (MixMatch-style label guessing in `__call__`)."""
    if function is None or function.kind != "function" or function.parent is None \
            or function.parent.kind != "class" or not isinstance(function.node, cst.FunctionDef):
        return ()
    called, rebound = _nograd_calls(function)
    if "self" in rebound:
        return ()
    return tuple(sorted({func.attr.value for func in called if isinstance(func, cst.Attribute)
                         and isinstance(func.value, cst.Name) and func.value.value == "self"}))


def _nograd_calls(function: Frame):
    """(the callees, `.forward` dropped, of the calls a function makes under no_grad; the names
    it binds again)."""
    node = function.node
    scope = function.parent
    modes = [_mode(d.decorator, scope) for d in node.decorators]
    decorated = True in modes and False not in modes
    called = []
    rebound = set()
    stack = [(node.body, decorated)]
    while stack:
        current, off = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
                rebound.add(current.name.value)
            continue
        target = _TARGETS.get(type(current))
        if target is not None:
            rebound.update(_target_names(target(current)))
        if isinstance(current, cst.With):
            modes = [_mode(item.item, function) for item in current.items]
            inner = (off or True in modes) and False not in modes
            stack.extend((item, off) for item in current.items)
            stack.append((current.body, inner))
            continue
        if isinstance(current, cst.Call) and off:
            func = current.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                func = func.value
            called.append(func)
        stack.extend((child, off) for child in code_children(current))
    return called, rebound


_TARGETS = {
    cst.AssignTarget: lambda n: n.target, cst.AnnAssign: lambda n: n.target,
    cst.AugAssign: lambda n: n.target, cst.For: lambda n: n.target,
    cst.NamedExpr: lambda n: n.target, cst.WithItem: lambda n: n.asname.name if n.asname else None,
}


def _target_names(target) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()
