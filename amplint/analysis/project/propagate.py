"""Propagation to a fixpoint: each seeded function keeps the most hazardous region that reaches
it, and passes it on to what it (and its same-file callees) call in other files, directly or
through the class flow. The result does not depend on the order of the seeds."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

from amplint.analysis.facts.region_entries import EntryHalf, EntryHalfBase, EntryRegion
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.candidates import Candidate, chain, cite_more
from amplint.analysis.project.dispatch import dispatched
from amplint.analysis.project.inherited_halves import inherited_halves
from amplint.analysis.project.flowindex import SET_WORDS
from amplint.analysis.project.nograd_entries import note_nograd_call
from amplint.analysis.project.wrapper_entries import note_wrapped_call
from amplint.analysis.project.openworld import open_targets
from amplint.analysis.project.region_seeds import Seed, cache_off_regions
from amplint.analysis.project.region_spans import inside_region
from amplint.analysis.project.value_seeds import how as _how
from amplint.analysis.project.summary import top_level_functions


class Reach(NamedTuple):
    entries: Dict[str, Tuple[object, ...]]  # path -> its EntryRegion / EntryHalf, sorted
    deps: Dict[str, Set[str]]  # path -> files whose content decided its entries
    region_reach: Dict[str, List[str]]  # region -> "Net.forward in models/net.py"


def propagate(project, seeds: Iterable[Seed]) -> Reach:
    # per function and class of `self` the class flow gave it (None: not known), so that each
    # class's template-method calls are dispatched whatever the order (dispatch.py)
    best: Dict[Tuple[str, str, object], Candidate] = {}
    deps: Dict[Tuple[str, str, object], FrozenSet[str]] = {}
    pending = list(seeds)
    sites: Dict[Tuple[str, str], Set[str]] = {}  # every call under autocast that reaches it
    regions: Dict[Tuple[str, str], Set[str]] = {}  # every region that reaches it, best or not
    # the arguments of every call under autocast that reaches it; None once one is unknown
    arguments: Dict[Tuple[str, str], Optional[Set[object]]] = {}
    while pending:
        path, key, candidate, decided_by = pending.pop()
        summary = project.summary(path)
        if summary is None or key not in summary.functions or summary.functions[key].decided:
            continue
        target = (path, key, candidate.self_cls)
        if candidate.site:
            sites.setdefault((path, key), set()).add(candidate.site)
        regions.setdefault((path, key), set()).add(candidate.desc)
        known = arguments.setdefault((path, key), set())
        if known is not None:
            if candidate.args is None:
                arguments[(path, key)] = None
            else:
                known.add(candidate.args)
        current = best.get(target)
        if current is not None:
            if current.key < candidate.key:
                continue
            if current == candidate:
                if decided_by <= deps[target]:
                    continue
                decided_by = decided_by | deps[target]
        best[target] = candidate
        deps[target] = decided_by
        # what this function and its same-file callees call in other files
        onward = decided_by | {path}
        stack, visited = [key], {key}
        while stack:
            function = summary.functions.get(stack.pop())
            if function is None:
                continue
            found: Set[object] = set()  # what the class flow answers here: targets and lines
            for call in function.calls:
                line = summary.call_line(call)
                site = f"{project.display(path)}:{line}"
                derived = candidate.reached(f"called at {site} in code that runs under {candidate.desc}", site,
                                            call.args)
                for other in project.targets(path, call):
                    found.update((other, line))
                    if other[0] != path:
                        known = project.instance_class(path, call)
                        pending.append((other[0], other[1], derived.holding(known), onward))
            for other, derived in _dynamic_targets(project, path, function.key, candidate):
                found.update((other, int(derived.site.rsplit(":", 1)[1])))
                pending.append((other[0], other[1], derived, onward))
            for other, derived, seen in _self_targets(project, path, key, function, candidate):
                found.update((other, int(derived.site.rsplit(":", 1)[1])) if derived.site else (other,))
                pending.append((other[0], other[1], derived, onward | seen))
            found.update((path, k) for k in function.local)
            for other, derived in _value_targets(project, path, function.key, candidate, found):
                pending.append((other[0], other[1], derived, onward | {other[0]}))
            for local in function.local:
                callee = summary.functions.get(local)
                if local not in visited and callee is not None and not callee.decided:
                    visited.add(local)
                    stack.append(local)
    entries: Dict[str, List[object]] = {}
    file_deps: Dict[str, Set[str]] = {}
    region_reach: Dict[str, List[str]] = {}
    cache_off = cache_off_regions(project)
    chosen: Dict[Tuple[str, str], Candidate] = {}
    chosen_deps: Dict[Tuple[str, str], Set[str]] = {}
    for (path, key, _), candidate in best.items():
        if (path, key) not in chosen or candidate.key < chosen[(path, key)].key:
            chosen[(path, key)] = candidate
        chosen_deps.setdefault((path, key), set()).update(deps[(path, key, _)])
    for (path, key), candidate in chosen.items():
        summary = project.summaries[path]
        if summary is None or key not in top_level_functions(summary):
            continue
        for desc in sorted(regions[(path, key)]):  # a second region reaching it is listed too
            region_reach.setdefault(desc, []).append(f"{key} in {project.display(path)}")
        shapes = arguments.get((path, key))
        entries.setdefault(path, []).append(EntryRegion(
            key, candidate.enabled, candidate.device, candidate.dtype,
            cite_more(candidate, len(sites.get((path, key), ())) - 1),
            tuple(sorted(shapes)) if shapes else None,  # type: ignore[type-var]
            cache_off=regions[(path, key)] <= cache_off,
        ))
        file_deps.setdefault(path, set()).update(chosen_deps[(path, key)])
    half = project.flow.half_instances()
    for (path, cls), (dtype, cite, where) in sorted(half.items()):
        entries.setdefault(path, []).append(EntryHalf(cls, dtype, cite))
        file_deps.setdefault(path, set()).add(where)
    for (path, cls, dtype), (methods, cite, wheres) in sorted(inherited_halves(project, half).items()):
        entries.setdefault(path, []).append(EntryHalfBase(cls, methods, dtype, cite))
        file_deps.setdefault(path, set()).update(wheres)
    return Reach(
        {path: tuple(sorted(found, key=lambda e: (e.target, type(e).__name__))) for path, found in entries.items()},
        file_deps, region_reach,
    )


def _dynamic_targets(project, path: str, key: str, candidate: Candidate):
    """What the class flow says this function's calls on held values run (`self.model(x)`)."""
    summary = project.summaries.get(path)
    flow = summary.flow if summary is not None else None
    function = flow.functions.get(key) if flow is not None else None
    if function is None:
        return []
    out = []
    for receiver, attr, text, line in function.dynamic:
        site = f"{project.display(path)}:{line}"
        targets = project.flow.call_targets(path, key, receiver, attr)
        for target, held, source, instance in targets:
            note_nograd_call(project, path, key, receiver, attr, target)
            note_wrapped_call(project, path, key, receiver, attr, instance)
            via = chain(text, source, held)
            cite = f"{via}; called at {site} in code that runs under {candidate.desc}"
            out.append((target, candidate.reached(cite, site).holding(instance).selected(source or "")))
            if SET_WORDS in via:  # one of a registry's classes, by a key: --show-regions names it
                shown = (candidate.desc, f"{text} at {site}", f"{target[1]} in {project.display(target[0])} ({via})")
                if shown not in project.reached:
                    project.reached.append(shown)
        if targets or candidate.enabled == Enabled.FALSE:
            continue
        answer, opened = open_targets(project, path, key, receiver, attr)
        for target, (cpath, cls) in opened:  # a parameter nothing in the tree binds (openworld.py)
            via = f"{text} -> {cls} in {project.display(cpath)}"
            cite = f"{via}; called at {site} in code that runs under {candidate.desc}"
            out.append((target, candidate.reached(cite, site).holding((cpath, cls)).guessing(answer.describe(project))))
    return out


