"""Module classes that another file of the project defines, for AMP153 across files.

A file whose code may run under autocast (it opens a region, or the project pass put one
around one of its functions), whose text names `DataParallel`, and that imports a name from
another file of the project and calls it: when the name leads (through re-exports) to a class
with a `forward` that opens no autocast (amplint.analysis.facts.module_autocast), the file gets
an `EntryModule` under the name it imports. The rule decides whether a DataParallel of it is
called under a bfloat16 region.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.module_autocast import EntryModule, forward_autocasts
from amplint.analysis.project.function_entries import leads_to, may_run_under_autocast, parsed_facts
from amplint.analysis.project.text_views import called_names

_DATA_PARALLEL = re.compile(r"(?<!Distributed)DataParallel\b")  # not DDP


def module_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryModule, ...]]:
    """path -> EntryModules for the other files' module classes it imports and calls."""
    answers: Dict[Tuple[str, str], Optional[int]] = {}  # (file, class) -> class line, or None
    found: Dict[str, Tuple[EntryModule, ...]] = {}
    for path in paths:
        if not path.endswith((".py", ".pyi")) or not may_run_under_autocast(project, path):
            continue
        summary = project.summaries.get(path)
        text = project.files.get(path) if summary is not None else None
        if not text or not _DATA_PARALLEL.search(text) or not summary.imports:
            continue
        entries: List[EntryModule] = []
        called = called_names(project, path)
        for name, ref in sorted(summary.imports.items()):
            if not name[:1].isupper() or name not in called:
                continue
            if not leads_to(project, path, ref, lambda p: "forward" in (project.files.get(p) or "")):
                continue
            target = project.resolve_ref(path, ref)
            if target is None or len(target[1]) != 1 or target[0] == path:
                continue
            where, (cls,) = target
            defining = project.summaries.get(where) or project.summary(where)
            if defining is None or cls not in defining.classes or "forward" not in defining.classes[cls].methods:
                continue
            if (where, cls) not in answers:
                answers[(where, cls)] = plain_forward(project, where, cls)
            line = answers[(where, cls)]
            if line is not None:
                entries.append(EntryModule(name, cls, f"{project.display(where)}:{line}"))
        if entries:
            found[path] = tuple(entries)
    return found


def plain_forward(project, path: str, cls: str) -> Optional[int]:
    """The class's line when its `forward` opens no autocast, else None."""
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    module, facts = parsed
    frame = facts.tree.classes.get(cls)
    if frame is None or forward_autocasts(facts, cls):
        return None
    from amplint.analysis.project.lines import node_lines

    return node_lines(module, [frame.node.name]).get(id(frame.node.name), 0)
