"""Functions of other files that call one of their parameters under autocast (AMP103 across
files), as the project pass delivers them (amplint.analysis.project.half_callees).

`train_one_epoch(model, ...)` in engine.py runs `model(samples)` inside `with torch.autocast`:
a file that imports `train_one_epoch`, casts a model to half and passes it there mixes a half
model with autocast as surely as if the region were its own. `called_params` says which
parameters the function calls under an active region of its own file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst


@dataclass(frozen=True)
class EntryCallsParam:
    target: str  # the function's name as this file imports it
    params: Tuple[Tuple[int, str], ...]  # (position, name) of each parameter it calls under autocast
    where: str  # "engine.py:17": the region, for messages


@dataclass(frozen=True)
class EntryReturnsHalf:
    """Function `function` of this file returns a value it casts to half, and a caller runs
    that value under an autocast region of its own (amplint.analysis.project.half_returns)."""

    function: str  # its key: "load_model", "Transformer.from_folder"
    names: Tuple[str, ...]  # the returned locals it casts; "" for a cast written in a `return`
    call: str  # "whisper.load_model(args.model, device=device) at train.py:13"
    region: str  # "train.py:21"
    scaler: bool  # the caller's file makes a GradScaler
    # (position or keyword, literal or "?") of each argument of that call; None when the call
    # does not reach this function directly (a chain of factories)
    passed: Optional[Tuple[Tuple[object, object], ...]]
    # the function that hands the model to `function`, a helper that halves its parameter in
    # place (CLIP's `build_model` calling `convert_weights(model)`); "" when `function` returns it
    passer: str = ""
    # (test, cite) of each configured flag `if args.model.low_memory:` in `function` that the
    # project's configs turn on (amplint.analysis.project.config_flags); another is not taken
    flags: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class EntryHalfParam:
    """Parameter `param` of module-level function `function` of this file receives a model that
    a caller in another file casts to half (amplint.analysis.project.half_params)."""

    function: str
    param: str
    dtype: str  # "float16" | "bfloat16"
    cite: str  # "`model`, cast to float16 in tools/train_net.py at line 8, passed at tools/train_net.py:9"
    # every call site the class flow finds binds it so (project/half_param_flow.py): the
    # function then runs on the half model, the fp16 code AMP140/AMP141 read (float16_scope.py)
    every: bool = False


@dataclass(frozen=True)
class EntryFloat16Args:
    """Module-level function `function` of this file is called, with no autocast region active,
    from the float16 code of another file (a method of a module class made float16 there, or a
    function it calls), which passes float16 values as these arguments
    (amplint.analysis.project.float16_args): the function runs on them as float16."""

    function: str
    positions: Tuple[int, ...]  # positional arguments passed float16
    keywords: Tuple[str, ...]  # keyword arguments passed float16
    cite: str  # "`MaskGit.generate` of a float16 module, at muse_maskgit_pytorch/muse_maskgit_pytorch.py:40"


# EntryDtypeField.module of the entry a class's own file gets (its classes resolve to no import)
LOCAL = "<this file>"


@dataclass(frozen=True)
class EntryDtypeField:
    """Field chain `chain` of dataclass `cls` (module `module`) defaults to a half dtype that
    nothing in the project changes (amplint.analysis.project.dtype_fields): lingua's
    `args.model.param_dtype` with `args: TrainArgs`."""

    module: str  # "apps.lm.config"
    cls: str  # "TrainArgs"
    chain: Tuple[str, ...]  # ("model", "param_dtype")
    dtype: str  # "float16" | "bfloat16"
    cite: str  # "`model.param_dtype` of `TrainArgs` defaults to torch.float16 at apps/lm/config.py:15"
    # the class's constructor arguments change nothing (a property, or an attribute every store
    # sets alike: project/config_dtypes.py), so `cfg = TrainArgs(**kwargs)` holds it too
    any_args: bool = False


def half_param_entries(entries) -> Dict[Tuple[str, str], EntryHalfParam]:
    """(function, parameter) -> the first entry saying another file passes it a half model."""
    found: Dict[Tuple[str, str], EntryHalfParam] = {}
    for entry in entries:
        if isinstance(entry, EntryHalfParam):
            found.setdefault((entry.function, entry.param), entry)
    return found


def returns_half_entries(entries) -> Dict[str, List[EntryReturnsHalf]]:
    found: Dict[str, List[EntryReturnsHalf]] = {}
    for entry in entries:
        if isinstance(entry, EntryReturnsHalf):
            found.setdefault(entry.function, []).append(entry)
    return found


def float16_arg_entries(entries) -> Dict[str, List[EntryFloat16Args]]:
    found: Dict[str, List[EntryFloat16Args]] = {}
    for entry in entries:
        if isinstance(entry, EntryFloat16Args):
            found.setdefault(entry.function, []).append(entry)
    return found


def calls_param_entries(entries) -> Dict[str, EntryCallsParam]:
    return {e.target: e for e in entries if isinstance(e, EntryCallsParam)}


def called_params(facts, name: str) -> Tuple[List[Tuple[int, str]], object]:
    """(parameters of module-level function `name` that it calls, `p(...)`, under an active
    autocast region of its own, with the first such region), or ([], None)."""
    frame = facts.tree.module_frame.functions.get(name)
    if frame is None:
        return [], None
    node = frame.node
    assert isinstance(node, cst.FunctionDef)
    params = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
    found: List[Tuple[int, str]] = []
    first = None
    for site in facts.tree.calls:
        func = site.node.func
        if not isinstance(func, cst.Name) or func.value not in params or site.frame.scope is not frame:
            continue
        if func.value in frame.bindings - set(params):
            continue
        region = facts.active_region(site.frame)
        if region is None:
            continue
        entry = (params.index(func.value), func.value)
        if entry not in found:
            found.append(entry)
            first = first or region
    return sorted(found), first
