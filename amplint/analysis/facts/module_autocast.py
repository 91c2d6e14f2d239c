"""Whether a module class's `forward` opens autocast itself (AMP153), and the same fact for a
class another file of the project defines, as the project pass delivers it (`EntryModule`).

A `forward` "opens autocast" when it, or a function of its file it calls, has an autocast
decorator or an autocast `with` (amplint.analysis.facts.regions). The project pass
(amplint.analysis.project.module_entries) hands a file that imports a project class, and may
wrap it in `nn.DataParallel`, an `EntryModule` when that class has a `forward` that does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Set, Tuple

from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.tree import Frame


@dataclass(frozen=True)
class EntryModule:
    """A module class of another file, imported here under `target`, whose `forward` (seen in
    its own file) opens no autocast."""

    target: str
    cls: str  # its name in its own file
    where: str  # "models/net.py:12", for messages


@dataclass(frozen=True)
class EntryWrappedCall:
    """`receiver(...)` in function `scope` of this file ("" at module level) may call an
    `nn.DataParallel` of `cls`, a module class of the project (defined at `where`) whose
    `forward` opens no autocast: the class flow found the wrapper (`wrap`, e.g.
    "torch.nn.DataParallel(model) at models/builder.py:15") on the way (`via`)."""

    scope: str
    receiver: Tuple[str, ...]  # ("model",), ("self", "model")
    cls: str
    where: str
    wrap: str
    via: str


def forward_autocasts(facts, cls: str) -> bool:
    """`cls.forward`, or a function of this file it calls, opens autocast (decorator or with).
    True also when `forward` cannot be seen (callers then stay silent)."""
    forward = facts.callgraph.method(cls, "forward")
    if forward is None:
        return True
    seen: Set[int] = set()
    pending: List[Frame] = [forward]
    region_scopes = {
        id(frame.scope) for _w, frame, region in facts.regions.explicit_regions()
    }
    while pending:
        frame = pending.pop()
        if id(frame) in seen:
            continue
        seen.add(id(frame))
        if isinstance(frame.region, Region) or id(frame) in region_scopes:
            return True
        for call in frame.calls:
            pending.extend(facts.callgraph.callees(call))
    return False
