"""Half values returned out of an autocast region to callers in other files (AMP105 across
files): LAVIS-style `extract_features` / BLIP's `image_embed` runs `with torch.autocast(...)`
around the projection and returns its output; a script in another file calls it outside any
region and meets the value with a float32 tensor or module. The file of the region sees a
return; the file of the use sees a call of an imported name. The project pass joins them.

Callees are the functions and methods of the files that open an active region of their own
(the first pass's summaries list them) whose every `return` gives a value that escaped one of
the function's regions, or every one a float32 value, as the file's own escape walk
(amplint.analysis.facts.escape) reads them: no decorator, no generator, no `async`. Their call
sites are the class flow's (classvalues.py): a site whose callee the flow resolves to that
function and nothing else, in another file, hands its file an `EntryReturnsEscaped`
(facts/returned_escapes.py) naming the call. A site the flow cannot resolve, or resolves to
more than one function, gets nothing.

Cost: only files with a region of their own and a `return` in their text are parsed (once,
shared with the other entry passes), and the call sites of a callee are searched only when it
returns such a value."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.returned_escapes import EntryReturnsEscaped
from amplint.analysis.facts.tree import iter_nodes, scope_key
from amplint.analysis.project.module_outputs import answer_or_walk
from amplint.analysis.project.flowindex import callee_targets
from amplint.analysis.project.nograd_entries import receiver_name

_MAX_CALLEES = 64  # per project: the functions whose call sites are searched


def escape_return_entries(project) -> None:
    """Puts EntryReturnsEscaped into `project.escape_returns` (path -> entries) and the callees'
    files into `project.escape_return_deps`, read with the other entries (__init__.py)."""
    callees: List[Tuple[str, str, str, str, str]] = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        text = project.files.get(path)
        if summary is None or not summary.regions or not text or "return" not in text:
            continue
        callees.extend(_returning_functions(project, path))
        if len(callees) > _MAX_CALLEES:
            return
    for path, key, kind, dtype, cite in callees:
        _note_sites(project, path, key, kind, dtype, cite)


def _returning_functions(project, path: str) -> List[Tuple[str, str, str, str, str]]:
    """(file, function key, "half"/"f32", dtype, cite) for the functions of a file whose every
    return agrees on an escaped half value (at least one of its own regions' values) or on
    a float32 one; the float32 ones only in files that also return a half one. Read from the
    first pass's own walk of the same text where it made one (first_pass_walks.py)."""
    known = answer_or_walk(project, path, "returns", returning_functions)
    shown = project.display(path)
    return [(path, key, kind, dtype,
             f"{dtype or 'half (float16 or bfloat16)'} from the autocast region at {shown}:{region_line} "
             f"(returned by `{key}` at {shown}:{def_line})" if kind == "half" else "")
            for key, kind, dtype, region_line, def_line in known]


def returning_functions(module, facts, escape) -> List[Tuple[str, str, str, int, int]]:
    """(function key, "half"/"f32", dtype, line of the region's `with`, line of the def) of the
    walked file's functions whose every return agrees on an escaped half value or on a float32
    one; the float32 ones (lines 0) only where a half one is found."""
    found, floats = [], []
    for frame in facts.tree.frames:
        node = frame.node
        if frame.kind != "function" or not isinstance(node, cst.FunctionDef):
            continue
        entries = escape.returns.get(id(node))
        if not entries or node.decorators or node.asynchronous is not None or any(
                isinstance(n, (cst.Yield, cst.Await)) for n in iter_nodes(node)):
            continue
        key = scope_key(frame)
        if key.count(".") > 1 or (key.count(".") == 1 and frame.parent.kind != "class"):
            continue  # a nested function: no call site of another file reaches it by name
        if all(e.kind == "f32" for e in entries):
            floats.append((key, "f32", "", 0, 0))
            continue
        if not all(e.kind == "half" and e.escaped is not None and e.region is not None for e in entries):
            continue
        region = entries[0].region
        if any(e.region is not region for e in entries):
            continue
        from amplint.analysis.project.lines import node_lines

        lines = node_lines(module, [region.root.origin, node.name])
        found.append((key, "half", region.dtype or "", lines.get(id(region.root.origin), 0),
                      lines.get(id(node.name), 0)))
    return found + floats if found else []


def _note_sites(project, path: str, key: str, kind: str, dtype: str, cite: str) -> None:
    flow = project.flow
    parts = key.split(".")
    target = (path, key)
    for where, caller, callee, _args, _line in flow._call_sites(parts[-1], ("bind", target, False)):
        if where == path:
            continue  # the file's own walk reads its calls (escape._method_return)
        name = _callee_text(callee)
        if name is None:
            continue
        direct, classes = callee_targets(flow.values(where, caller, callee, 0))
        if classes or set(direct) != {target}:
            continue
        ref = callee[1] if callee[0] == "ref" else ""
        entry = EntryReturnsEscaped(caller or "", name, kind, dtype, cite, ref)
        project.__dict__.setdefault("escape_returns", {}).setdefault(where, set()).add(entry)
        project.__dict__.setdefault("escape_return_deps", {}).setdefault(where, set()).add(path)


def _callee_text(callee) -> Optional[Tuple[str, ...]]:
    """How the calling file writes the call: `model.image_embed` -> ("model", "image_embed");
    an imported function -> ("", its last name)."""
    if callee[0] == "ref" and isinstance(callee[1], str) and not callee[1].startswith("@"):
        return ("", callee[1].rsplit(".", 1)[-1])
    if callee[0] == "attr":
        base = receiver_name(callee[1])
        return base + (callee[2],) if base is not None else None
    return None
