"""The dtypes an autocast's `dtype=` argument may hold when it picks one by a test:
`dtype=torch.bfloat16 if args.bf16 else torch.float16` written there, or a local name bound
once to such a choice (yolov5/yolov3's `amp_dtype = torch.bfloat16 if opt.bf16 else
torch.float16`, then `torch.autocast("cuda", dtype=amp_dtype)`). Exact or nothing: every arm
must name a torch float dtype, and the name must have no other binding in its function (no
parameter, global/nonlocal, loop, `with ... as`, walrus, augmented or nested-def binding of it
anywhere in the function's text), so the with reads the value the one assignment made."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import bound_names, iter_nodes, params
from amplint.analysis.facts.tree import Frame, dotted_name


def dtype_choices(expr: Optional[cst.BaseExpression], frame: Optional[Frame],
                  dtypes: Dict[str, str]) -> Tuple[str, ...]:
    """The dtypes (sorted, at least two) `expr` picks between; () when it is not such a choice.
    `dtypes`: "torch.bfloat16" -> "bfloat16", the float dtype names."""
    if isinstance(expr, cst.IfExp):
        return _arms(expr, dtypes)
    if not isinstance(expr, cst.Name) or frame is None:
        return ()
    scope = frame.scope
    if scope.kind != "function" or not isinstance(scope.node, cst.FunctionDef):
        return ()
    value = _only_binding(scope.node, expr.value)
    return _arms(value, dtypes) if isinstance(value, cst.IfExp) else ()


def _arms(expr: cst.IfExp, dtypes: Dict[str, str]) -> Tuple[str, ...]:
    found = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        for arm in (node.body, node.orelse):
            if isinstance(arm, cst.IfExp):
                stack.append(arm)
                continue
            name = dotted_name(arm)
            dtype = dtypes.get(".".join(name)) if name and name[0] == "torch" else None
            if dtype is None:
                return ()
            found.add(dtype)
    return tuple(sorted(found)) if len(found) > 1 else ()


def _only_binding(function: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """The value of the one `name = <value>` statement of `function` when nothing else in it
    binds `name`."""
    if any(p.name.value == name for p in params(function)):
        return None
    star = function.params.star_arg
    if isinstance(star, cst.Param) and star.name.value == name:
        return None
    if function.params.star_kwarg is not None and function.params.star_kwarg.name.value == name:
        return None
    value = None
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Assign):
            names = [n for t in node.targets for n in bound_names(t.target)]
            if name in names:
                if value is not None or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
                    return None
                value = node.value
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            if name in bound_names(node.target):
                return None
        elif isinstance(node, (cst.For, cst.CompFor)):
            if name in bound_names(node.target):
                return None
        elif isinstance(node, cst.WithItem):
            if node.asname is not None and name in bound_names(node.asname.name):
                return None
        elif isinstance(node, cst.NamedExpr):
            if name in bound_names(node.target):
                return None
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(item.name.value == name for item in node.names):
                return None
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if node.name.value == name:
                return None
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            if name in _imported(node):
                return None
        elif isinstance(node, cst.ExceptHandler):
            if node.name is not None and name in bound_names(node.name.name):
                return None
    return value


def _imported(node) -> set:
    names = node.names
    if isinstance(names, cst.ImportStar):
        return {"*"}
    found = set()
    for alias in names:
        if alias.asname is not None:
            found.update(bound_names(alias.asname.name))
        else:
            dotted = dotted_name(alias.name)
            if dotted:
                found.add(dotted[0])
    return found
