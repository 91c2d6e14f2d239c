"""Seeds the points-to resolver gives inside a region's own body (pointsto_reach.py): calls under
`with torch.autocast(...)` or in a function an autocast decorator opens, that neither an import
nor the class flow resolved (`list(map(focal, pairs))`, `self(x)`, `multi_apply(self.loss, ...)`).

The extent of each region the file's summary lists is found again in the file's syntax tree (the
line the region is cited at: the `with` item, or the decorator); a call under a nested opener
(`torch.autocast(..., enabled=False)` inside) is left to that opener."""

from __future__ import annotations

from typing import List, Set, Tuple

from amplint.analysis.project.candidates import Candidate
from amplint.analysis.project.region_seeds import Seed, _region_desc
from amplint.analysis.project.region_spans import file_spans, inside_region


def value_seeds(project, existing: List[Seed]) -> List[Seed]:
    values = project.values
    if values is None:
        return []
    have: Set[Tuple[str, str, str]] = {(path, key, c.desc) for path, key, c, _ in existing}
    answered = {c.site for _, _, c, _ in existing}  # calls an import or the class flow resolved
    seeds: List[Seed] = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None or not summary.regions:
            continue
        opened, _ = file_spans(project, path)
        shown = project.display(path)
        for info in summary.regions:
            span = opened.get(info.origin.line)
            if span is None or info.origin.path != path:
                continue
            desc = _region_desc(project, info)
            for target, line, what, via in _answers(project, path, summary, span):
                if (target[0], target[1], desc) in have or inside_region(project, path, line, None if via else span):
                    continue  # (a call of a function followed: under any opener of the file, its own)
                site = f"{shown}:{line}"
                if site in answered:
                    continue
                cite = f"{how(what, site, target, project)}{via} under {desc}"
                candidate = Candidate(info.enabled, info.device, info.dtype, desc, cite, site)
                have.add((target[0], target[1], desc))
                seeds.append((target[0], target[1], candidate, frozenset({path, target[0]})))
    return seeds


def _answers(project, path: str, summary, span) -> List[Tuple[Tuple[str, str], int, str, str]]:
    """The value flow's answers for the region's own lines, and for the same-file functions it
    calls there whose region the file already decides (`self.trigger_callbacks("on_loss")`
    under the region, whose body calls the callbacks filed under that event): the project
    pass does not propagate from those, so their calls into other files are seeded here."""
    values = project.values
    out = []
    todo = [(t, line, what, "") for t, line, what in values.lines(path, *span)]
    seen = set()
    while todo:
        target, line, what, via = todo.pop(0)
        out.append((target, line, what, via))
        function = summary.functions.get(target[1]) if target[0] == path else None
        if function is None or not function.decided or target[1] in seen or len(seen) >= _MAX_LOCAL:
            continue
        seen.add(target[1])
        shown = f"{project.display(path)}:{line}"
        todo.extend((inner, inner_line, inner_what, f" in {target[1]}, called at {shown}{via}")
                    for inner, inner_line, inner_what in values.targets(path, target[1])
                    if inner != target)
    return out


_MAX_LOCAL = 16  # same-file functions a region's answers are followed through


def how(what: str, site: str, target, project) -> str:
    """How the value flow reaches `target` from the call at `site`, for the citation."""
    where = f"{target[1]} in {project.display(target[0])}"
    if what == "callback":
        return f"passed at {site} to a function that calls it ({where}, by the value flow)"
    return f"called at {site} ({where}, by the value flow)"
