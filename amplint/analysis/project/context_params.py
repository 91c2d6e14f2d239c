"""Regions opened through a parameter (timm's and DeiT's `amp_autocast`): `with amp_autocast():`
in a function of one file, where `amp_autocast` is a parameter that the call sites of another
file bind to `partial(torch.autocast, ...)` (or to `contextlib.suppress` / `nullcontext` on
another path). The file that opens it cannot see a region; the project pass can.

For each such `with` (found in the first-pass files' `ast`: a `with p():` or `with p:` whose
`p` is a parameter of the enclosing function), the class flow's call sites of the function
give what `p` is bound to:
- a name of the caller bound to an autocast context or a partial of one (the caller's own
  region facts decide: `with name():` read in the caller's scope), with its device, dtype and
  enabled flag (maybe enabled when the name is bound to something else on another path);
- `contextlib.suppress`, `contextlib.nullcontext` (the parameter's default too): no region;
- anything else: not known.
The `with` opens a region when at least one binding is an autocast; it is maybe enabled unless
every binding is one. Calls under it (by line: the class flow's receivers and the imported
names the summary placed) seed the propagation, as a region of the file itself would.
Nothing is guessed: a parameter no call site binds to an autocast opens nothing."""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.region_entries import EntryParamRegion
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.candidates import Candidate, chain
from amplint.analysis.project.nograd_entries import note_nograd_call, note_nograd_function

# `\bwith\s+([A-Za-z_]\w*)\s*(?:\(\s*\))?\s*:` with the literal first (a pattern that starts
# with `\b` is tried at every position of the text): the word boundary is tested on each match
_WITH_NAME = re.compile(r"with\s+([A-Za-z_]\w*)\s*(?:\(\s*\))?\s*:")
_WORD_CHAR = re.compile(r"\w")


def with_names(text: str) -> set:
    """The names `p` of the text's `with p():` / `with p:` (`with` starting a word)."""
    names = set()
    match = _WITH_NAME.search(text)
    while match is not None:
        start = match.start()
        if start and _WORD_CHAR.match(text, start - 1):
            match = _WITH_NAME.search(text, start + 1)
            continue
        names.add(match.group(1))
        match = _WITH_NAME.search(text, match.end())
    return names
_PLAIN = frozenset({"contextlib.suppress", "contextlib.nullcontext"})

# (function key, parameter, line of the with, (first, last) line of its body)
ParamWith = Tuple[str, str, int, Tuple[int, int]]


def param_withs(text: str) -> List[ParamWith]:
    """The `with p():` / `with p:` of a file whose `p` is a parameter of the enclosing function."""
    names = with_names(text) if "with" in text else set()
    if not names:
        return []
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: List[ParamWith] = []

    # only statements hold a `with`, a def or a class: expressions are not walked. A function's
    # rebound names (a walk of its whole body) are read only for a `with` of one of its parameters
    def visit(node, key: str, function, params) -> None:
        for child in statements(node):
            if type(child) in (ast.FunctionDef, ast.AsyncFunctionDef):
                args = child.args
                own = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
                visit(child, f"{key}.{child.name}" if key else child.name, child, [own, None])
            elif type(child) is ast.ClassDef:
                visit(child, f"{key}.{child.name}" if key else child.name, None, None)
            else:
                if type(child) in (ast.With, ast.AsyncWith) and params is not None:
                    for item in child.items:
                        expr = item.context_expr
                        if type(expr) is ast.Call and not expr.args and not expr.keywords:
                            expr = expr.func
                        if type(expr) is ast.Name and expr.id in params[0] and expr.id in names:
                            if params[1] is None:
                                params[1] = rebound_names(function)
                            if expr.id not in params[1]:
                                span = (child.body[0].lineno, child.end_lineno or child.lineno)
                                found.append((key, expr.id, child.lineno, span))
                visit(child, key, function, params)

    visit(tree, "", None, None)
    return found


def statements(node):
    """The statements directly inside `node` (those of its except handlers and match cases
    too), in `ast.iter_child_nodes` order."""
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is not list:
            continue
        for item in value:
            if isinstance(item, ast.stmt):
                yield item
            elif isinstance(item, (ast.excepthandler, ast.match_case)):
                yield from statements(item)


def rebound_names(function) -> set:
    """Names the function binds again in its body (`amp_autocast = suppress`, a loop target, a
    `with ... as`, an import, a nested def): such a parameter may not hold what the call site
    passed when the `with` runs, so it opens no region here (nothing is guessed)."""
    names = set()
    for node in ast.walk(function):
        if node is function:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def param_region_seeds(project) -> list:
    """Seeds (file, function, Candidate, deciding files) for the calls under such `with`s."""
    seeds: list = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        text = project.files.get(path) if summary is not None and summary.flow is not None else None
        if not text or "with" not in text:
            continue
        own = {info.origin.line for info in list(summary.regions) + list(summary.region_infos)}
        for key, param, line, span in param_withs(text):
            if line in own:  # the file's own facts already read it as a region (a same-file alias)
                continue
            bound = _binding(project, path, key, param)
            if bound is None:
                continue
            info, desc, deciding = bound
            desc = f"{param}() at {project.display(path)}:{line} ({desc})"
            seeds.extend(seeds_under(project, path, key, span, info, desc, deciding | {path}))
            # the file's own rules see the region too (facts/regions.py)
            project.__dict__.setdefault("param_regions", {}).setdefault(path, set()).add(
                EntryParamRegion(key, param, *info, desc))
            project.__dict__.setdefault("param_deps", {}).setdefault(path, set()).update(deciding)
    return seeds


