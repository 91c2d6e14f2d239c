"""The autocast regions of the files whose functions a file's GradScaler is passed to (AMP124
across files), as the project pass delivers them (amplint.analysis.project.scaler_regions).

`EntryCalleeRegions` names a file (as messages cite it, "engine.py") that defines a function
this file calls with protocol events (an `EntryScaler`), and the dtypes of every active region
that file opens. The rule reads it where the scaler's `scale` events all come from such calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class EntryCalleeRegions:
    where: str  # the callee's file as cited ("engine.py")
    dtypes: Tuple[Optional[str], ...]  # each active region's dtype ("bfloat16", None: unknown)
    cite: str  # its first region, "engine.py:12"


def callee_regions(entries) -> Dict[str, EntryCalleeRegions]:
    return {e.where: e for e in entries if isinstance(e, EntryCalleeRegions)}
