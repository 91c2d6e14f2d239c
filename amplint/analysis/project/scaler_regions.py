"""For AMP124 across files: the regions of the files a scaler's protocol reaches.

For each file with `EntryScaler` entries (calls into other files' functions that have
GradScaler protocol events, scaler_summaries.py) whose callee scales a loss, the callee's file
gets described by its region summary (summary.py): the dtype of every active region it opens.
A file that opens none gets no entry (where its losses come from is not known here).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Tuple

from amplint.analysis.facts.scaler_regions import EntryCalleeRegions


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
            if where in seen:
                continue
            seen.add(where)
            if not shown:
                shown.update((project.display(p), p) for p in project.python)
            callee = shown.get(where)
            summary = project.summaries.get(callee) if callee is not None else None
            if summary is None and callee is not None:
                summary = project.summary(callee)
            if summary is None or not summary.regions:
                continue
            first = summary.regions[0].origin
            out.append(EntryCalleeRegions(
                where, tuple(r.dtype for r in summary.regions), f"{project.display(first.path)}:{first.line}",
            ))
        if out:
            found[path] = tuple(out)
    return found
