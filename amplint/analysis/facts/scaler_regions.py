"""The autocast regions of the files whose functions a file's GradScaler is passed to (AMP124
across files), as the project pass delivers them (amplint.analysis.project.scaler_regions).

`EntryCalleeRegions` names a function of another file that this file calls with protocol events
(an `EntryScaler`, same `callee` text), and the dtypes of every active region that function
opens itself. The rule reads it where the scaler's `scale` events all come from such calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class EntryCalleeRegions:
    callee: str  # as the EntryScaler names it: "engine.py: train_one_epoch"
    dtypes: Tuple[Optional[str], ...]  # each active region's dtype ("bfloat16", None: unknown)
    cite: str  # its first region, "engine.py:12"


def callee_regions(entries) -> Dict[str, EntryCalleeRegions]:
    return {e.callee: e for e in entries if isinstance(e, EntryCalleeRegions)}
