"""What the scaler protocol knows of one scaler of a file: its key, its constructions, whether it
is enabled, and the text that names it in one scope (facts/scalers.py finds them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple

import libcst as cst

from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.tree import Frame

ScalerKey = Tuple[str, str]  # ("name", "scaler") or ("self", "scaler")


@dataclass(eq=False)
class Scaler:
    key: ScalerKey
    call: cst.Call
    frame: Frame
    enabled: Enabled


@dataclass(eq=False)
class ScalerInfo:
    """One scaler of the file, keyed by its text and the scope binding it (a ScalerRef)."""

    text: str
    constructions: List[cst.Call] = field(default_factory=list, repr=False)
    enabled: Enabled = Enabled.MAYBE  # MAYBE also when only known from its use
    maybe_none: bool = False  # `= None` somewhere, `X() if amp else None`, a `=None` parameter
    # also bound to an instance of another scaler class, not torch's (composer's
    # `ClosureGradScaler() if closures else GradScaler()`): its methods may be overridden
    other_class: bool = False
    bf16_only: bool = False  # filled by rules that know the regions
    # a scaler only by the methods it is sent (`loss_scaler.step(optimizer)` of a parameter),
    # made nowhere in the file: the project may know it holds a wrapper (scaler_wrappers.py)
    used_only: bool = False

    @property
    def constructed(self) -> bool:
        return bool(self.constructions)

    @property
    def disabled(self) -> bool:
        return self.enabled is Enabled.FALSE


class ScalerRef(str):
    """A scaler's text as written ("scaler", "self.scaler"), told apart from the same text bound
    in another scope: a local `scaler` of one function is not another function's."""

    scope: int

    def __new__(cls, text: str, scope: int) -> "ScalerRef":
        ref = super().__new__(cls, text)
        ref.scope = scope
        return ref

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ScalerRef) and str.__eq__(self, other) and self.scope == other.scope
        )

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((str(self), self.scope))
