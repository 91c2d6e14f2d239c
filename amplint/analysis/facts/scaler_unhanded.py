"""A helper class's `self.` scaler that no construction in the project hands it, as the project
pass delivers it to the class's own file (project/scaler_unhanded.py makes these entries).

EfficientNet-style gradient accumulation: `GradAccumulator.__init__(self, optimizer,
accum_steps=1, scaler=None)` stores `self.scaler = scaler`, and `maybe_step` runs
`self.scaler.step(self.optimizer)` when a scaler was handed to it. Where every
`GradAccumulator(...)` of the project leaves `scaler` out (or passes `None`), `self.scaler` is
`None` in every instance: the class's own file holds no scaler there, so no protocol rule
reports its `step` without an `update` (the callers' files see the arm dead, scaler_stored.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple


@dataclass(frozen=True)
class EntryUnhanded:
    cls: str  # the module-level class here ("GradAccumulator")
    scaler: str  # its `self.` attribute no construction sets ("self.scaler")
    why: str  # "no `GradAccumulator(...)` of the project passes `scaler`", for --show-regions and tests


def unhanded_scalers(entries, tree) -> List[Tuple[str, object]]:
    """(text, class frame) of the `self.` scalers EntryUnhanded entries name: not scalers of
    this file (ScalerAnalysis.infos)."""
    found = []
    for entry in entries or ():
        if isinstance(entry, EntryUnhanded):
            frame = tree.classes.get(entry.cls)
            if frame is not None and frame.parent is tree.module_frame:
                found.append((entry.scaler, frame))
    return found
