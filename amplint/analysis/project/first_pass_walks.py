"""What the project pass reads of a region file's escape and dtype walks, answered from the
first pass's own facts of the same text (issue 26's cost).

The first pass lints a file that opens a region of its own, and its rules (AMP105, AMP111,
AMP101) walk the file's escapes and dtypes. The project pass then built the same facts again
for escape_returns.py, escape_args.py and region_args.py: on the mixed monorepo, esmfold2's two
110 k-character files cost ~0.25 s of the pass that way. After the lint, `note_first_pass`
keeps those three answers, plain data (keys, names, lines), under the file's text; the pass
reads one (`first_pass_answer`) when it would walk the same text with the same facts: the
file's own, no module output named for it (module_outputs.py), else it walks as before.

Kept outside the module summary: the language server compares summaries to decide whether an
edit needs a project pass (round 50 put these answers there and broke that). Kept only in the
process that runs the pass (the one holding LibCST trees for it, amplint.analysis.parsing), and
only where a rule already made the walk: elsewhere the pass walks as before. Bounded by the
texts' size, the oldest first out."""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Dict, Optional

from amplint.analysis import parsing

_MAX_CHARS = 1 << 20
_ANSWERS: "OrderedDict[str, Dict[str, tuple]]" = OrderedDict()
_chars = 0


def note_first_pass(text: str, facts, summary) -> None:
    """After the first pass's lint of `text` (amplint.run.per_file): keep what the pass would
    read of `facts` (built from `text`'s parse, no entries), where its rules walked it."""
    global _chars
    if (not summary or not summary.regions or facts.entries or len(text) > _MAX_CHARS
            or parsing._modules_owner != os.getpid() or "tree" not in facts.__dict__):
        return
    answers = _answers(facts, "return" in text, summary.flow is not None)
    if not answers or text in _ANSWERS:
        return
    _ANSWERS[text] = answers
    _chars += len(text)
    while _chars > _MAX_CHARS:
        old, _ = _ANSWERS.popitem(last=False)
        _chars -= len(old)


def _answers(facts, returns: bool, flows: bool) -> Dict[str, tuple]:
    from amplint.analysis.facts.escape import may_escape
    from amplint.analysis.project.escape_args import escaped_arguments
    from amplint.analysis.project.escape_returns import returning_functions
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
        if flows and made.get("dtypes") is not None:
            answers["half_args"] = tuple(half_arguments(facts.module, facts))
    except (RecursionError, MemoryError):
        return {}
    return answers


def first_pass_answer(project, path: str, kind: str) -> Optional[tuple]:
    """The first pass's answer `kind` ("returns", "escaped_args", "half_args") for `path`'s
    text, or None: the pass walks the file itself."""
    if not _ANSWERS or project.__dict__.get("module_outputs", {}).get(path):
        return None
    text = project.files.get(path)
    held = _ANSWERS.get(text) if text else None
    return held.get(kind) if held is not None else None


def drop_answers() -> None:
    global _chars
    _ANSWERS.clear()
    _chars = 0
