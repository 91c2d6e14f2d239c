"""What the project pass says about `self.backward(...)` / `self.manual_backward(...)` calls
whose method another file defines (project/backward_entries.py): that it protects its backward,
or where the backward it runs sits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class EntryBackwardMethod:
    """`self.<method>(...)` in method `scope` of this file runs, for this class and every
    project subclass, a project method defined in another file (`where`) whose every backward
    runs under an autocast it disables itself (ParlAI's `TorchAgent.backward` with
    `with torch.autocast("cuda", enabled=False):`): no backward runs under the caller's region."""

    scope: str  # "TorchGeneratorAgent.train_step"
    method: str  # "backward"
    where: str  # "parlai/core/torch_agent.py:43"
    # the call's receiver: `self`, or a name holding an instance of a project class of another
    # file (`accumulator.backward(loss)`, project/backward_receivers.py)
    receiver: Tuple[str, ...] = ("self",)


@dataclass(frozen=True)
class EntryBackwardSite:
    """`self.<method>(...)` in method `scope` of this file runs, for this class and every project
    subclass, the same project method of another file, whose first backward not under a disabled
    autocast sits at `where` (ParlAI's `TorchAgent.backward` running `self.scaler.scale(loss).backward()`):
    AMP104's finding at the call names it."""

    scope: str  # "TorchGeneratorAgent.train_step"
    method: str  # "backward"
    where: str  # "parlai/core/torch_agent.py:43"
    receiver: Tuple[str, ...] = ("self",)
