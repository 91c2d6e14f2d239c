"""Regions opened through a context-manager function of another file (allenai/OLMo's idiom):

    # olmo/torch_util.py
    @contextmanager
    def maybe_autocast(dtype):
        ...
        with torch.autocast("cuda", dtype=dtype):
            yield

    # olmo/train.py
    from .torch_util import maybe_autocast
    with maybe_autocast(self.cfg.autocast_precision):
        loss = self.model_forward(batch)
        loss.backward()

The file that defines the function opens the region inside it (facts/context_functions.py reads
whether, and how, its `yield`s run under autocast); the calling file sees only a call. This pass:
1. the first-pass files (their text holds `autocast`) that define a module-level
   `@contextmanager` / `@contextlib.contextmanager` function whose `yield` runs under an active
   autocast region, read with the file's own region facts (enabled, maybe enabled when a `yield`
   is outside it or its `enabled=` is not a literal, device, dtype);
2. the files whose text calls such a name; in them the `with` items that call it, as a plain
   name or a module attribute, resolved through the file's imports by the project resolver
   (`from a import f`, `import a` + `a.f`, `import a as b`, relative imports, re-exports
   through a package `__init__`). A name the function binds again is skipped;
3. for each: an EntryContextRegion for the calling file's own rules (its RegionAnalysis opens
   the region at that `with`), and seeds for the calls under the `with` (as a region of the file
   would give: imported calls, class-flow receivers, and the calling file's own functions and
   `self.` methods called there).
A function of the same file needs none of this: its file's facts open the region themselves."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from amplint.analysis.facts.region_entries import EntryContextRegion
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.candidates import Candidate
from amplint.analysis.project.context_params import rebound_names, seeds_under
from amplint.analysis.project.context_prefilters import may_open, may_open_method, opener_text_tests
from amplint.analysis.project.module_defs import parse_or_none
from amplint.analysis.project.opener_names import (  # noqa: F401  (re-exported)
    called_dtype, dotted_text, note_dtype_param, passes_false, resolved_opener)
from amplint.analysis.project.scan_view import paths_holding

# name -> [(file, (enabled, device, dtype), what to cite, its `enabled` parameter or None,
#           whether it passes its `**kwargs` on to the autocast)]
Openers = Dict[str, List[Tuple[str, tuple, str, Optional[Tuple[int, str]], bool]]]


def opener_region_seeds(project) -> list:
    from amplint.analysis.project.context_factories import factory_region_seeds
    from amplint.analysis.project.context_holders import holder_region_seeds

    openers, factories = _openers(project)
    seeds: list = factory_region_seeds(project, factories) if factories else []
    if not openers:
        return seeds
    seeds.extend(holder_region_seeds(project, openers))
    for name in sorted(openers):
        # the files whose text names it (an import `as` another name included)
        for caller in paths_holding(project, name):  # (the pass's scan of the word)
            text = project.files.get(caller)
            if "with" not in text or _all_disabled(text, name, {o[3] for o in openers[name]}):
                continue
            for key, written, line, span, node in _with_calls(text):
                head, _, rest = written.partition(".")
                if written.rsplit(".", 1)[-1] != name and rest:
                    continue
                summary = project.summary(caller)
                if summary is None or summary.flow is None:
                    break
                found = resolved_opener(project, caller, written, name)
                for path, info, cite, param, forwards in openers[name]:
                    if found != (path, (name,)) or path == caller:
                        continue
                    info = called_dtype(project, info, cite, node, written)
                    desc = f"{written}() at {project.display(caller)}:{line} ({cite})"
                    deciding = frozenset({caller, path})
                    # a disabled one (or one the call passes `enabled=False`) only turns an outer region off
                    if info[0].value != "disabled" and not passes_false(node, written, param):
                        seeds.extend(seeds_under(project, caller, key, span, info, desc, deciding))
                        seeds.extend(own_seeds(project, caller, key, node, info, desc, deciding))
                    project.__dict__.setdefault("opener_regions", {}).setdefault(caller, set()).add(
                        EntryContextRegion(key, written, *info, cite, param, forwards,
                                           cache_off=cite in project.__dict__.get("_cache_off_openers", ())))
                    project.__dict__.setdefault("opener_deps", {}).setdefault(caller, set()).add(path)
    return seeds


def _openers(project) -> Tuple[Openers, Openers]:
    """The module-level openers of the first-pass files by name: context managers (functions that
    yield under or return an autocast, classes that enter one), and opener factories (functions
    that return a partial of autocast, context_factories.py)."""
    from amplint.analysis.facts.context_functions import _opened_by, is_contextmanager
    from amplint.analysis.facts.opener_factories import factory_opened
    from amplint.analysis.project.function_entries import parsed_facts
    from amplint.analysis.project.lines import node_lines

    found: Openers = {}
    factories: Openers = {}
    methods = project.__dict__.setdefault("_context_method_files", [])  # context_methods.py reads them
    for path in project.first_pass:
        text = project.files.get(path)
        if not text:
            continue
        managers, returns, enters = opener_text_tests(text)
        if not (managers or returns or enters):
            continue
        tree = parse_or_none(text)  # one `ast` for both tests
        if tree is None:
            continue
        if (managers or returns) and may_open_method(text, tree, managers, returns):
            methods.append(path)
        if not may_open(text, tree, managers, returns, enters):
            continue
        parsed = parsed_facts(project, path)
        if parsed is None:
            continue
        module, facts = parsed
        shown = project.display(path)
        module_frame = facts.tree.module_frame
        classes = {name: frame for name, frame in facts.tree.classes.items() if frame.parent is module_frame}
        for name, frame in sorted({**classes, **module_frame.functions}.items()):
            opened = _opened_by(facts.regions, frame)
            table = found
            if opened is None:
                opened, table = factory_opened(facts.regions, frame), factories
            if opened is None:
                continue
            enabled, inner, param = opened
            node = inner.with_node.items[0].item if inner.with_node is not None else inner.origin
            lines = node_lines(module, [frame.node.name, node])
            maybe = {"enabled": "", "disabled": " (disabled)"}.get(enabled.value, " on some paths")
            how = ("enters the autocast" if frame.kind == "class" else "yields under the autocast region"
                   if is_contextmanager(frame) else "returns a partial of the autocast" if table is factories
                   else "returns the autocast")
            cite = (f"`{name}()` of {shown}:{lines.get(id(frame.node.name), 0)} {how} "
                    f"at {shown}:{lines.get(id(node), 0)}{maybe}")
            forwards = inner.forwards is not None and inner.forwards == _kwargs_name(frame)
            table.setdefault(name, []).append((path, (enabled, inner.device, inner.dtype), cite, param, forwards))
            note_dtype_param(project, inner, cite)
            if inner.cache_off:  # the EntryContextRegions of its calls say so (AMP150 reads it)
                project.__dict__.setdefault("_cache_off_openers", set()).add(cite)
    return found, factories


def _kwargs_name(frame) -> Optional[str]:
    """The `**kwargs` parameter of a function, or of a class's `__init__`."""
    import libcst as cst

    if frame.kind == "class":
        frame = frame.functions.get("__init__")
    node = frame.node if frame is not None else None
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.params.star_kwarg, cst.Param):
        return None
    return node.params.star_kwarg.name.value