def _value_targets(project, path: str, key: str, candidate: Candidate, found):
    """What the points-to resolver (pointsto_reach.py) answers for this function's calls, beyond
    what the class flow found (`self(x)`, callbacks, a parameter's class, a partial)."""
    values = getattr(project, "values", None)
    if values is None:
        return []
    out = []
    shown = project.display(path)
    for target, line, what in values.targets(path, key):
        if target in found or line in found or target == (path, key) or inside_region(project, path, line):
            continue  # a call under the file's own opener (`autocast(enabled=False)`) is its business
        site = f"{shown}:{line}"
        cite = f"{_how(what, site, target, project)} in code that runs under {candidate.desc}"
        out.append((target, candidate.reached(cite, site)))
    return out


def _self_targets(project, path: str, reached: str, function, candidate: Candidate):
    """`self.m(...)` in a method reached (or a same-file callee of it): the `m` of the
    instance's class, when the candidate knows it for the reached method's own class
    (dispatch.py). A region opened in B's own method dispatches to every subclass instead
    (dispatch_seeds): each of them runs that method."""
    if not function.self_calls or function.key.count(".") != 1:
        return []
    cls = function.key.split(".")[0]
    known = candidate.self_cls if cls == reached.split(".")[0] else None
    if known is None:
        # reached without knowing the instance's class (a call through a value the class flow
        # followed to B's method, not to an instance): every subclass would be a guess, and on
        # mmdet 3 it reached heads no config builds; the same-file call graph keeps B's own m
        return []
    summary = project.summaries[path]
    out = []
    for call in function.self_calls:
        line = summary.call_line(call)
        out.extend(dispatched(project, path, function.key, call.attr, line, candidate, known,
                              f"in code that runs under {candidate.desc}"))
    return out
