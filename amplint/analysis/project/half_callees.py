"""For AMP103 across files: the functions of other files that a half-casting file passes values
to, and which of their parameters they call under an autocast region of their own.

Candidates are the files the class flow already reads for half casts (their text holds
`.half()`, `.bfloat16()` or `.to(... float16 ...)`; classflow.py summarises them): each name
they import from a project module and call, when that module opens an active region (its
summary is made already) and defines the name as a module-level function, is answered by
parsing that module (once) and asking which parameters the function calls in a region
(amplint.analysis.facts.half_callees). The rule matches the cast value to the argument.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.half_callees import EntryCallsParam, called_params
from amplint.analysis.project.function_entries import parsed_facts
from amplint.analysis.project.text_tests import half_cast
from amplint.analysis.project.text_views import called_names


def half_callee_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryCallsParam, ...]]:
    answers: Dict[Tuple[str, str], Optional[EntryCallsParam]] = {}
    found: Dict[str, Tuple[EntryCallsParam, ...]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = project.files.get(path)
        if not text or not half_cast(project, path):
            continue  # (before the summary: one a re-export read stood in for is not made)
        summary = project.made_summary(path)
        if summary is None:
            if project.flow.owes(path):
                summary = project.summary(path)  # counted as summarised by a call-site search
            else:
                summary = project.planned_summary(path)
        if summary is None or not summary.imports:
            continue
        entries: List[EntryCallsParam] = []
        called = called_names(project, path)
        for name, ref in sorted(summary.imports.items()):
            if name not in called:
                continue
            target = _defining(project, path, ref)
            if target is None:
                continue
            where, function = target
            if (where, function) not in answers:
                answers[(where, function)] = _answer(project, where, function)
            answer = answers[(where, function)]
            if answer is not None:
                entries.append(EntryCallsParam(name, answer.params, answer.where))
        if entries:
            found[path] = tuple(entries)
    return found


def _defining(project, importer: str, ref: str) -> Optional[Tuple[str, str]]:
    """(file, function) when `ref` names a module-level function of a file that opens an
    active region (its summary is made already). Only the module the import names: a
    re-export through a package `__init__.py` is not followed here (resolving it summarises
    every file on the way, measured at 0.6 s CPU on fairseq for no answer)."""
    for path, attrs in project._module_candidates(importer, ref):
        if len(attrs) != 1 or path == importer:
            return None
        summary = project.planned_summary(path)
        if summary is not None and summary.regions and attrs[0] in summary.functions:
            return path, attrs[0]
        if summary is not None:
            return None
    return None


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
