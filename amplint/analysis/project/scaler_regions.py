"""For AMP124 across files: the regions of the files a scaler's protocol reaches.

For each file with `EntryScaler` entries (calls into other files' functions that have
GradScaler protocol events, scaler_summaries.py) whose callee scales a loss, the callee is
described by the regions it opens itself (a `with` in its body or an autocast decorator; its
file parsed once, only when its region summary says it opens any): the dtype of each. A callee
that opens none gets no entry (where its losses come from is not known here).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Tuple

from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.scaler_regions import EntryCalleeRegions
from amplint.analysis.facts.scaler_remote import function_key
from amplint.analysis.project.function_entries import parsed_facts


def scaler_region_entries(project, remote: Mapping[str, Tuple[object, ...]]) -> Dict[str, Tuple[EntryCalleeRegions, ...]]:
    shown = {}
    found: Dict[str, Tuple[EntryCalleeRegions, ...]] = {}
    for path, entries in remote.items():
        out: List[EntryCalleeRegions] = []
        seen = set()
        for entry in entries:
            if not any(event[0] == "scale" for event in getattr(entry, "events", ())):
                continue
            where = entry.callee.split(":", 1)[0]
            if entry.callee in seen:
                continue
            seen.add(entry.callee)
            if not shown:
                shown.update((project.display(p), p) for p in project.python)
            callee = shown.get(where)
            summary = project.made_summary(callee) if callee is not None else None
            if summary is None or not summary.regions:
                continue
            found_regions = _own_regions(project, callee, entry.callee.split(": ", 1)[1])
            if not found_regions:
                continue
            dtypes, line = found_regions
            out.append(EntryCalleeRegions(entry.callee, dtypes, f"{where}:{line}"))
        if out:
            found[path] = tuple(out)
    return found


def _own_regions(project, path: str, key: str):
    """(dtype of each active region function `key` opens itself, the first one's line)."""
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    module, facts = parsed
    frame = next((f for f in facts.tree.frames if f.kind == "function" and function_key(f) == key), None)
    if frame is None:
        return None
    regions = [(region, region.origin) for _w, body, region in facts.regions.explicit_regions()
               if region.active and body.scope is frame]
    if isinstance(frame.region, Region) and frame.region.active:
        regions.insert(0, (frame.region, frame.region.origin))
    if not regions:
        return None
    from amplint.analysis.project.lines import node_lines

    first = regions[0][1]
    return tuple(r.dtype for r, _ in regions), node_lines(module, [first]).get(id(first), 0)
