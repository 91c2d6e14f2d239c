"""Functions read along the calls that bring them under a region (RULES.md, "Along a region's
call path"), for amplint.analysis.facts.dtypes (one call string deep per step, following the
chain of "call" regions facts/regions.py records).

A function the file also runs outside any region (or that other files may call) has no single
value for its parameters: facts/dtype_params.py leaves them unknown, and code there joins the
region's dtype with float32. Yet the function a region reaches through call C (its inherited
region, kind "call", cites C) does run, on the region's paths, under the region with what the
region's calls pass. So, once the context-insensitive readings are done, each such function is
read once more along them:

- the region is enabled, and every call of the file that runs the function is either outside
  any active region (left out: autocast is off there) or surely under an enabled region of the
  same device and dtype (inside a literal enabled `with`, or in a function itself read along
  its region call); a call under another region, or only maybe under one, leaves no path;
- for a function whose calls dtype_params binds: its parameters hold the join of what those
  calls under the region pass (their dtypes in the caller's frame, as the last reading saw
  them; unknown stays unknown). This holds too for a function every call of which the
  readings put surely under the region (bound from its calls, `certain`): what those calls
  passed was read before any path, and a value that only a path reading gives (a `forward`
  of an instance read along its own region call) reaches it here. The path's join replaces
  what the earlier readings bound, never the other way round;
- for a function whose calls are not bound (a method or `forward` of an instance held in a
  local, a public method): its parameters stay unknown; the call graph must resolve the
  region's call to it, and a bare name its caller rebinds reaches no def;
- a function another file runs under an enabled region (kind "project", the project pass's
  cite) starts a path too, its parameters unknown;
- on the path, the function's code surely runs under the region (DtypeFacts.region_state).

The values the rules read for the function's body are then those of the region's paths
(tests/dtype_recorder.py checks them against what ran while autocast was on), and every
finding there cites the region through C ("called at line N under the autocast region at line
M"), as for any "call" region. A callee of such a function is read along its own region call
in the next step (at most MAX_STEPS)."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from amplint.analysis.facts.dtype_value import Dtype, InstanceValue, join_values
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
    callers = None
    for frame in dtypes.facts.tree.frames:
        key = id(frame)
        if frame.kind != "function" or key in found:
            continue
        if key not in recorded and (key in done or key in bindings.certain):
            continue  # (a bound function is joined again at every step, one the readings
            # already put surely under its region too: its callers' values may have grown on
            # the paths read since, `values = model(x)` of a `forward` read there)
        region = frame.inherited
        if frame.region is not None or region is None or region.kind not in ("call", "project") or (
                region.enabled is not Enabled.TRUE):
            continue
        if dtypes.declared_region(frame) is not None:
            continue
        wanted = (region.device, region.dtype)
        if key in recorded:
            # every call of the file is bound: join what the calls under the region pass
            values = _joined(bindings, key, wanted)
            if values is not None and values != done.get(key, _earlier(bindings, key)):
                found[key] = values
            continue
        # its calls are not bound (an instance of a local, another class's method, a function
        # another file runs under its region): the parameters stay unknown, the code surely
        # runs under the region on the region's paths
        if callers is None:
            callers = _callers(dtypes)
        sites = callers.get(key, [])
        if region.kind == "call" and not any(site.node is region.origin for site in sites):
            continue
        if all(_outside_or_sure(dtypes, site, wanted) and _reaches(site.node, site.frame, frame)
               for site in sites):
            found[key] = {}
    return found


def _earlier(bindings, key):
    """What a function every call of which surely runs under its region was bound to by the
    context-insensitive readings (facts/dtype_params.py), before any path was read; None for
    another: its path reading is new."""
    return bindings.seeds.get(key, {}) if key in bindings.certain else None


def _joined(bindings, key, wanted) -> Optional[Dict[str, Dtype]]:
    """The parameters' join over the calls under the region (each surely under it), None when
    a call runs under another region or only maybe under it; calls outside any region are left
    out (the values hold on the region's paths)."""
    sites = bindings.sites.get(key, {})
    sure = bindings.sure.get(key, {})
    values: Dict[str, Optional[Dtype]] = {}
    under = 0
    for call, (bound, site_key) in sites.items():
        if site_key is None:
            continue
        if site_key != wanted or not sure.get(call):
            return None
        under += 1
        for name, value in (bound or {}).items():
            value = value if isinstance(value, (Dtype, InstanceValue)) and bound is not None else None
            values[name] = join_values(values[name], value) if name in values else value
        if bound is None:
            values = {name: None for name in values}
    if not under:
        return None
    return {name: value for name, value in values.items() if value is not None}


def _callers(dtypes) -> Dict[int, list]:
    """id(function frame) -> the file's call sites the call graph resolves to it."""
    graph = dtypes.facts.regions.callgraph
    callers: Dict[int, list] = {}
    for site in dtypes.facts.tree.calls:
        for callee in graph.callees(site):
            callers.setdefault(id(callee), []).append(site)
    return callers


def _outside_or_sure(dtypes, site, wanted) -> bool:
    """A call outside any active region, or one surely under an enabled region of `wanted`'s
    device and dtype: no call runs the function under another region or maybe under this one."""
    region = dtypes.facts.active_region(site.frame)
    if region is None:
        return True  # autocast off there (no region, or a disabled one)
    return (region.device, region.dtype) == wanted and region.enabled is Enabled.TRUE and \
        dtypes.region_state(site.frame)[1]


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
