"""Whether a call's tensor arguments are float32 on every path that reaches it: the manual form
of `custom_fwd(cast_inputs=torch.float32)` (`x = x.float()` before `Fn.apply(x)`, or
`Fn.apply(x.float())`). Used by AMP151.

An argument counts as float32 when it is
- a float32 cast written inline (`x.float()`, `x.to(torch.float32)`, see `is_float32_cast`);
- a local whose last assignment before the call is such a cast, not rebound, mutated or made
  global in between (the shared def-use facts), and the assignment runs on every path to the
  call: in the same block as the call or an enclosing one (a `with` body counts), or in the body
  of one `if` with no `else` whose test is a dtype guard (`if x.dtype == torch.float16:`);
- not a floating tensor at all: a literal, or `self.attr` where every assignment of the
  attribute in the class is a literal or a plain parameter of the assigning method, possibly
  through `_pair`/`int`/`float`/`tuple` (detectron2's `self.spatial_scale = spatial_scale`).

A guard that checks only float16 leaves bfloat16 inputs uncast: the answer is then "float16"
(safe only where the region's dtype is float16); a guard such as `!= torch.float32` or
`in (torch.float16, torch.bfloat16)` casts both and counts as unconditional ("always")."""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from amplint.analysis.facts.half_values import is_float32_cast
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import children_in_visit_order, params, self_attr, unparen

ALWAYS, FLOAT16_ONLY = "always", "float16"
_HALF = ("torch.float16", "torch.half")
_BF16 = ("torch.bfloat16",)
_F32 = ("torch.float32", "torch.float")
_CONFIG_WRAPPERS = ("_pair", "_single", "_triple", "_quadruple", "to_2tuple", "int", "float",
                    "tuple", "bool")
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def float32_arguments(facts, site) -> Optional[str]:
    """ALWAYS when every argument of the call at `site` that may be a floating tensor is
    float32 on every path to it (and at least one is cast), FLOAT16_ONLY when some are cast
    only under a float16-only guard, None otherwise."""
    function = site.frame.function
    if function is None or not site.node.args:
        return None
    answer, cast = ALWAYS, False
    parents = _parents(function.node)
    for arg in site.node.args:
        if arg.star:
            return None
        value = unparen(arg.value)
        if isinstance(value, cst.Call) and is_float32_cast(value, site.frame):
            cast = True
            continue
        if _not_floating(value, site.frame, facts):
            continue
        if not isinstance(value, cst.Name):
            return None
        found = _cast_before(value.value, site, function.node, parents, facts)
        if found is None:
            return None
        cast = True
        if found == FLOAT16_ONLY:
            answer = FLOAT16_ONLY
    return answer if cast else None


def _parents(root: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    found: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        for child in children_in_visit_order(node):
            found[id(child)] = node
            stack.append(child)
    return found


def _ancestors(node: cst.CSTNode, parents: Dict[int, cst.CSTNode]) -> List[cst.CSTNode]:
    chain = []
    while id(node) in parents:
        node = parents[id(node)]
        chain.append(node)
    return chain


def _cast_before(name: str, site, function: cst.FunctionDef, parents, facts) -> Optional[str]:
    """How the last float32 cast assigned to `name` before the call reaches it (see module)."""
    defuse = facts.defuse
    candidates = []
    for assign in facts.tree.assigns:
        if assign.frame.function is not site.frame.function or assign.line_stmt is None:
            continue
        if len(assign.targets) != 1 or not isinstance(assign.targets[0], cst.Name):
            continue
        if assign.targets[0].value != name or not isinstance(assign.value, cst.Call):
            continue
        if not is_float32_cast(assign.value, site.frame):
            continue
        try:
            if not defuse.precedes(assign.line_stmt, site.node, function):
                continue
            changes = defuse.changes(name, assign.line_stmt, site.node, function)
        except KeyError:
            continue
        if any(change.kind != "passed" for change in changes):
            continue
        candidates.append(assign.line_stmt)
    for stmt in candidates:
        shared = {id(node) for node in _ancestors(site.node, parents)}
        guard = ALWAYS
        for node in _ancestors(stmt, parents):
            if id(node) in shared:
                break
            if isinstance(node, cst.If):
                if node.orelse is not None or guard != ALWAYS:
                    guard = None
                    break
                guard = _dtype_guard(node.test, site.frame)
                if guard is None:
                    break
            elif not isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite, cst.With)):
                guard = None
                break
        if guard is not None:
            return guard
    return None


def _dtype_guard(test: cst.BaseExpression, frame) -> Optional[str]:
    """`x.dtype == torch.float16` -> FLOAT16_ONLY; `!= torch.float32`, `in (torch.float16,
    torch.bfloat16)` -> ALWAYS; anything else None."""
    test = unparen(test)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    operator, right = target.operator, unparen(target.comparator)
    if isinstance(operator, (cst.Equal, cst.Is)):
        return FLOAT16_ONLY if resolve_expr(right, frame) in _HALF else None
    if isinstance(operator, (cst.NotEqual, cst.IsNot)):
        return ALWAYS if resolve_expr(right, frame) in _F32 else None
    if isinstance(operator, cst.In) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        names = {resolve_expr(element.value, frame) for element in right.elements}
        if names & set(_HALF):
            return ALWAYS if names & set(_BF16) else FLOAT16_ONLY
    return None


def _not_floating(value: cst.BaseExpression, frame, facts) -> bool:
    if isinstance(value, _LITERALS):
        return True
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return True
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(_not_floating(unparen(e.value), frame, facts) for e in value.elements)
    attr = self_attr(value)
    cls = frame.function.class_frame if frame.function is not None else None
    if attr is None or cls is None:
        return False
    assigns = facts.index.self_assigns(cls).get(attr)
    return bool(assigns) and all(_config_value(a.value, a.frame) for a in assigns)


def _config_value(value: cst.BaseExpression, frame) -> bool:
    """A literal, a parameter of the assigning method, or `_pair(...)` / `int(...)` of those."""
    value = unparen(value)
    if isinstance(value, _LITERALS) or (isinstance(value, cst.Name) and value.value in ("None", "True", "False")):
        return True
    if isinstance(value, cst.Name):
        function = frame.function
        return function is not None and value.value in {p.name.value for p in params(function.node)}
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return value.func.value in _CONFIG_WRAPPERS and all(
            not a.star and _config_value(a.value, frame) for a in value.args
        )
    return False


__all__ = ["ALWAYS", "FLOAT16_ONLY", "float32_arguments"]
