"""For AMP103 across files: the functions of other files that a half-casting file passes values
to, and which of their parameters they call under an autocast region of their own.

Candidates are the files the class flow already reads for half casts (their text holds
`.half()`, `.bfloat16()` or `.to(... float16 ...)`; classflow.py summarises them): each name
they import and call is resolved; a module-level function of a project file that opens an
active region is parsed (once) and asked which parameters it calls in a region
(amplint.analysis.facts.half_callees). The rule matches the cast value to the argument.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.half_callees import EntryCallsParam, called_params
from amplint.analysis.project.function_entries import CALLED, leads_to, parsed_facts

_HALF_TEXT = re.compile(r"\.(?:half|bfloat16)\(\)|\.to\([^)\n]*(?:float16|half|bfloat16)")


def half_callee_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryCallsParam, ...]]:
    answers: Dict[Tuple[str, str], Optional[EntryCallsParam]] = {}
    found: Dict[str, Tuple[EntryCallsParam, ...]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        summary = project.summaries.get(path)
        if summary is None or not summary.imports:
            continue
        text = project.files.get(path)
        if not text or not _HALF_TEXT.search(text):
            continue
        entries: List[EntryCallsParam] = []
        called = set(CALLED.findall(text))
        for name, ref in sorted(summary.imports.items()):
            if name not in called:
                continue
            if not leads_to(project, path, ref, lambda p: _opens_regions(project, p)):
                continue  # only a file that opens a region can answer
            target = project.resolve_ref(path, ref)
            if target is None or len(target[1]) != 1 or target[0] == path:
                continue
            where, (function,) = target
            defining = project.summaries.get(where)
            if defining is None or not defining.regions or function not in defining.functions:
                continue
            if (where, function) not in answers:
                answers[(where, function)] = _answer(project, where, function)
            answer = answers[(where, function)]
            if answer is not None:
                entries.append(EntryCallsParam(name, answer.params, answer.where))
        if entries:
            found[path] = tuple(entries)
    return found


def _opens_regions(project, path: str) -> bool:
    summary = project.summaries.get(path)
    return summary is not None and bool(summary.regions)


def _answer(project, path: str, function: str) -> Optional[EntryCallsParam]:
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    module, facts = parsed
    params, region = called_params(facts, function)
    if not params:
        return None
    from amplint.analysis.project.lines import node_lines

    origin = region.root.origin
    line = node_lines(module, [origin]).get(id(origin), 0)
    return EntryCallsParam(function, tuple(params), f"{project.display(path)}:{line}")
