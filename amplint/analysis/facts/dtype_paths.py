"""Functions read along the call that brings them under a region, for
amplint.analysis.facts.dtypes (one call string deep per step, following the chain of "call"
regions facts/regions.py records).

A function the file also runs outside any region (or under another region, or that other files
may call) has no single value for its parameters: facts/dtype_params.py leaves them unknown,
and code there joins the region's dtype with float32. Yet the function a region reaches through
call C (its inherited region, kind "call", cites C) does run, on THAT path, under the region
with the arguments C passes. So, once the context-insensitive readings are done, each such
function is read once more along C:

- C surely runs under the region (inside a literal enabled `with`, or in a function that is
  itself read along its own region call), and the region is enabled;
- for a function whose calls dtype_params binds: C's bound arguments (their dtypes in the
  caller's frame under the region, as the last reading saw them) hold at least one value that
  is certainly the region's low dtype (`self.fc(h)`, `torch.sigmoid(...)` of one), else the
  reading is skipped; its parameters then hold exactly what C passes (unknown stays unknown);
- for a function whose calls are not bound (a public method, an instance held in a local):
  its parameters stay unknown;
- a function another file runs under an enabled region (kind "project", the project pass's
  cite) starts a path too, its parameters unknown;
- on the path, the function's code surely runs under the region (DtypeFacts.region_state).

The values the rules read for the function's body are then those of this path, and every
finding there cites the region through C ("called at line N under the autocast region at line
M"), as for any "call" region. Other calls are never joined in: a path whose argument is not
certainly half gives nothing. A callee of such a function is read along its own region call in
the next step (at most MAX_STEPS)."""

from __future__ import annotations

from typing import Dict

import libcst as cst

from amplint.analysis.facts.dtype_value import Dtype
from amplint.analysis.facts.regions import Enabled

MAX_STEPS = 3


def read_along_region_calls(dtypes, bindings, walk) -> None:
    done: Dict[int, Dict[str, Dtype]] = {}
    for _ in range(MAX_STEPS):
        found = _paths(dtypes, bindings, done)
        if not found:
            return
        done.update(found)
        dtypes.bindings = bindings  # a file with nothing to bind still has paths to read
        dtypes.path_functions.update(found)
        for key, values in found.items():
            bindings.seeds[key] = values
            bindings.certain.add(key)
        bindings.sites, bindings.sure = {}, {}
        dtypes.values, dtypes.region_nodes = {}, []
        walk(dtypes)


def _paths(dtypes, bindings, done) -> Dict[int, Dict[str, Dtype]]:
    found: Dict[int, Dict[str, Dtype]] = {}
    bindable = list(bindings.by_name.values()) + list(bindings.methods.values())
    bindable += list(bindings.by_attr.values()) + list(bindings.by_class.values()) + list(
        bindings.by_instance.values())
    recorded = {id(frame) for frame in bindable}
    sites_at = None
    for frame in dtypes.facts.tree.frames:
        key = id(frame)
        if frame.kind != "function" or key in found or key in done or key in bindings.certain:
            continue
        region = frame.inherited
        if frame.region is not None or region is None or region.kind not in ("call", "project") or (
                region.enabled is not Enabled.TRUE):
            continue
        if dtypes.declared_region(frame) is not None:
            continue
        if region.kind == "project":
            # another file calls it under its region (the project pass cites that call):
            # on that path its code surely runs under the region; its arguments stay unknown
            found[key] = {}
            continue
        call = id(region.origin)
        if key not in recorded:
            # its calls are not bound (an instance of a local, another class's method): the
            # parameters stay unknown, the code surely runs under the region on this path
            if sites_at is None:
                sites_at = {id(site.node): site.frame for site in dtypes.facts.tree.calls}
            caller = sites_at.get(call)
            if caller is not None and dtypes.region_state(caller)[1] and _reaches(
                    region.origin, caller, frame):
                found[key] = {}
            continue
        site = bindings.sites.get(key, {}).get(call)
        if site is None or not bindings.sure.get(key, {}).get(call):
            continue  # not read under the region, or not surely under it
        bound, site_key = site
        if bound is None or site_key != (region.device, region.dtype):
            continue
        found[key] = {name: value for name, value in bound.items() if isinstance(value, Dtype)}
    return found


def _reaches(call, caller, function) -> bool:
    """Whether `call`, which the call graph resolves to `function` by the def's bare name, runs
    it: no scope between the call and the def binds that name otherwise (`_head = _head` in
    the caller makes `_head` its local, and the region's call reaches no def)."""
    func = getattr(call, "func", None)
    name = getattr(getattr(function.node, "name", None), "value", None)
    if not isinstance(func, cst.Name) or func.value != name:
        return True  # an instance's `forward`, a method: not a lookup by the def's name
    owner = function.parent.scope if function.parent is not None else None
    scope = caller.scope
    while scope is not None and scope is not owner:
        if name in scope.bindings and name not in scope.functions:
            return False
        scope = scope.parent.scope if scope.parent is not None else None
    return True
