"""The seeds the autocast regions of the first-pass files give: calls under a region whose
target an import or a same-file class names, and calls whose receiver only the class flow can
resolve (recorded for --show-regions, reached or unresolved)."""

from __future__ import annotations

from typing import FrozenSet, List, Set, Tuple

from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.candidates import Candidate, chain
from amplint.analysis.project.nograd_entries import note_nograd_call, note_nograd_function
from amplint.analysis.project.wrapper_entries import note_wrapped_call
from amplint.analysis.project.openworld import open_targets

Seed = Tuple[str, str, Candidate, FrozenSet[str]]  # (file, "Class.method", region, deciding files)


def _region_desc(project, info) -> str:
    return f"{info.origin.what} at {project.display(info.origin.path)}:{info.origin.line}"


def cache_off_regions(project) -> Set[str]:
    """The regions of the first-pass files (as candidates describe them) whose autocast passes
    `cache_enabled=False`."""
    found: Set[str] = set()
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        infos = [info for _, info in summary.roots] + list(summary.region_infos) + list(summary.regions)
        found.update(_region_desc(project, info) for info in infos if info.cache_off)
    return found


def call_seeds(project) -> List[Seed]:
    """`with autocast(): loss = crit(out, y)` -> FocalLoss.forward in losses.py."""
    seeds: List[Seed] = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        for call, info in summary.roots:
            desc = _region_desc(project, info)
            site = f"{project.display(path)}:{call.line}"
            cite = f"called at {site} under {desc}"
            candidate = Candidate(info.enabled, info.device, info.dtype, desc, cite, site, args=call.args)
            known = project.instance_class(path, call)
            for target in project.targets(path, call):
                if call.kind == "call":
                    note_nograd_function(project, path, call.ref, target)
                seeds.append((target[0], target[1], candidate.holding(known), frozenset({path})))
    return seeds


def flow_seeds(project) -> List[Seed]:
    """Calls under a region whose receiver only the class flow can resolve: `model(x)` where
    `model` is a parameter, `self.model(x)` stored from `Trainer(model, ...)`, a factory's
    or a registry's product. Fills `project.reached` and `project.unresolved`."""
    seeds: List[Seed] = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None or summary.flow is None:
            continue
        helpers = [(root, f" in {root[0]}") for root in summary.flow.helper_roots]
        for (key, receiver, attr, text, line, index), within in [(root, "") for root in summary.flow.roots] + helpers:
            info = summary.region_infos[index]
            desc = _region_desc(project, info)
            where = f"{text} at {project.display(path)}:{line}{within}"
            targets = project.flow.call_targets(path, key, receiver, attr)
            for target, held, source, instance in targets:
                note_nograd_call(project, path, key, receiver, attr, target)
                note_wrapped_call(project, path, key, receiver, attr, instance)
                via = chain(text, source, held)
                cite = f"{via}; called at {project.display(path)}:{line}{within} under {desc}"
                candidate = Candidate(info.enabled, info.device, info.dtype, desc, cite,
                                      f"{project.display(path)}:{line}", instance).selected(source or "")
                seeds.append((target[0], target[1], candidate, frozenset({path})))
                project.reached.append((desc, where, f"{target[1]} in {project.display(target[0])} ({via})"))
            why = project.flow.unresolved_reason(path, key, receiver) if not targets else None
            if why is not None and info.enabled != Enabled.FALSE:
                answer, opened = open_targets(project, path, key, receiver, attr)
                for target, (cpath, cls) in opened:
                    via = f"{text} -> {cls} in {project.display(cpath)}"
                    cite = f"{via}; called at {project.display(path)}:{line} under {desc}"
                    guess = answer.describe(project)
                    candidate = Candidate(info.enabled, info.device, info.dtype, desc, cite,
                                          f"{project.display(path)}:{line}", (cpath, cls)).guessing(guess)
                    seeds.append((target[0], target[1], candidate, frozenset({path, cpath})))
                    project.reached.append((desc, where, f"{target[1]} in {project.display(target[0])} ({via}; {guess})"))
                if answer is not None and answer.why is not None:
                    why = f"{why}; open world: {answer.why}"
                if not opened:
                    project.unresolved.append((desc, where, why))
    return seeds
