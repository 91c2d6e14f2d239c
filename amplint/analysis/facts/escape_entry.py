"""What the escape walk (amplint.analysis.facts.escape) knows about a local name at one point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from amplint.analysis.facts.autocast_calls import Region


@dataclass(frozen=True)
class Entry:
    """What the walk knows about a local name at one point.
    kind: "half" (half because of `region`), "f32" (float32 by construction), "module32" (a
    torch.nn module with float32 parameters), "param" (an input of the function), "halfcast"
    (assigned from an explicit half cast), "other"."""

    kind: str
    in_region: bool = False
    node: Optional[cst.CSTNode] = None  # "half": the producing expression
    region: Optional[Region] = None
    escaped: Optional[cst.CSTNode] = None  # "half": the with statement whose end it outlived
    # (for a value returned by another file's function: the call that returned it)
    value: Optional[cst.BaseExpression] = None  # the assigned value
    # a region of another file (region is None): "float16 from the autocast region at a.py:3
    # (returned by `f` at a.py:4)"
    cite: str = ""
