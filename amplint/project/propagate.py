"""Propagation to a fixpoint: each seeded function keeps the most hazardous region that reaches
it, and passes it on to what it (and its same-file callees) call in other files, directly or
through the class flow. The result does not depend on the order of the seeds."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Set, Tuple

from amplint.facts.regions import EntryHalf, EntryRegion
from amplint.project.candidates import Candidate, chain, cite_more
from amplint.project.region_seeds import Seed
from amplint.project.summary import top_level_functions


class Reach(NamedTuple):
    entries: Dict[str, Tuple[object, ...]]  # path -> its EntryRegion / EntryHalf, sorted
    deps: Dict[str, Set[str]]  # path -> files whose content decided its entries
    region_reach: Dict[str, List[str]]  # region -> "Net.forward in models/net.py"


def propagate(project, seeds: Iterable[Seed]) -> Reach:
    best: Dict[Tuple[str, str], Candidate] = {}
    deps: Dict[Tuple[str, str], FrozenSet[str]] = {}
    pending = list(seeds)
    sites: Dict[Tuple[str, str], Set[str]] = {}  # every call under autocast that reaches it
    regions: Dict[Tuple[str, str], Set[str]] = {}  # every region that reaches it, best or not
    while pending:
        path, key, candidate, decided_by = pending.pop()
        summary = project.summary(path)
        if summary is None or key not in summary.functions or summary.functions[key].decided:
            continue
        target = (path, key)
        if candidate.site:
            sites.setdefault(target, set()).add(candidate.site)
        regions.setdefault(target, set()).add(candidate.desc)
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
            for call in function.calls:
                line = summary.call_line(call)
                site = f"{project.display(path)}:{line}"
                derived = candidate.reached(f"called at {site} in code that runs under {candidate.desc}", site)
                for other in project.targets(path, call):
                    if other[0] != path:
                        pending.append((other[0], other[1], derived, onward))
            for other, derived in _dynamic_targets(project, path, function.key, candidate):
                pending.append((other[0], other[1], derived, onward))
            for local in function.local:
                callee = summary.functions.get(local)
                if local not in visited and callee is not None and not callee.decided:
                    visited.add(local)
                    stack.append(local)
    entries: Dict[str, List[object]] = {}
    file_deps: Dict[str, Set[str]] = {}
    region_reach: Dict[str, List[str]] = {}
    for (path, key), candidate in best.items():
        summary = project.summaries[path]
        if summary is None or key not in top_level_functions(summary):
            continue
        for desc in sorted(regions[(path, key)]):  # a second region reaching it is listed too
            region_reach.setdefault(desc, []).append(f"{key} in {project.display(path)}")
        entries.setdefault(path, []).append(EntryRegion(
            key, candidate.enabled, candidate.device, candidate.dtype,
            cite_more(candidate, len(sites.get((path, key), ())) - 1),
        ))
        file_deps.setdefault(path, set()).update(deps[(path, key)])
    for (path, cls), (dtype, cite, where) in sorted(project.flow.half_instances().items()):
        entries.setdefault(path, []).append(EntryHalf(cls, dtype, cite))
        file_deps.setdefault(path, set()).add(where)
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
        for target, held, source in project.flow.call_targets(path, key, receiver, attr):
            via = chain(text, source, held)
            site = f"{project.display(path)}:{line}"
            out.append((target, candidate.reached(f"{via}; called at {site} in code that runs under {candidate.desc}", site)))
    return out