def _binding(project, path: str, key: str, param: str):
    """((enabled, device, dtype), what binds it, the callers' files) or None."""
    flow = project.flow
    function = flow._flow(path)
    function = function.functions.get(key) if function is not None else None
    if function is None or param not in function.params:
        return None
    index = function.params.index(param)
    positional = index if index < function.positional else None
    regions: List[Tuple[Enabled, Optional[str], Optional[str], str]] = []
    plain = unknown = False
    passed_everywhere = True
    files = set()
    parts = key.split(".")
    if len(parts) > 2:
        return None
    summary = project.summary(path)
    is_method = len(parts) == 2 and summary is not None and parts[0] in summary.classes
    if len(parts) == 2 and not is_method:
        return None
    sites = list(flow._binding_sites(parts[-1], (path, key), False, 0))
    if not sites:
        return None
    for where, caller, args, offset in sites:
        value = next((v for slot, v in args if slot == param
                      or (positional is not None and slot == positional - offset)), None)
        if value is None:
            passed_everywhere = False
            continue
        files.add(where)
        kind = _kind(project, where, caller, value)
        if kind is None:
            unknown = True
        elif kind == "plain":
            plain = True
        else:
            regions.append(kind)
    if not passed_everywhere:
        default = function.defaults.get(param)
        if default is not None and default[0] == "ref" and default[1] in _PLAIN:
            plain = True
        else:
            unknown = True
    if not regions:
        return None
    regions.sort(key=lambda r: (r[0] != Enabled.TRUE, r[1] != "cuda", r[2] or "", r[3]))
    enabled, device, dtype, cite = regions[0]
    if plain or unknown or len(regions) > 1 or enabled != Enabled.TRUE:
        enabled = Enabled.MAYBE
    return (enabled, device, dtype), f"bound to {cite}", frozenset(files)


def _kind(project, where: str, caller: str, value):
    """"plain", (enabled, device, dtype, cite) for an autocast, or None (not known)."""
    if value[0] == "ref" and value[1] in _PLAIN:
        return "plain"
    if value[0] != "local":
        return None
    from amplint.analysis.project.function_entries import parsed_facts

    parsed = parsed_facts(project, where)
    if parsed is None:
        return None
    module, facts = parsed
    frame = frame_of(facts, caller)
    if frame is None:
        return None
    name = value[1]
    region = facts.regions._region_of_expr(cst.Call(func=cst.Name(name)), frame, call_it=False)
    if region is None or region.enabled == Enabled.FALSE:
        return _plain_binding(facts, frame, name)
    line = _line(module, facts, frame, name)
    return (region.enabled, region.device, region.dtype,
            f"`{name}` at {project.display(where)}:{line}" if line else f"`{name}` in {project.display(where)}")


def _plain_binding(facts, frame, name: str):
    """`name` bound only to suppress / nullcontext in the caller: "plain"; else None."""
    from amplint.analysis.facts.names import resolve_expr

    values = [s.value for s in facts.tree.assigns if s.frame is frame and len(s.targets) == 1
              and isinstance(s.targets[0], cst.Name) and s.targets[0].value == name]
    if values and all(resolve_expr(v.func if isinstance(v, cst.Call) else v, frame) in _PLAIN for v in values):
        return "plain"
    return None


def frame_of(facts, key: str):
    if not key:
        return facts.tree.module_frame
    from amplint.analysis.project.flowfacts import frame_key

    for frame in facts.tree.frames:
        if frame.kind == "function" and frame_key(frame) == key:
            return frame
    return None


def _line(module, facts, frame, name: str) -> int:
    """The line of the caller's binding of `name` to the autocast (for the citation)."""
    from amplint.analysis.project.lines import node_lines

    nodes = [s.value for s in facts.tree.assigns if s.frame is frame and len(s.targets) == 1
             and isinstance(s.targets[0], cst.Name) and s.targets[0].value == name
             and facts.regions._region_of_expr(s.value, frame, call_it=False) is None]
    nodes = [n for n in nodes if isinstance(n, cst.Call)] or nodes
    if not nodes:
        return 0
    return node_lines(module, nodes[-1:]).get(id(nodes[-1]), 0)


def seeds_under(project, path: str, key: str, span, info, desc: str, deciding) -> list:
    enabled, device, dtype = info
    summary = project.summaries[path]
    shown = project.display(path)
    seeds = []
    function = summary.functions.get(key)
    for call in (function.calls if function is not None else ()):
        line = summary.call_line(call)
        if not (span[0] <= line <= span[1]):
            continue
        site = f"{shown}:{line}"
        candidate = Candidate(enabled, device, dtype, desc, f"called at {site} under {desc}", site)
        known = project.instance_class(path, call)
        for target in project.targets(path, call):
            if call.kind == "call":  # `sample(model, ...)` of another file runs `model` without grad
                note_nograd_function(project, path, call.ref, target)
            seeds.append((target[0], target[1], candidate.holding(known), deciding))
    flow = summary.flow.functions.get(key)
    for receiver, attr, text, line in (flow.dynamic if flow is not None else ()):
        if not (span[0] <= line <= span[1]):
            continue
        site = f"{shown}:{line}"
        where = f"{text} at {site}"
        for target, held, source, instance in project.flow.call_targets(path, key, receiver, attr):
            note_nograd_call(project, path, key, receiver, attr, target)  # `model.generate(...)`
            via = chain(text, source, held)
            candidate = Candidate(enabled, device, dtype, desc, f"{via}; called at {site} under {desc}",
                                  site, instance)
            seeds.append((target[0], target[1], candidate, deciding))
            project.reached.append((desc, where, f"{target[1]} in {project.display(target[0])} ({via})"))
    return seeds
