"""Return values of the file's own functions for amplint.analysis.facts.dtypes: with
`def rotate_half(t): return torch.cat((-t[..., 2:], t[..., :2]), -1)` in the file,
`rotate_half(q.half())` is float16. The callee's body is read again with its parameters bound to
this call's argument values; what that reading values goes to a scratch table, not the file's,
so each call site gets its own result and the function's own values stay those of its unbound
parameters.

Only a module-level `def` of this file bound once (no decorator, no `*args`/`**kwargs`, no
`yield`, ending in a `return`), called by its bare name where no local shadows it, two calls
deep at most; when the call runs under a region the callee must be known to run under one too
(it inherits the caller's). Anything else is unknown."""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from amplint.analysis.facts.dtype_value import Dtype, InstanceValue, Items, join_values, of
from amplint.analysis.facts.tree import Frame, iter_nodes

MAX_DEPTH = 2


def returned(dtypes, name: str, call: cst.Call, args: List[object], frame: Frame,
             method: Optional[Frame] = None) -> Optional[Dtype]:
    """`method`: a private method of the file's class called as `self.<name>(...)`
    (amplint.analysis.facts.dtype_params decides which), read the same way."""
    callee = method if method is not None else _callee(dtypes, name, frame)
    if callee is None or len(dtypes.calling) >= MAX_DEPTH or name in dtypes.calling:
        return None
    if method is not None and not _returns_value(dtypes, method.node):
        return None
    facts = dtypes.facts
    if facts.active_region(frame) is not None and facts.active_region(callee) is None:
        return None  # the callee would run under the caller's region, unseen
    if facts.active_region(frame) is None and dtypes.region_state(callee)[1] \
            and facts.active_region(callee) is not None:
        # read as surely under the region its other calls open (dtype_paths.py): this call,
        # outside any region (`enabled=False` inside one too), runs it without autocast
        return None
    bound = bind(callee.node, call, args, skip_first=method is not None)
    if bound is None:
        return None
    from amplint.analysis.facts.dtype_walk import _Walker

    saved = dtypes.values, dtypes.region_nodes
    dtypes.values, dtypes.region_nodes = {}, []
    dtypes.calling.append(name)
    try:
        results = _Walker(dtypes).call_body(callee.node, callee, bound)
    finally:
        dtypes.values, dtypes.region_nodes = saved
        dtypes.calling.pop()
    if not results or any(not isinstance(r, (Dtype, Items, InstanceValue)) for r in results):
        return None
    value = results[0]
    for other in results[1:]:
        value = join_values(value, other)
    return value


def _callee(dtypes, name: str, frame: Frame) -> Optional[Frame]:
    scope = frame.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "function" and name in scope.bindings:
            return None  # a local or parameter of this or an enclosing function
        scope = scope.parent.scope if scope.parent is not None else None
    callee = dtypes.facts.tree.module_frame.functions.get(name)
    if callee is None:
        return None
    node = callee.node
    if node.decorators or node.asynchronous is not None or _bound_more_than_once(dtypes, name):
        return None
    if isinstance(node.params.star_arg, cst.Param) or node.params.star_kwarg is not None:
        return None
    return callee if _returns_value(dtypes, node) else None


def _returns_value(dtypes, node: cst.FunctionDef) -> bool:
    """It ends in `return <value>` (it cannot fall off its end) and yields nothing. Read once
    per function of the file: every call of it, in every reading, asks again (issue 34)."""
    known = dtypes.returns_value.get(id(node))
    if known is None:
        known = dtypes.returns_value[id(node)] = _ends_in_return(node)
    return known


def _ends_in_return(node: cst.FunctionDef) -> bool:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
            and last.body[-1].value is not None):
        return False
    return not any(isinstance(n, (cst.Yield, cst.Await)) for n in iter_nodes(node.body))


def _bound_more_than_once(dtypes, name: str) -> bool:
    return not dtypes.bound_once(name)


def bind(node: cst.FunctionDef, call: cst.Call, args: List[object],
         skip_first: bool = False) -> Optional[Dict[str, object]]:
    """Parameter name -> the value this call passes (None: unknown, also for defaults);
    `skip_first`: a method called on `self`."""
    params = list(node.params.posonly_params) + list(node.params.params)
    if skip_first:
        if not params:
            return None
        params = params[1:]
    names = [p.name.value for p in params] + [p.name.value for p in node.params.kwonly_params]
    bound: Dict[str, object] = {name: None for name in names}
    given = set()
    positional = 0
    for arg, value in zip(call.args, args):
        if arg.star:
            return None
        if arg.keyword is None:
            if positional >= len(params):
                return None
            name = params[positional].name.value
            positional += 1
        else:
            name = arg.keyword.value
            if name not in bound or name in given:
                return None
        given.add(name)
        bound[name] = value
    for param in params + list(node.params.kwonly_params):
        if param.name.value not in given and param.default is not None:
            bound[param.name.value] = _literal(param.default)
    return bound


def _literal(expr: cst.BaseExpression) -> Optional[Dtype]:
    """A default that is a number literal (`k=2`, `eps=1e-6`, `-1`) as a Python number."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return of("pyint")
    if isinstance(expr, cst.Float):
        return of("pyfloat")
    return None
