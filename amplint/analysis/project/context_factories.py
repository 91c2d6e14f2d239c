"""Regions opened through an opener *factory* of another file (mlfoundations/open_clip's idiom):

    # src/open_clip_train/precision.py
    def get_autocast(precision, device_type="cuda"):
        if precision == "amp":
            return partial(torch.amp.autocast, device_type=device_type)
        ...
        return suppress

    # src/open_clip_train/train.py
    autocast = get_autocast(args.precision, device_type=device.type)
    with autocast():
        image_features = model.encode_image(images)

The function's value is not a context but a callable whose call is one. context_openers.py finds
the module-level functions whose every `return` is a `partial` of an autocast API or a plain
context (`suppress`, `nullcontext`: a path without a region, so maybe enabled), read by the
defining file's facts (facts/opener_factories.factory_opened). Here, in the files that name
such a function: a local bound exactly once in a function, to a call of it that the caller's
imports resolve to that function, then `with local():` (no arguments: they could override
`enabled=` or the dtype) in that same function. The calling file gets an EntryContextRegion
marked `factory` (its RegionAnalysis reads the local as an alias, as it reads a local `partial`)
and the calls under the `with` seed the propagation."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Tuple

from amplint.analysis.facts.region_entries import EntryContextRegion
from amplint.analysis.project.context_params import seeds_under
from amplint.analysis.project.opener_names import dotted_text, resolved_opener, scopes
from amplint.analysis.project.scan_view import paths_holding

# (function key, the factory as written, the local, line of the `with`, (first, last) line of its body)
_WITH_CALLED = re.compile(r"\bwith\s+\w+\(\s*\)\s*:")
FactoryWith = Tuple[str, str, str, int, Tuple[int, int]]


def factory_region_seeds(project, factories) -> list:
    seeds: list = []
    withs: Dict[str, List[FactoryWith]] = {}
    for name in sorted(factories):
        for caller in paths_holding(project, name):  # (the pass's scan of the word)
            text = project.files.get(caller) or ""
            if "with" not in text or not _WITH_CALLED.search(text) or not bound_call(text, name):
                continue  # no `with local():`, or no `local = ...name(` (text tests before `ast`)
            summary = project.summary(caller)
            if summary is None or summary.flow is None:
                continue
            if caller not in withs:
                withs[caller] = _factory_withs(text, dotted_text)
            for key, written, local, line, span in withs[caller]:
                if "." in written and written.rsplit(".", 1)[-1] != name:
                    continue  # a plain name may be imported `as` another (resolved_opener reads it)
                found = resolved_opener(project, caller, written, name)
                for path, info, cite, _param, _forwards in factories[name]:
                    if found != (path, (name,)) or path == caller:
                        continue
                    desc = f"{local}() at {project.display(caller)}:{line} ({local} <- {written}(...); {cite})"
                    deciding = frozenset({caller, path})
                    if info[0].value != "disabled":
                        seeds.extend(seeds_under(project, caller, key, span, info, desc, deciding))
                    project.__dict__.setdefault("opener_regions", {}).setdefault(caller, set()).add(
                        EntryContextRegion(key, written, *info, desc, None, False, True))
                    project.__dict__.setdefault("opener_deps", {}).setdefault(caller, set()).add(path)
    return seeds


def bound_call(text: str, name: str) -> bool:
    """Does the text bind a call of `name` (`x = name(`, `x = pkg.name(`, or of the name it is
    imported `as`)?"""
    names = [name] + re.findall(r"\b%s\s+as\s+(\w+)" % re.escape(name), text)
    return re.search(r"=\s*[\w.]*\b(?:%s)\s*\(" % "|".join(map(re.escape, names)), text) is not None


def _factory_withs(text: str, dotted_text) -> List[FactoryWith]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: List[FactoryWith] = []
    for _parent, node, key in scopes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend(_in_function(node, key, dotted_text))
    return found


def _in_function(function, key: str, dotted_text) -> List[FactoryWith]:
    """`with local():` items of the function's own body whose local the function binds once, to
    a call of a dotted name (not a parameter, not bound again, not `global`/`nonlocal`)."""
    stores: Dict[str, int] = {}
    calls: Dict[str, str] = {}
    withs: List[Tuple[str, int, Tuple[int, int]]] = []
    count_parameters(function, stores)
    for node in _own_nodes(function):
        count_binding(node, stores)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call):
            written = dotted_text(node.value.func)
            if written is not None:
                calls[node.targets[0].id] = written
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.args \
                        and not expr.keywords:
                    span = (node.body[0].lineno, node.end_lineno or node.lineno)
                    withs.append((expr.func.id, node.lineno, span))
    return [(key, calls[local], local, line, span) for local, line, span in withs
            if local in calls and stores.get(local) == 1]


def _own_nodes(function):
    """The function's nodes, nested defs, lambdas, classes and comprehensions left out."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(node))


def count_parameters(function, stores: Dict[str, int]) -> None:
    """A parameter counts as bound twice: its value comes from every caller."""
    args = function.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            stores[arg.arg] = 2


def count_binding(node, stores: Dict[str, int]) -> None:
    """Count the bindings `node` makes in `stores` (name -> count; 2 for "not bound once"):
    a store or `del` of a name adds one, `global`/`nonlocal` and imports rule the name out."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        for name in node.names:
            stores[name] = 2
    elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        stores[node.id] = stores.get(node.id, 0) + 1
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            stores[(alias.asname or alias.name).split(".")[0]] = 2
