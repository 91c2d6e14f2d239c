"""Half values passed out of an autocast region into a function of another file (AMP105 across
files): insightface's arcface_torch computes the embeddings under `with torch.autocast(...)` in
train_v2.py and, after the region, hands them to the `PartialFC_V2` module of partial_fc_v2.py,
whose forward runs `F.linear` against its float32 class centres; a memory bank's
`update_memory(feature.detach(), index)` writes them into a float32 buffer. The file of the
region sees a call with a half argument; the file of the use sees a parameter. The project
pass joins them.

Callers are the files that open an active region of their own (the first pass's summaries list
them): each call outside any region, one of whose arguments is a value that escaped a region of
the file (as the file's escape walk reads it, amplint.analysis.facts.escape), is looked up in
the class flow (its call at that line), and when the flow resolves its callee to one function
of another file and nothing else (a function, a method of an instance, a module's forward), the
parameter that argument binds is named in an `EntryParamEscaped` of the callee's file
(facts/returned_escapes.py). The callee's escape walk starts that parameter as the caller's half
value, so its own dtype-strict uses are what AMP105 reports there.

Cost: only files with a region of their own are parsed (once, shared with the other entry
passes), and the flow is asked only about calls with such an argument."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.returned_escapes import EntryParamEscaped
from amplint.analysis.facts.tree import scope_key
from amplint.analysis.project.module_outputs import answer_or_walk

_MAX_CALLS = 64  # per project: the calls whose callees are looked up


def argument_slots(call: cst.Call):
    """(position or keyword, argument) of each argument of a call, up to the first `*`/`**`."""
    position = 0
    for arg in call.args:
        if arg.star:
            return
        yield (arg.keyword.value if arg.keyword is not None else position), arg
        if arg.keyword is None:
            position += 1


def region_file_arguments(project, arguments_of):
    """(path, function key, call, line, slot, cite) of the arguments `arguments_of(project, path)`
    gives in each first-pass file with a region, up to `_MAX_CALLS` per project."""
    asked = 0
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None or not summary.regions or summary.flow is None:
            continue
        for argument in arguments_of(project, path):
            asked += 1
            if asked > _MAX_CALLS:
                return
            yield (path,) + tuple(argument)


def escape_arg_entries(project) -> None:
    """Puts EntryParamEscaped into `project.escape_args` (path -> entries) and the callers'
    files into `project.escape_arg_deps`, read with the other entries (__init__.py)."""
    for path, key, last, line, slot, cite in region_file_arguments(project, _half_arguments):
        _note_callee(project, path, key, last, line, slot, cite)


def _half_arguments(project, path: str) -> List[tuple]:
    """(function key, call's last name, line, position or keyword, cite) for each argument of a
    call outside any region that holds a value escaped from a region of the file. Read from
    the first pass's own walk of the same text where it made one (first_pass_walks.py)."""
    known = answer_or_walk(project, path, "escaped_args", escaped_arguments)
    shown = project.display(path)
    return [(key, last, line, slot,
             f"{dtype or 'half (float16 or bfloat16)'} from the autocast region at {shown}:{region_line} "
             f"(produced at line {made}), passed by the call at {shown}:{line}")
            for key, last, line, slot, dtype, region_line, made in known]


def escaped_arguments(module, facts, escape) -> List[tuple]:
    """(function key, call's last name, line, position or keyword, region dtype, line of the
    region's `with`, line that produced the value) of the walked file's escaped arguments."""
    found = []
    for site in facts.tree.calls:
        frame, call = site.frame, site.node
        if site.dotted is None or facts.active_region(frame) is not None:
            continue
        qualified = facts.resolve(call.func, frame)
        if qualified is not None and qualified.split(".")[0] == "torch":
            continue
        for slot, arg in argument_slots(call):
            entry = escape.escaped(arg.value, frame)
            if entry is not None and entry.region is not None:
                found.append((frame, call, slot, entry))
    if not found:
        return []
    from amplint.analysis.project.lines import node_lines

    nodes = [call for _, call, _, _ in found]
    nodes += [e.region.root.origin for _, _, _, e in found] + [e.node for _, _, _, e in found if e.node is not None]
    lines = node_lines(module, nodes)
    return [(scope_key(frame.scope), last_name(call.func), lines.get(id(call), 0), slot,
             entry.region.dtype or "", lines.get(id(entry.region.root.origin), 0), lines.get(id(entry.node), 0))
            for frame, call, slot, entry in found]


def callee_param(project, path: str, key: str, last: Optional[str], line: int, slot) -> Optional[Tuple[str, str, str]]:
    """(file, function key, parameter) that argument `slot` of the call at `line` of function
    `key` of `path` (its callee's last name `last`) binds, when the class flow resolves the call to one function of another
    file and nothing else (a function, a method of an instance, a module's forward)."""
    flow = project.flow
    functions = flow._flow(path)
    function = functions.functions.get(key) if functions is not None else None
    if function is None or not line:
        return None
    records = [c for c in function.calls if c[3] == line and c[0] == last]
    if len(records) != 1:
        return None
    callee = records[0][1]
    receiver, attr = (callee[1], callee[2]) if callee[0] == "attr" else (callee, "")
    targets = {t[0] for t in flow.call_targets(path, key, receiver, attr)}
    if len(targets) != 1:
        return None
    (where, target_key), = targets
    if where == path:
        return None
    param = _param(project, where, target_key, slot)
    return (where, target_key, param) if param is not None else None


def _note_callee(project, path: str, key: str, last: Optional[str], line: int, slot, cite: str) -> None:
    found = callee_param(project, path, key, last, line, slot)
    if found is None:
        return
    where, target_key, param = found
    project.__dict__.setdefault("escape_args", {}).setdefault(where, set()).add(
        EntryParamEscaped(target_key, param, cite))
    deps = project.__dict__.setdefault("escape_arg_deps", {}).setdefault(where, set())
    deps.add(path)
    deps.update(project.__dict__.get("module_output_deps", {}).get(path, ()))  # what made it half


def _param(project, path: str, key: str, slot) -> Optional[str]:
    """The parameter of function `key` of `path` that a call's argument `slot` binds: a method
    reached through an instance leaves `self` out (a classmethod or staticmethod is not
    followed: the callee's walk checks the decorators)."""
    functions = project.flow._flow(path)
    function = functions.functions.get(key) if functions is not None else None
    if function is None or function.is_classmethod:
        return None
    summary = project.summary(path)
    parts = key.split(".")
    offset = 1 if len(parts) == 2 and summary is not None and parts[0] in summary.classes else 0
    if len(parts) > 2 or (len(parts) == 2 and not offset):
        return None
    if isinstance(slot, str):
        return slot if slot in function.params[offset:] else None
    index = slot + offset
    return function.params[index] if index < function.positional else None


def last_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None
