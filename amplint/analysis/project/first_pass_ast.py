"""Which files of the first pass can be summarised from Python's `ast` (issue 34).

The first pass summarises every file whose text can open a region or hold a framework setting
(`needs_summary`). Most files it sends there for a setting hold none: `precision = tp / n` in an
evaluator, `fp16=` of a model's own option. When such a file is not linted (no rule's trigger
word), the LibCST parse was made for the summary alone. `ast_summary` makes the same summary
field for field for a file that opens no region; it sets no `settings`. This test says a file
opens no region and `frameworks.find_settings` can find no setting in it, from words every
setting it finds needs in the text:

- Lightning's `Trainer`/`Fabric(precision=...)`, accelerate's `Accelerator(mixed_precision=)`:
  the keyword (`precision` / `mixed_precision` as a word, then `=`) and the class's name (the
  last part of a resolved reference is a name written in the file, at the call or in its import);
- `TrainingArguments`/trl configs: the keyword `fp16` or `bf16`;
- mmengine: `AmpOptimWrapper`; detectron2: `AMPTrainer` (a call or a base), the assignments
  `...SOLVER.AMP.ENABLED` (`SOLVER`, `AMP`, `ENABLED`) / `train.amp.enabled` and
  `train = dict(amp=dict(enabled=...))` (the words `train`, `amp`, `enabled`).

A name bound to an imported name's attribute (`loss = F.binary_cross_entropy`) is resolved at
its calls by both summaries (ast_aliases.py), so it no longer keeps a file on LibCST.
"""

from __future__ import annotations

import re

from amplint.analysis.project.summary import CALLER_WORDS

_ALWAYS = ("AmpOptimWrapper", "AMPTrainer")
# A keyword argument (`bound_arguments` reads keywords only, never `**kwargs`) is its name
# as a whole word, then `=` after blanks, or a comment or a line continuation in between
# (a file of Lightning's strategies says `enabled` in `no_backward_sync(enabled)` and `bf16`
# in a string: the plain words sent 10 files of Lightning to LibCST for a summary without settings),
# never right after a `.`: `self.mixed_precision = mixed_precision` in Lightning's FSDP strategy)
_KEYWORD = r"\s*[=#\\]"
_PRECISION = re.compile(r"(?<!\.)\bprecision" + _KEYWORD)  # Trainer / Fabric(precision=...)
_MIXED_PRECISION = re.compile(r"(?<!\.)\bmixed_precision" + _KEYWORD)  # Accelerator(mixed_precision=...)
_HALF_FLAG = re.compile(r"(?<!\.)\b(?:fp|bf)16" + _KEYWORD)  # TrainingArguments(fp16=...)
# detectron2: `train.amp.enabled = ...` and `train = dict(..., amp=dict(enabled=...))` name
# all three words; `cfg.SOLVER.AMP.ENABLED = ...` these three
_LOWER_AMP = (re.compile(r"\benabled\b"), re.compile(r"\bamp\b"), re.compile(r"\btrain\b"))
_UPPER_AMP = ("ENABLED", "AMP", "SOLVER")


def ast_first_pass(text: str) -> bool:
    """True: no region opens in `text` and no framework setting can be found in it, so its
    first-pass summary may come from `ast` (which may still refuse it). Each test is a word or
    pattern every setting `frameworks.find_settings` finds has in the text (the last part of
    a resolved reference is a name written in the file, at the call or in its import)."""
    if any(word in text for word in CALLER_WORDS) or any(word in text for word in _ALWAYS):
        return False
    if "precision" in text and (
        (("Trainer" in text or "Fabric" in text) and _PRECISION.search(text))
        or ("Accelerator" in text and _MIXED_PRECISION.search(text))
    ):
        return False
    if ("fp16" in text or "bf16" in text) and _HALF_FLAG.search(text):
        return False
    if "enabled" in text and all(word.search(text) for word in _LOWER_AMP):
        return False
    return not all(word in text for word in _UPPER_AMP)
