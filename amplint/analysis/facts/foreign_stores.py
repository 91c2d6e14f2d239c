"""Attributes another file of the project stores (issue 26, "every store agrees" across files).

A file's facts read an attribute's value from the stores they see: a constructor default kept
on `self` (param_defaults.attr_default, AMP110), a module constant read as an autocast dtype
(autocast_calls.py, AMP124). Another file may store
the same name after construction (attention-is-all-you-need-pytorch's users set
`module.mask_fill = -1e4` on every attention layer for fp16; sd-scripts-style mains set
`train_util.AMP_DTYPE = torch.float16`), and then the value is not the one the file shows.

The project pass (amplint.analysis.project.foreign_stores) tells each file which of the names
its facts may read that way another project file stores (`x.name = ...` on any receiver,
augmented too, or `setattr(..., "name", ...)`); the facts then give no answer for them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet


@dataclass(frozen=True)
class EntryStoredElsewhere:
    """Another project file stores `.attr` (first such store at `cite`)."""

    attr: str
    cite: str  # "train.py:23"


def stored_elsewhere(entries) -> FrozenSet[str]:
    """The attribute names the project pass says another file stores."""
    return frozenset(e.attr for e in entries or () if isinstance(e, EntryStoredElsewhere))
