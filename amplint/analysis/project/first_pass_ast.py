"""Which files of the first pass can be summarised from Python's `ast` (issue 34).

The first pass summarises every file whose text can open a region or hold a framework setting
(`needs_summary`). Most files it sends there for a setting hold none: `precision = tp / n` in an
evaluator, `fp16=` of a model's own option. When such a file is not linted (no rule's trigger
word), the LibCST parse was made for the summary alone. `ast_summary` makes the same summary
field for field for a file that opens no region; it sets no `settings`. This test says a file
opens no region and `frameworks.find_settings` can find no setting in it, from words every
setting it finds needs in the text:

- Lightning's `Trainer`/`Fabric(precision=...)`, accelerate's `Accelerator(mixed_precision=)`:
  `precision` and the class's name (the last part of a resolved reference is a name written in
  the file, at the call or in its import);
- `TrainingArguments`/trl configs: the keyword `fp16` or `bf16`;
- mmengine: `AmpOptimWrapper`; detectron2: `AMPTrainer` (a call or a base), the assignments
  `...SOLVER.AMP.ENABLED` / `train.amp.enabled` and `amp=dict(enabled=...)`: `ENABLED`/`enabled`.
"""

from __future__ import annotations

from amplint.analysis.project.summary import CALLER_WORDS

_ALWAYS = ("fp16", "bf16", "AmpOptimWrapper", "AMPTrainer", "enabled", "ENABLED")
_WITH_PRECISION = ("Trainer", "Fabric", "Accelerator")


def ast_first_pass(text: str) -> bool:
    """True: no region opens in `text` and no framework setting can be found in it, so its
    first-pass summary may come from `ast` (which may still refuse it)."""
    if any(word in text for word in CALLER_WORDS) or any(word in text for word in _ALWAYS):
        return False
    return "precision" not in text or not any(word in text for word in _WITH_PRECISION)
