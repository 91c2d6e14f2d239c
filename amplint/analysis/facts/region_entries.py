"""The records of autocast regions that travel between files: `Enabled` (whether a region is on)
and the `Entry*` facts the project pass hands a file (amplint.analysis.project): a region another
file puts around one of its functions, a class it turns half, a parameter, context-manager
function or `self.<attr>` that opens a region. facts/regions.py reads them into `Region`s."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional, Tuple


class Enabled(enum.Enum):
    TRUE = "enabled"
    FALSE = "disabled"
    MAYBE = "maybe enabled"


@dataclass(frozen=True)
class EntryRegion:
    """A region another file (or a framework setting) puts around a function of this file.
    `target` names it as written in this file: "focal_loss", "FocalLoss.forward"."""

    target: str
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    cite: str  # e.g. "called at train.py:14 under the autocast region at train.py:12"
    # the arguments of every call that reaches it under a region, each (how many positional,
    # the keywords' names); None when one of them is not a plain call with such arguments
    args: Optional[Tuple[Tuple[int, Tuple[str, ...]], ...]] = None
    # every region that reaches it passes `cache_enabled=False` to its autocast
    cache_off: bool = False


@dataclass(frozen=True)
class EntryHalf:
    """A module class of this file whose instances another part of the project turns half
    (`load()` returning `Net().cuda().half()`): its methods are fp16 code, with its submodules'.
    `target` is the class name."""

    target: str
    dtype: str  # "float16" | "bfloat16"
    cite: str  # e.g. "model <- Net() at deploy/loader.py:7 made half"


@dataclass(frozen=True)
class EntryHalfBase:
    """A class of this file that a module class of another file, turned half, derives from:
    `methods` are those the half class inherits from it (not overridden on the way), fp16 code
    of that instance as the half class's own (a mixin's `forward_tiled`)."""

    target: str
    methods: Tuple[str, ...]
    dtype: str  # "float16" | "bfloat16"
    cite: str  # e.g. "`forward_tiled` inherited by `SwinIR` (models/net.py); model <- ... made float16 in main.py"


@dataclass(frozen=True)
class EntryParamRegion:
    """`with param():` (or `with param:`) in function `scope` of this file opens a region: the
    project pass found the call sites binding `param` to an autocast (a partial of it), as
    amplint.analysis.project.context_params describes."""

    scope: str
    param: str
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    cite: str  # "amp_autocast() at engine.py:14 (bound to `amp_autocast` at main.py:38)"


@dataclass(frozen=True)
class EntryContextRegion:
    """`with callee(...):` in function `scope` of this file opens a region: `callee` (as written
    there, `maybe_autocast` or `torch_util.maybe_autocast`) is a context-manager function of
    another file that yields under an autocast (amplint.analysis.project.context_openers)."""

    scope: str
    callee: str
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    cite: str  # "`maybe_autocast()` of olmo/torch_util.py:11 yields under the autocast region at olmo/torch_util.py:15"
    # (position, name) of the parameter its autocast's `enabled=` is: a call passing `False` opens it disabled
    enabled_param: Optional[Tuple[int, str]] = None
    # the opener passes its `**kwargs` on to the autocast: the call's `dtype=`/`device_type=` count
    forwarded: bool = False
    # the call returns an opener factory (`partial(torch.amp.autocast, ...)`): `with` of the
    # call's value opens nothing, `x = callee(...)` then `with x():` opens the region
    factory: bool = False
    # every autocast the opener may open passes `cache_enabled=False`
    cache_off: bool = False


@dataclass(frozen=True)
class EntryAttrRegion:
    """`with self.<attr>:` in method `scope` of this file opens a region: a base class of another
    file stores an autocast context in `self.<attr>` (amplint.analysis.project.context_attrs)."""

    scope: str
    attr: str
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    cite: str  # "`self.autocast` at solvers/musicgen.py:40, stored by `StandardSolver.__init__` at solvers/base.py:9"
