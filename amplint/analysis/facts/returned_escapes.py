"""What a project function of another file returns to this file's calls, for the escape walk
(amplint.analysis.facts.escape), as the project pass delivers it
(amplint.analysis.project.escape_returns).

`feats = model.image_embed(pixels)` in a script, with `image_embed` in another file returning
the output of `self.vision_proj` from inside (or after) its own `with torch.autocast(...)`:
the value is half when the script gets it, and the region ended in the callee. Every `return`
of the callee agrees (all escaped half values of one region, or all float32 by construction),
or there is no entry. The call is named as the flow names it: the calling function's key, and
the callee's dotted text (`model.image_embed`, `self.encoder.embed`) or, for an imported
function, its last name (`extract`, also reached as `feats.extract`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.tree import Frame, dotted_name, scope_key


@dataclass(frozen=True)
class EntryReturnsEscaped:
    scope: str  # the calling function's key in this file ("" at module level)
    callee: Tuple[str, ...]  # the call's dotted text; for an imported function, ("", last name)
    kind: str  # "half": an escaped half value; "f32": a float32 one
    dtype: str  # "float16", "bfloat16", or "" (the region names none)
    cite: str  # "`Encoder.image_embed` (feats.py:14) returns the value of the autocast region at feats.py:12"
    ref: str = ""  # the imported function's qualified name, when `callee` is ("", last)


def returned_escape(facts, call: cst.BaseExpression, frame: Frame) -> Optional[EntryReturnsEscaped]:
    """The entry of a call of this file whose callee, in another file, returns an escaped half
    (or a float32) value on every path; None when the project says nothing."""
    if not isinstance(call, cst.Call):
        return None
    table = _table(facts)
    if not table:
        return None
    dotted = dotted_name(call.func)
    if not dotted:
        return None
    key = scope_key(frame.scope) if frame.scope is not None else ""
    entry = table.get((key, tuple(dotted)))
    if entry is not None:
        return entry
    entry = table.get((key, ("", dotted[-1])))
    if entry is None:
        return None
    # an imported function: called by the name it was imported as, or by its full path
    if len(dotted) == 1 or ".".join(dotted) == entry.ref or facts.resolve(call.func, frame) == entry.ref:
        return entry
    return None


def _table(facts) -> Dict[Tuple[str, Tuple[str, ...]], EntryReturnsEscaped]:
    found = facts.__dict__.get("_returned_escapes")
    if found is None:
        found = {(e.scope, e.callee): e for e in facts.entries if isinstance(e, EntryReturnsEscaped)}
        facts.__dict__["_returned_escapes"] = found
    return found


@dataclass(frozen=True)
class EntryParamEscaped:
    """Parameter `param` of function `scope` (its key in this file) gets, at a call of another
    file outside any region, a half value that escaped that file's region
    (amplint.analysis.project.escape_args)."""

    scope: str
    param: str
    # "float16 from the autocast region at train.py:30 (produced at line 31), passed by the call
    # at train.py:33"
    cite: str


def escaped_params(facts, function: Frame) -> Dict[str, str]:
    """Parameter name -> cite, for the parameters of `function` that callers of other files bind
    to an escaped half value; none for a staticmethod or classmethod (the binding counted
    `self`)."""
    entries = [e for e in facts.entries if isinstance(e, EntryParamEscaped)]
    node = function.node
    if not entries or not isinstance(node, cst.FunctionDef) or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
            for d in node.decorators):
        return {}
    key = scope_key(function)
    return {e.param: e.cite for e in entries if e.scope == key}


@dataclass(frozen=True)
class EntryModuleOutput:
    """`callee(...)` (a name, or `self.attr`) in function `scope` of this file runs the forward
    of project module classes of other files (amplint.analysis.project.module_outputs): under a
    region, its output is the region's half value, as a module class of this file's is."""

    scope: str
    callee: Tuple[str, ...]
    classes: str  # "IResNet in backbones/iresnet.py", for messages


def module_output(facts, func: cst.BaseExpression, frame: Frame) -> bool:
    """The project says `func(...)` at `frame` calls a module of another file."""
    found = facts.__dict__.get("_module_outputs")
    if found is None:
        found = {(e.scope, e.callee) for e in facts.entries if isinstance(e, EntryModuleOutput)}
        facts.__dict__["_module_outputs"] = found
    if not found:
        return False
    dotted = dotted_name(func)
    return dotted is not None and (scope_key(frame.scope) if frame.scope is not None else "", tuple(dotted)) in found