def _all_disabled(text: str, name: str, params: set) -> bool:
    """Does every call `name(...)` of the text pass a literal `False` for the opener's
    `enabled` parameter, by keyword (transformers' 24 modeling files with `with
    maybe_autocast(device_type=..., enabled=False):`)? Such a file would only get disabled
    regions: it is not parsed (as before these openers were read; a disabled region only turns an
    outer one off). Not when the name is imported `as` another."""
    if len(params) != 1 or None in params or re.search(r"\b%s\s+as\b" % re.escape(name), text):
        return False
    (_, param), = params
    found = False
    for match in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
        if text[max(0, match.start() - 4):match.start()] == "def ":
            continue
        depth, end = 1, match.end()
        while depth and end < len(text) and end - match.end() < 2000:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        if not re.search(r"\b%s\s*=\s*False\b" % re.escape(param), text[match.end():end]):
            return False
        found = True
    return found


def _with_calls(text: str) -> list:
    """(function key, the callee as written, line of the `with`, (first, last) line of its body,
    the `with` node) for each `with a.b(...):` item of the file whose `a` the function does not
    bind itself."""
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list = []

    def visit(node, key: str, rebound) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{key}.{child.name}" if key else child.name, rebound | rebound_names(child) | {
                    a.arg for a in child.args.posonlyargs + child.args.args + child.args.kwonlyargs})
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{key}.{child.name}" if key else child.name, rebound)
            else:
                if isinstance(child, (ast.With, ast.AsyncWith)):
                    for item in child.items:
                        expr = item.context_expr
                        written = dotted_text(expr.func) if isinstance(expr, ast.Call) else None
                        if written is not None and written.split(".")[0] not in rebound:
                            span = (child.body[0].lineno, child.end_lineno or child.lineno)
                            found.append((key, written, child.lineno, span, child))
                visit(child, key, rebound)

    visit(tree, "", _module_stores(tree))
    return found


def _module_stores(tree) -> set:
    """Names the module binds other than by import (`maybe_autocast = nullcontext`, a def or
    class of that name), or imports twice (`from .amp import ctx` then `from contextlib import
    nullcontext as ctx`, or a `try`/`except ImportError` pair): a `with` of such a name may not
    call the imported function."""
    imported: Dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                imported[bound] = imported.get(bound, 0) + 1
    names = {name for name, count in imported.items() if count > 1}
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        if not isinstance(node, ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return names


def own_seeds(project, caller: str, key: str, with_node, info, desc: str, deciding) -> list:
    """The calling file's own functions (`f(...)`) and methods (`self.m(...)` of the enclosing
    class) called in the `with` body: the region reaches what they call in other files."""
    summary = project.made_summary(caller)
    if summary is None:
        return []
    owner = key.split(".")[0] if "." in key and key.split(".")[0] in summary.classes else None
    enabled, device, dtype = info
    shown = project.display(caller)
    seeds = []
    for stmt in with_node.body:
        for node in _own_nodes(stmt):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            target = None
            if isinstance(func, ast.Name) and func.id in summary.functions and func.id not in summary.imports:
                target = func.id
            elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                  and func.value.id == "self" and owner is not None
                  and f"{owner}.{func.attr}" in summary.functions):
                target = f"{owner}.{func.attr}"
            if target is None or target == key:
                continue
            site = f"{shown}:{node.lineno}"
            candidate = Candidate(enabled, device, dtype, desc, f"called at {site} under {desc}", site)
            seeds.append((caller, target, candidate, deciding))
    return seeds


def _own_nodes(node):
    """The nodes of a statement, without the bodies of functions, classes and lambdas in it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)
