"""Half casts whose dtype is a dataclass config's field (facts.half_callees.EntryDtypeField, from
amplint.analysis.project.dtype_fields): `model.to(device="cuda", dtype=args.model.param_dtype)`
where `args` is a parameter annotated with the config class (`args: TrainArgs`), or a local
bound once to `TrainArgs()`, and that field chain of the class defaults to a half dtype nothing
in the project changes. The fp16 fact adds them to its half casts; an autocast's
`dtype=cfg.amp_dtype` reads its region dtype the same way (autocast_calls.py)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.half_callees import LOCAL, EntryDtypeField
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes


def field_casts(tree, entries) -> Dict[int, Tuple[str, str]]:
    """id(call) -> (dtype, cite) for each `.to(...)` / `.type(...)` whose dtype is such a field."""
    fields = _by_name(entries)
    if not fields:
        return {}
    out: Dict[int, Tuple[str, str]] = {}
    for site in tree.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "type"):
            continue
        for arg in site.node.args:
            if arg.keyword is not None and arg.keyword.value != "dtype":
                continue
            entry = _field(arg.value, site.frame, fields)
            if entry is not None:
                out[id(site.node)] = (entry.dtype, entry.cite)
                break
    return out


def field_dtype(expr: cst.BaseExpression, frame: Frame, entries) -> Optional[EntryDtypeField]:
    """The field `expr` reads (`cfg.amp_dtype` with `cfg: TrainConfig`), when the project pass
    says it holds a half dtype nothing changes; None otherwise (an autocast's `dtype=`,
    autocast_calls.py)."""
    fields = _by_name(entries)
    return _field(expr, frame, fields) if fields else None


def _by_name(entries) -> Dict[Tuple[str, Tuple[str, ...]], List[EntryDtypeField]]:
    """(class name, chain) -> its entries: classes of one name in several modules, and a class
    a package's `__init__.py` exports under the package's name too."""
    fields: Dict[Tuple[str, Tuple[str, ...]], List[EntryDtypeField]] = {}
    for entry in entries:
        if isinstance(entry, EntryDtypeField):
            fields.setdefault((entry.cls, entry.chain), []).append(entry)
    return fields


def _field(expr: cst.BaseExpression, frame: Frame, fields) -> Optional[EntryDtypeField]:
    dotted = dotted_name(expr)
    if not dotted or len(dotted) < 2:
        return None
    root = _root_class(dotted[0], frame)
    if root is None:
        return None
    qualified, built_with_args = root
    for entry in fields.get((qualified.split(".")[-1], tuple(dotted[1:])), ()):
        if _same_class(qualified, entry) and (entry.any_args or not built_with_args):
            return entry
    return None


def _same_class(qualified: str, entry: EntryDtypeField) -> bool:
    """`apps.lm.config.TrainArgs` (absolute) or `.config.TrainArgs` (relative) for the class
    `TrainArgs` of module `apps.lm.config`; a class of this file for the entry its own file
    gets (module LOCAL)."""
    full = f"{entry.module}.{entry.cls}"
    if qualified.startswith(LOCAL + ".") or entry.module == LOCAL:
        return qualified == full
    return qualified == full or full.endswith("." + qualified.lstrip(".")) and "." in qualified.lstrip(".")


def _root_class(name: str, frame: Frame) -> Optional[Tuple[str, bool]]:
    """(the qualified class of `name` in its function, whether a call with arguments built it):
    the annotation of a parameter, or the class a local is bound to once (`args = TrainArgs()`);
    None when the function binds the name any other way."""
    function = frame.function
    node = function.node if function is not None else None
    if not isinstance(node, cst.FunctionDef):
        return None
    params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
    param = next((p for p in params if p.name.value == name), None)
    bound = [n for n in iter_nodes(node.body) if _binds(n, name)]
    if param is not None:
        if bound or param.annotation is None:
            return None
        qualified = _class_name(param.annotation.annotation, function)
        return (qualified, False) if qualified is not None else None
    if len(bound) != 1 or not isinstance(bound[0], cst.Assign) or len(bound[0].targets) != 1:
        return None
    value = bound[0].value
    if not isinstance(value, cst.Call):
        return None
    qualified = _class_name(value.func, function)
    return (qualified, bool(value.args)) if qualified is not None else None


def _class_name(expr: cst.BaseExpression, function: Frame) -> Optional[str]:
    """The qualified name of an imported class, or LOCAL.<name> of a class the file defines
    once at module level and binds no other way there."""
    qualified = resolve_expr(expr, function)
    if qualified is not None or not isinstance(expr, cst.Name):
        return qualified
    module = function
    while module.parent is not None:
        module = module.parent
    if expr.value in module.imports or not isinstance(module.node, cst.Module):
        return None
    binds = [s for s in module.node.body if _binds_at_module(s, expr.value)]
    if len(binds) == 1 and isinstance(binds[0], cst.ClassDef):
        return f"{LOCAL}.{expr.value}"
    return None


def _binds_at_module(stmt: cst.CSTNode, name: str) -> bool:
    if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
        return stmt.name.value == name
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(_binds(small, name) for small in stmt.body)
    return any(_binds(n, name) for n in iter_nodes(stmt))  # an `if`/`try` at module level


def _binds(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        targets = [node.asname.name]
    else:
        return False
    return any(isinstance(n, cst.Name) and n.value == name for t in targets for n in iter_nodes(t))
