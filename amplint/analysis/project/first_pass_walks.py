"""What the project pass reads of a region file's escape and dtype walks, answered from the
first pass's own facts of the same text (issue 26's cost).

The first pass lints a file that opens a region of its own, and its rules (AMP105, AMP111,
AMP101) walk the file's escapes and dtypes. The project pass then built the same facts again
for escape_returns.py, escape_args.py and region_args.py: on the mixed monorepo, esmfold2's two
110 k-character files cost ~0.25 s of the pass that way. The lint (in a pool's worker or in the
process of the pass) makes those three answers, plain data (keys, names, lines), with the text's
digest (first_pass_answers.py), and hands them back on the file's result (FileResult.walks), outside
the module summary: the language server compares summaries to decide whether an edit needs a
project pass (round 50 put these answers there and broke that). The process of the pass keeps
them by digest (`note_walks`, amplint.run.phase_one) and the pass reads one (`first_pass_answer`)
when it would walk the same text with the same facts: the file's own, no module output named for
it (module_outputs.py); elsewhere (a cached lint, another text) it walks as before."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Dict, Optional

MAX_CHARS = 1 << 20  # texts larger than this: the pass walks them (none of the 52 trees' regions)
_MAX_HELD = 4096  # answers kept, the oldest first out (each a few tuples)
_ANSWERS: "OrderedDict[bytes, Dict[str, tuple]]" = OrderedDict()


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def note_walks(walks) -> None:
    """In the process of the pass: keep a file result's `walks` (first_pass_walks' answer)."""
    if not walks:
        return
    digest, answers = walks
    _ANSWERS[digest] = answers
    _ANSWERS.move_to_end(digest)
    while len(_ANSWERS) > _MAX_HELD:
        _ANSWERS.popitem(last=False)


def first_pass_answer(project, path: str, kind: str) -> Optional[tuple]:
    """The first pass's answer `kind` ("returns", "escaped_args", "half_args") for `path`'s
    text, or None: the pass walks the file itself."""
    if not _ANSWERS or project.__dict__.get("module_outputs", {}).get(path):
        return None
    text = project.files.get(path)
    if not text or len(text) > MAX_CHARS:
        return None
    held = _ANSWERS.get(digest(text))
    return held.get(kind) if held is not None else None


def drop_answers() -> None:
    _ANSWERS.clear()
