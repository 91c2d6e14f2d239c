"""Regions opened through a HELD opener of another file: the context an opener makes (an instance
of a context-manager class that enters an autocast, or what a returning / `@contextmanager`
function gives) stored first and entered later (facebookresearch/audiocraft's idiom):

    # audiocraft/utils/autocast.py
    class TorchAutocast:
        def __init__(self, enabled, *args, **kwargs):
            self.autocast = torch.autocast(*args, **kwargs) if enabled else None
        def __enter__(self): ...   # self.autocast.__enter__()

    # audiocraft/solvers/compression.py
    self.autocast = TorchAutocast(enabled=cfg.autocast, device_type=self.device, dtype=torch.float16)
    ...
    with self.autocast:
        qres = self.model(x)

context_openers.py finds the openers; here, in the files that name one: a holder bound exactly
once to a call of it that the file's imports resolve to it, then `with holder:` (the value, not a
call): a local of a function entered in that function, or a `self.<attr>` that the file stores
nowhere else, entered in a method of the same module-level class. The calling file gets the
EntryContextRegion of the call (its RegionAnalysis reads the holder as an alias of it, as it reads
`ctx = torch.autocast(...)`) and the calls under each such `with` seed the propagation."""

from __future__ import annotations

import ast
import re
from types import SimpleNamespace
from typing import Dict, List, Tuple

from amplint.analysis.facts.region_entries import EntryContextRegion
from amplint.analysis.project.context_factories import _own_nodes, bound_call, count_binding, count_parameters
from amplint.analysis.project.context_params import seeds_under
from amplint.analysis.project.opener_names import called_dtype, dotted_text, passes_false, resolved_opener, scopes
from amplint.analysis.project.scan_view import paths_holding

# (key of the function that binds it, the opener as written, the holder as written ("ctx",
# "self.autocast"), line of the binding, [(key of the function entering it, line of the `with`,
# (first, last) line of its body)], the call node)
_WITH_HOLDER = re.compile(r"\bwith\s+(?:self\.)?\w+\s*:")
HeldOpener = Tuple[str, str, str, int, List[Tuple[str, int, Tuple[int, int]]], ast.Call]


def holder_region_seeds(project, openers) -> list:
    seeds: list = []
    held: Dict[str, List[HeldOpener]] = {}
    for name in sorted(openers):
        for caller in paths_holding(project, name):  # (the pass's scan of the word)
            text = project.files.get(caller) or ""
            if "with" not in text or not _WITH_HOLDER.search(text) or not bound_call(text, name):
                continue  # no `with holder:`, or no `holder = ...name(` (text tests before `ast`)
            summary = project.summary(caller)
            if summary is None or summary.flow is None:
                continue
            if caller not in held:
                held[caller] = _held_openers(text, dotted_text)
            for key, written, holder, line, withs, call in held[caller]:
                if "." in written and written.rsplit(".", 1)[-1] != name:
                    continue
                found = resolved_opener(project, caller, written, name)
                for path, info, cite, param, forwards in openers[name]:
                    if found != (path, (name,)) or path == caller:
                        continue
                    shown = project.display(caller)
                    desc = f"{holder} <- {written}(...) at {shown}:{line} ({cite})"
                    deciding = frozenset({caller, path})
                    # a disabled one (or one the call passes `enabled=False`) only turns an outer region off
                    stand_in = SimpleNamespace(items=[SimpleNamespace(context_expr=call)])
                    info = called_dtype(project, info, cite, stand_in, written)
                    if info[0].value != "disabled" and not passes_false(stand_in, written, param):
                        for with_key, with_line, span in withs:
                            where = f"`with {holder}:` at {shown}:{with_line}, {desc}"
                            seeds.extend(seeds_under(project, caller, with_key, span, info, where, deciding))
                    project.__dict__.setdefault("opener_regions", {}).setdefault(caller, set()).add(
                        EntryContextRegion(key, written, *info, desc, param, forwards,
                                           cache_off=cite in project.__dict__.get("_cache_off_openers", ())))
                    project.__dict__.setdefault("opener_deps", {}).setdefault(caller, set()).add(path)
    return seeds


def _held_openers(text: str, dotted_text) -> List[HeldOpener]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: List[HeldOpener] = []
    attr_stores: Dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            attr_stores[node.attr] = attr_stores.get(node.attr, 0) + 1
    for parent, node, key in scopes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend(_local_holders(node, key, dotted_text))
        elif parent is tree:
            found.extend(_attr_holders(node, attr_stores, dotted_text))
    return found


def _bound_call(node, dotted_text):
    """(target, the callee as written, the call) of `target = callee(...)`, else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
        written = dotted_text(node.value.func)
        if written is not None:
            return node.targets[0], written, node.value
    return None


def _withs_of(function, key: str, test) -> List[Tuple[str, int, Tuple[int, int]]]:
    return [(key, node.lineno, (node.body[0].lineno, node.end_lineno or node.lineno))
            for node in _own_nodes(function) if isinstance(node, (ast.With, ast.AsyncWith))
            and any(test(item.context_expr) for item in node.items)]


def _local_holders(function, key: str, dotted_text) -> List[HeldOpener]:
    """A local bound once in the function to a call, entered as `with local:` there."""
    stores: Dict[str, int] = {}
    count_parameters(function, stores)
    bound = {}
    for node in _own_nodes(function):
        count_binding(node, stores)
        found = _bound_call(node, dotted_text)
        if found is not None and isinstance(found[0], ast.Name):
            bound[found[0].id] = (node.lineno, found[1], found[2])
    out: List[HeldOpener] = []
    for local, (line, written, call) in bound.items():
        if stores.get(local) != 1:
            continue
        withs = _withs_of(function, key, lambda e, n=local: isinstance(e, ast.Name) and e.id == n)
        if withs:
            out.append((key, written, local, line, withs, call))
    return out


def _attr_holders(cls: ast.ClassDef, attr_stores: Dict[str, int], dotted_text) -> List[HeldOpener]:
    """`self.<attr>` stored once in the file, in a method of `cls`, to a call; entered as
    `with self.<attr>:` in methods of `cls`."""
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out: List[HeldOpener] = []
    for method in methods:
        for node in _own_nodes(method):
            found = _bound_call(node, dotted_text)
            if found is None:
                continue
            target, written, call = found
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and attr_stores.get(target.attr) == 1):
                continue
            attr = target.attr

            def entered(expr, attr=attr) -> bool:
                return isinstance(expr, ast.Attribute) and expr.attr == attr and \
                    isinstance(expr.value, ast.Name) and expr.value.id == "self"

            withs = [w for other in methods for w in _withs_of(other, f"{cls.name}.{other.name}", entered)]
            if withs:
                out.append((f"{cls.name}.{method.name}", written, f"self.{attr}", node.lineno, withs, call))
    return out

