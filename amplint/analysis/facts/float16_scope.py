"""Which code of a file runs in float16 outside autocast, for `Float16Values` (half_values.py)
and the rules AMP140/AMP141: the methods of float16 module classes (`float16_functions`,
`in_float16_scope`), the functions of the file they call or another file's float16 code passes
float16 values (`float16_callees`), and how a finding cites why (`float16_where`)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.half_callees import (
    EntryFloat16Args, EntryHalfParam, float16_arg_entries, half_param_entries,
)
from amplint.analysis.facts.tree import Frame


def float16_functions(facts) -> frozenset:
    """ids of the function frames that run in float16 (not bfloat16) without autocast: the
    methods of module classes this file casts with `.half()` / `.to(torch.float16)`, and of
    their submodule classes (computed once, in `facts.fp16`)."""
    return facts.fp16.float16_functions


def float16_callees(facts) -> Dict[int, object]:
    """id(function frame) -> the float16-scope method that reaches it (a Frame), or the
    EntryFloat16Args of another file's float16 code calling it: the functions of this file that
    a method of a float16 module calls (k-diffusion's `RMSNorm.forward` calling the module-level
    `rms_norm(x, self.scale, self.eps)`; not `__init__`, whose parameters are settings), those
    another file's float16 code passes float16 values (project/float16_args.py), and those they
    call in turn, with no autocast region active at the call. They are not float16 scope
    themselves: a parameter there is float16 where the entry says so or every caller of the
    file passes float16 (`Float16Values._passed_kind`); a value they make on their own is what
    the dtype fact says."""
    values = facts.half_values
    found = values.__dict__.get("_callees")
    if found is None:
        found = {}
        roots = float16_functions(facts)
        passed = _entry_roots(facts)
        if roots or passed:
            calls: Dict[int, List] = {}
            for site in facts.tree.calls:
                caller = site.frame.function
                if caller is not None and facts.active_region(site.frame) is None:
                    calls.setdefault(id(caller), []).append(site)
            queue = [(id(f), f) for f in facts.tree.frames
                     if id(f) in roots and f.kind == "function" and f.name != "__init__"]
            for frame, entry in passed:
                if id(frame) not in roots and id(frame) not in found:
                    found[id(frame)] = entry
                    queue.append((id(frame), frame))
            inherited = facts.fp16.inherited
            for key, caller in queue:  # breadth first: a caller is found before its callees
                for site in calls.get(key, ()):
                    own = key in inherited and _self_call(site.node)
                    for callee in facts.callgraph.callees(site):
                        if callee.kind != "function" or id(callee) in roots:
                            continue
                        if own and callee.parent is not None and callee.parent.kind == "class":
                            # `self.m()` in a method the half class inherits: the half instance runs
                            # the `m` it resolves to, which is a root when it is of this file
                            continue
                        values.callee_sites.add(id(site.node))
                        if id(callee) not in found:
                            found[id(callee)] = caller if key in roots else found[key]
                            queue.append((id(callee), callee))
        values.__dict__["_callees"] = found
    return found


def _entry_roots(facts) -> List[Tuple[Frame, object]]:
    """(function, its first entry) for the functions of this file that another file's float16
    code passes float16 values (project/float16_args.py, module-level functions), and those
    whose parameter every call binds to a float16 model (project/half_params.py and
    half_param_flow.py: `Class.method` keys too)."""
    functions = facts.tree.module_frame.functions
    found = [(functions[name], entries[0]) for name, entries in sorted(float16_arg_entries(facts.entries).items())
             if name in functions]
    for (key, _param), entry in sorted(half_param_entries(facts.entries).items()):
        frame = function_frame(facts, key)
        if entry.dtype == "float16" and entry.every and frame is not None and all(frame is not f for f, _ in found):
            found.append((frame, entry))
    return found


def _self_call(call: cst.Call) -> bool:
    func = call.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"


def function_frame(facts, key: str) -> Optional[Frame]:
    """The frame of module-level function `key` or of method `Class.name` of this file."""
    parts = key.split(".")
    if len(parts) == 1:
        return facts.tree.module_frame.functions.get(key)
    cls = facts.tree.classes.get(parts[0]) if len(parts) == 2 else None
    return cls.functions.get(parts[1]) if cls is not None else None


def has_float16_code(facts) -> bool:
    """The file may hold float16 values outside autocast: a float16 cast, a class another file
    makes float16, or a function another file's float16 code passes float16 values."""
    return bool(facts.fp16.model_casts or facts.fp16.float16_functions
                or any(isinstance(e, EntryFloat16Args) or (
                    isinstance(e, EntryHalfParam) and e.every and e.dtype == "float16") for e in facts.entries))


def float16_where(facts, frame) -> Tuple[str, Dict[str, cst.CSTNode]]:
    """How AMP140/AMP141 cite why a value of `frame` is float16 outside autocast, and the related
    lines the message is formatted with: the float16 module whose method this is, the method
    of one that passes the value on, or a cast of the file."""
    if in_float16_scope(facts, frame):
        note, related = facts.fp16.note(frame)
        return f"in a float16 module: {note[1:-1]}", related
    function = frame.function
    caller = float16_callees(facts).get(id(function)) if function is not None else None
    if isinstance(caller, EntryFloat16Args):
        return caller.cite, {}
    if isinstance(caller, EntryHalfParam):
        return f"on the output of a float16 model: {caller.cite}", {}
    if caller is not None:
        note, related = facts.fp16.note(caller)
        owner = caller.class_frame
        name = f"{owner.name}.{caller.name}" if owner is not None else caller.name
        return f"passed by `{name}` of a float16 module: {note[1:-1]}", related
    return "on a tensor the file casts to float16", {}


def in_float16_scope(facts, frame) -> bool:
    """`frame` runs in float16 outside autocast: a method of a float16 module class (see
    `float16_functions`) with no active autocast region around it."""
    function = frame.function
    return (
        function is not None
        and id(function) in float16_functions(facts)
        and facts.active_region(frame) is None
    )
