"""What a call of a project module instance of THIS file returns, for the dtype fact
(amplint.analysis.facts.dtypes; issue 26): LLaMA-Factory's reward trainer runs
`values = model(hidden)` under autocast with `model = ValueHeadModel()`, whose `forward` returns
`self.v_head(hidden).squeeze(-1)`: the call returns what that `forward` computes under the
caller's region (float16 here), as `self.v_head(hidden)` would inline.

The dtype walk carries an `InstanceValue` (the instance's class, known exactly) for

- `Cls(...)` (moved too: `.cuda()`, `.to(device)`, `.train()`), `Cls` a class of the file bound
  once at module level whose bases lead to `torch.nn.Module` through classes of the file; bound
  to a local it travels as any value does: through branches that agree, into a function of the
  file as an argument (dtype_calls.py, dtype_params.py);
- `self.<attr>` in a method of the class holding `self.<attr> = Cls(...)`, the file's only store
  of `.<attr>` (any receiver; no `setattr`, no store in another file: param_defaults.py).

A call of the value reads `forward` of that class (the call graph's method lookup through the
file's bases) with this call's arguments (dtype_calls.returned: a plain def ending in a return,
read under the region it runs in). Exact or nothing: no class of the chain defines `__call__`,
the file registers no forward hook, the class has no metaclass or keyword; anything else is no
value, so the call stays unknown."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.facts.dtype_value import InstanceValue, module_moved
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import Frame, dotted_name, self_attr

_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module")
_HOOKS = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook")


def constructed(dtypes, call: cst.Call, frame: Frame) -> Optional[InstanceValue]:
    """The instance `Cls(...)` (or `Cls(...).cuda()`) builds, when `Cls` is such a class."""
    while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
            and module_moved(call, frame):
        call = call.func.value
    func = call.func
    if not isinstance(func, cst.Name) or _shadowed(func.value, frame):
        return None
    return _instance(dtypes, func.value)


def held(dtypes, expr: cst.BaseExpression, frame: Frame) -> Optional[InstanceValue]:
    """The instance `self.<attr>` holds in a method of the class (or a subclass of the file)."""
    attr = self_attr(expr)
    cls = frame.class_frame
    if attr is None or cls is None or frame.function is None:
        return None
    facts = dtypes.facts
    for owner in _chain(facts, cls):
        sites = facts.index.self_assigns(owner).get(attr)
        if sites:
            value = sites[0].value
            if len(sites) != 1 or len(sites[0].targets) != 1 or not isinstance(value, cst.Call):
                return None
            found = constructed(dtypes, value, sites[0].frame)
            # the file-wide store count last: it walks the whole module once (param_defaults.py),
            # which most `self.<attr>` reads (no single store of a class's instance) never need
            if found is None or facts.param_defaults.attribute_stores(attr) != 1:
                return None
            return found
    return None


def forward_of(dtypes, instance: InstanceValue) -> Optional[Frame]:
    """The `forward` a call of `instance` runs: a plain method (no decorator, not async)."""
    forward = dtypes.facts.callgraph.method(instance.cls.name, "forward")
    node = forward.node if forward is not None else None
    if not isinstance(node, cst.FunctionDef) or node.decorators or node.asynchronous is not None:
        return None
    return forward


def _instance(dtypes, name: str) -> Optional[InstanceValue]:
    memo = dtypes.__dict__.setdefault("_instances", {})
    if name not in memo:
        memo[name] = _exact_class(dtypes, name)
    return memo[name]


def _exact_class(dtypes, name: str) -> Optional[InstanceValue]:
    facts = dtypes.facts
    module = facts.tree.module_frame
    cls = facts.tree.classes.get(name)
    if cls is None or cls.parent is not module or not dtypes.bound_once(name) \
            or name in module.imports or _hooked(facts):
        return None
    seen = 0
    stack = [cls]
    while stack:
        current = stack.pop()
        seen += 1
        node = current.node
        if seen > 8 or not isinstance(node, cst.ClassDef) or node.keywords or "__call__" in current.functions:
            return None
        for base in node.bases:
            if resolve_expr(base.value, module) in _BASES:
                continue
            parts = dotted_name(base.value)
            parent = facts.tree.classes.get(parts[0]) if parts and len(parts) == 1 else None
            if parent is None or parent.parent is not module or not dtypes.bound_once(parts[0]):
                return None
            stack.append(parent)
        if not node.bases:
            return None
    return InstanceValue(cls)


def _hooked(facts) -> bool:
    found = facts.__dict__.get("_forward_hooked")
    if found is None:
        found = any(isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value in _HOOKS
                    for site in facts.tree.calls)
        facts.__dict__["_forward_hooked"] = found
    return found


def _chain(facts, cls: Frame):
    """`cls` and its bases of the file, nearest first."""
    current: Optional[Frame] = cls
    for _ in range(8):
        if current is None:
            return
        yield current
        node = current.node
        bases = [dotted_name(b.value) for b in node.bases] if isinstance(node, cst.ClassDef) else []
        names = [b[0] for b in bases if b and len(b) == 1 and b[0] in facts.tree.classes]
        current = facts.tree.classes.get(names[0]) if len(names) == 1 else None


def _shadowed(name: str, frame: Frame) -> bool:
    """A function scope around `frame` binds `name` (a local or parameter, not the class)."""
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "function" and (name in scope.bindings or name in scope.imports):
            return True
        scope = scope.parent.scope if scope.parent is not None else None
    return False
