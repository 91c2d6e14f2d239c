"""Values that may be half passed, under an enabled autocast region, into a function of another
file (AMP101 across files): GFPGAN's `GFPGANer.enhance` (gfpgan/utils.py) runs
`output = self.gfpgan(batch)[0]` under `torch.autocast("cuda", dtype=torch.float16)` and, still
in the region, hands `output` to `scatter_restored_faces(restored, keep_idx, n)` of
gfpgan/face_utils.py, whose `out[keep_idx] = restored` writes it into a float32
`torch.zeros(...)`. The file of the region sees a call with a half argument; the file of the
write sees a parameter. The project pass joins them.

Callers are the files that open a region of their own (the first pass's summaries list them):
each call under an active region that is not disabled, one of whose arguments may be half there
on the evidence AMP101 reads in one file (facts/half_evidence.py: the dtype fact, a module's
output, a matmul or lower-precision op, a local bound to one), is looked up in the class flow
(escape_args.callee_param: one function of another file and nothing else), and the parameter
that argument binds is named in an `EntryRegionArg` of the callee's file. There the parameter is
that evidence wherever the function runs under a region and never binds the name again.

Cost: the files are those escape_args.py parses already (one walk per file, shared), and the
flow is asked only about calls with such an argument, at most escape_args._MAX_CALLS per project."""

from __future__ import annotations

from typing import List

from amplint.analysis.facts.half_evidence import EntryRegionArg, half_origin
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.tree import scope_key
from amplint.analysis.project.escape_args import argument_slots, callee_param, last_name, region_file_arguments
from amplint.analysis.project.first_pass_walks import first_pass_answer
from amplint.analysis.project.module_outputs import output_facts


def region_arg_entries(project) -> None:
    """Puts EntryRegionArg into `project.region_args` (path -> entries) and the callers' files
    into `project.region_arg_deps`, read with the other entries (__init__.py)."""
    for path, key, last, line, slot, cite in region_file_arguments(project, _half_arguments):
        found = callee_param(project, path, key, last, line, slot)
        if found is None:
            continue
        where, target, param = found
        project.__dict__.setdefault("region_args", {}).setdefault(where, set()).add(
            EntryRegionArg(target, param, cite))
        deps = project.__dict__.setdefault("region_arg_deps", {}).setdefault(where, set())
        deps.add(path)


def _half_arguments(project, path: str) -> List[tuple]:
    """(function key, call's last name, line, position or keyword, cite) for each argument of a
    call under an active region of the file (not a disabled one) that may be half there. Read
    from the first pass's own facts of the same text where its rules made their dtype walk
    (first_pass_walks.py)."""
    known = first_pass_answer(project, path, "half_args")
    if known is None:
        parsed = output_facts(project, path)  # (the walk of escapes is not read here)
        if parsed is None:
            return []
        known = half_arguments(*parsed)
    shown = project.display(path)
    out = []
    for key, last, line, slot, why, made in known:
        cite = f"{why} at {shown}:{made}, passed at {shown}:{line}" if made else f"{why}, passed at {shown}:{line}"
        out.append((key, last, line, slot, cite))
    return out


def half_arguments(module, facts) -> List[tuple]:
    """(function key, call's last name, line, position or keyword, why it may be half, line
    that shows it) of the arguments of calls under an active, not disabled region."""
    found = []
    for site in facts.tree.calls:
        frame, call = site.frame, site.node
        region = facts.active_region(frame) if site.dotted is not None else None
        if region is None or region.enabled is Enabled.FALSE:
            continue
        qualified = facts.resolve(call.func, frame)
        if qualified is not None and qualified.split(".")[0] == "torch":
            continue
        for slot, arg in argument_slots(call):
            try:
                origin = half_origin(facts, arg.value, frame)
            except (RecursionError, MemoryError):
                origin = None
            if origin is not None:
                found.append((frame, call, slot, origin))
    if not found:
        return []
    from amplint.analysis.project.lines import node_lines

    lines = node_lines(module, [call for _, call, _, _ in found] + [origin[1] for _, _, _, origin in found])
    out = []
    for frame, call, slot, (why, node) in found:
        if why.startswith("`") and " is " in why:  # the dtype fact's "`h` is float16"
            code, word = why.rsplit(" is ", 1)
            why = f"the {word} value {code}"
        out.append((scope_key(frame.scope), last_name(call.func), lines.get(id(call), 0), slot, why,
                    lines.get(id(node), 0)))
    return out
