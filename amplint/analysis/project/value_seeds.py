"""Seeds the points-to resolver gives inside a region's own body (pointsto_reach.py): calls under
`with torch.autocast(...)` or in a function an autocast decorator opens, that neither an import
nor the class flow resolved (`list(map(focal, pairs))`, `self(x)`, `multi_apply(self.loss, ...)`).

The extent of each region the file's summary lists is found again in the file's syntax tree (the
line the region is cited at: the `with` item, or the decorator); a call under a nested opener
(`torch.autocast(..., enabled=False)` inside) is left to that opener."""

from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

from amplint.analysis.project.candidates import Candidate
from amplint.analysis.project.region_seeds import Seed, _region_desc


_REGION_WORDS = ("autocast", "auto_fp16", "force_fp32", "custom_fwd", "custom_bwd")


def _names_region(node: ast.AST) -> bool:
    """Does this `with` item or decorator name an autocast-like opener (any `enabled`)?"""
    for sub in ast.walk(node):
        name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) else ""
        if any(word in name for word in _REGION_WORDS):
            return True
    return False


def spans(tree: ast.AST) -> Tuple[Dict[int, Tuple[int, int]], List[Tuple[int, int]]]:
    """line an opening is cited at -> (first, last) line of what runs under it (every `with` and
    decorated function); and the spans of those that name an autocast-like opener, enabled or
    not (a call there is the file's own region's business)."""
    found: Dict[int, Tuple[int, int]] = {}
    regions: List[Tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.items:
            span = (node.body[0].lineno, node.end_lineno or node.lineno)
            found.setdefault(node.items[0].context_expr.lineno, span)
            if any(_names_region(item.context_expr) for item in node.items):
                regions.append(span)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span = (node.body[0].lineno, node.end_lineno or node.lineno)
            for decorator in node.decorator_list:
                found.setdefault(decorator.lineno, span)
                if _names_region(decorator):
                    regions.append(span)
    return found, regions


def inside_region(project, path: str, line: int, within=None) -> bool:
    """Is `line` of `path` under one of the file's own autocast-like openers (nested in `within`,
    when given, and not `within` itself)?"""
    from amplint.analysis.project.pointsto_reach import file_spans

    for a, b in file_spans(project, path)[1]:
        if a <= line <= b and (within is None or ((a, b) != within and within[0] <= a and b <= within[1])):
            return True
    return False


def value_seeds(project, existing: List[Seed]) -> List[Seed]:
    from amplint.analysis.project.pointsto_reach import file_spans

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
            for target, line, what in values.lines(path, *span):
                if (target[0], target[1], desc) in have or inside_region(project, path, line, span):
                    continue
                site = f"{shown}:{line}"
                if site in answered:
                    continue
                cite = f"{how(what, site, target, project)} under {desc}"
                candidate = Candidate(info.enabled, info.device, info.dtype, desc, cite, site)
                have.add((target[0], target[1], desc))
                seeds.append((target[0], target[1], candidate, frozenset({path, target[0]})))
    return seeds


def how(what: str, site: str, target, project) -> str:
    """How the value flow reaches `target` from the call at `site`, for the citation."""
    where = f"{target[1]} in {project.display(target[0])}"
    if what == "callback":
        return f"passed at {site} to a function that calls it ({where}, by the value flow)"
    return f"called at {site} ({where}, by the value flow)"
