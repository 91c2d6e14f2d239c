"""The answers first_pass_walks.py keeps, made after the first pass's lint of a region file
(amplint.run.per_file), from the facts its rules walked: escape_returns' returning functions,
escape_args' escaped arguments, region_args' half arguments, module_outputs' calls under a
half region, as plain tuples with the text's
digest. Apart from first_pass_walks.py, which those three modules read: they are what this
module calls."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from amplint.analysis.project.first_pass_walks import MAX_CHARS, digest


def first_pass_walks(text: str, facts, summary) -> Optional[Tuple[bytes, Dict[str, tuple]]]:
    """After the first pass's lint of `text` (amplint.run.per_file): (digest of `text`, what
    the pass would read of `facts`), where its rules walked them; None elsewhere."""
    if (not summary or not summary.regions or facts.entries or len(text) > MAX_CHARS
            or "tree" not in facts.__dict__):
        return None
    answers = _answers(facts, "return" in text, summary.flow is not None)
    return (digest(text), answers) if answers else None


def _answers(facts, returns: bool, flows: bool) -> Dict[str, tuple]:
    from amplint.analysis.facts.escape import may_escape
    from amplint.analysis.project.escape_args import escaped_arguments
    from amplint.analysis.project.escape_returns import returning_functions
    from amplint.analysis.project.module_outputs import region_calls
    from amplint.analysis.project.region_args import half_arguments

    made = facts.__dict__
    answers: Dict[str, tuple] = {}
    try:
        if not (returns or flows):
            return answers
        if not may_escape(facts):
            answers["returns"] = answers["escaped_args"] = ()
        elif made.get("escape") is not None:
            if returns:
                answers["returns"] = tuple(returning_functions(facts.module, facts, made["escape"]))
            if flows:
                answers["escaped_args"] = tuple(escaped_arguments(facts.module, facts, made["escape"]))
        if flows and made.get("escape") is not None:
            answers["region_calls"] = tuple(region_calls(facts.module, facts, made["escape"]))
        if flows and made.get("dtypes") is not None:
            answers["half_args"] = tuple(half_arguments(facts.module, facts))
    except (RecursionError, MemoryError):
        return {}
    return answers


