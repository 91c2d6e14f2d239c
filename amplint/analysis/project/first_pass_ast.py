"""Which files of the first pass can be summarised from Python's `ast` (issue 34).

The first pass summarises every file whose text can open a region or hold a framework setting
(`needs_summary`). Most files it sends there for a setting hold none: `precision = tp / n` in an
evaluator, `fp16=` of a model's own option. When such a file is not linted (no rule's trigger
word), the LibCST parse was made for the summary alone. `ast_summary` makes the same summary
field for field for a file that opens no region; it sets no `settings`. Two tests say a file
opens no region and `frameworks.find_settings` can find no setting in it:

- `ast_first_pass`, on the text: no region word; mmengine's `AmpOptimWrapper`; detectron2's
  `AMPTrainer` (a call or a base), the assignments `...SOLVER.AMP.ENABLED` (`SOLVER`, `AMP`,
  `ENABLED`) / `train.amp.enabled` and `train = dict(amp=dict(enabled=...))` (the words
  `train`, `amp`, `enabled`);
- `framework_call`, on the `ast` summary's own walk: Lightning's `Trainer`/`Fabric(precision=...)`,
  accelerate's `Accelerator(mixed_precision=...)` and `TrainingArguments`/trl configs' `fp16=` /
  `bf16=` are calls with that keyword whose callee resolves as find_settings asks (the `ast`
  summary resolves every name as LibCST's does). Lightning's strategies call their own
  helpers with `precision=` (`_format_precision_config(..., precision=...)`) in a file that
  says `Trainer`: the words alone sent them to LibCST for a summary without settings.

A name bound to an imported name's attribute (`loss = F.binary_cross_entropy`) is resolved at
its calls by both summaries (ast_aliases.py), so it no longer keeps a file on LibCST.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from amplint.analysis.project.frameworks import _lightning
from amplint.analysis.project.summary import CALLER_WORDS

_ALWAYS = ("AmpOptimWrapper", "AMPTrainer")
# the keywords find_settings reads a setting from (`bound_arguments`: keywords only, never `**kwargs`)
_SETTING_KEYWORDS = frozenset({"precision", "mixed_precision", "fp16", "bf16"})
# detectron2: `train.amp.enabled = ...` and `train = dict(..., amp=dict(enabled=...))` name
# all three words; `cfg.SOLVER.AMP.ENABLED = ...` these three
_LOWER_AMP = (re.compile(r"\benabled\b"), re.compile(r"\bamp\b"), re.compile(r"\btrain\b"))
_UPPER_AMP = ("ENABLED", "AMP", "SOLVER")


def ast_first_pass(text: str) -> bool:
    """True: no region opens in `text` and no framework setting can be found in it, so its
    first-pass summary may come from `ast` with `framework_call` as its check (which may still
    refuse it). Each test is a word every such setting `frameworks.find_settings` finds has in
    the text (the last part of a resolved reference is a name written in the file, at the call
    or in its import)."""
    if any(word in text for word in CALLER_WORDS) or any(word in text for word in _ALWAYS):
        return False
    if "enabled" in text and all(word.search(text) for word in _LOWER_AMP):
        return False
    return not all(word in text for word in _UPPER_AMP)


def framework_call(summarizer) -> Optional[str]:
    """Why the file may hold a Lightning, accelerate or transformers setting (None: it holds
    none): a call with a keyword find_settings reads whose callee resolves as its branch asks.
    Every call of the module counts (one the walk does not list: a refusal); `summarizer`: the
    ast_summary's, after its walk (its names resolve as LibCST's)."""
    sites, names = summarizer.sites, summarizer.names
    for node in ast.walk(summarizer.tree.module_frame.node):
        if type(node) is not ast.Call or not node.keywords:
            continue
        keywords = {k.arg for k in node.keywords} & _SETTING_KEYWORDS
        if not keywords:
            continue
        site = sites.get(id(node))
        if site is None:
            return "a setting keyword in a call outside the walk"
        ref = names.resolve(site.dotted, site.frame) or ""
        last = ref.rsplit(".", 1)[-1]
        if "precision" in keywords and _lightning(ref) and last in ("Trainer", "Fabric"):
            return "a Lightning Trainer/Fabric(precision=...)"
        if "mixed_precision" in keywords and ref.startswith("accelerate.") and last == "Accelerator":
            return "an Accelerator(mixed_precision=...)"
        if keywords & {"fp16", "bf16"} and ref.startswith(("transformers.", "trl.")) and (
                last.endswith("TrainingArguments") or (ref.startswith("trl.") and last.endswith("Config"))):
            return "TrainingArguments(fp16=/bf16=...)"
    return None
