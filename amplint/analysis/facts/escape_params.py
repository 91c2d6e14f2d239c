"""Parameters every call of the file binds to an escaped half value, for the escape walk
(amplint.analysis.facts.escape; AMP105 and AMP111 read it): BEVFormer's detector returns the
history BEV its `obtain_history_bev` computed under a float16 region, and passes it on as
`self.expand(prev_bev)`, whose `self.history_expand(prev_bev)` meets a float32 Linear.

Which calls a function has, and that they are all its calls, is the dtype fact's answer
(facts/dtype_params.py: a private name, a nested function, or a public one no other project file
mentions, facts/local_callers.py); the fact must also value the parameter as one half dtype
there (exactly float16 or bfloat16, every call agreeing). Then each call's argument must be an
escaped half value of the escape walk, all from one region (the one a finding cites); the
function itself runs outside any region. Anything else: the parameter stays an input."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Tuple

import libcst as cst

from amplint.analysis.facts.dtype_calls import bind
from amplint.analysis.facts.dtype_value import Dtype
from amplint.analysis.facts.escape_entry import Entry
from amplint.analysis.facts.tree import Frame


def escaped_by_callers(escape, facts) -> List[Tuple[Frame, Dict[str, Entry]]]:
    """(function, parameter -> the escaped half entry every call of the file passes)."""
    bindings = facts.dtypes.bindings
    if bindings is None or not bindings.seeds:
        return []
    frames_of = None
    found: List[Tuple[Frame, Dict[str, Entry]]] = []
    for frame in facts.tree.frames:
        seeds = bindings.seeds.get(id(frame))
        if frame.kind != "function" or not seeds or facts.active_region(frame) is not None:
            continue
        wanted = [name for name, value in seeds.items() if isinstance(value, Dtype)
                  and not value.conditional and value.exact in ("float16", "bfloat16")]
        calls = bindings.calls.get(id(frame), {})
        if not wanted or not calls or len(calls) != bindings.expected.get(id(frame)):
            continue
        if frames_of is None:
            frames_of = {id(site.node): site.frame for site in facts.tree.calls}
        params: Dict[str, Entry] = {}
        for name in wanted:
            entries = []
            for call, method in calls.values():
                caller = frames_of.get(id(call))
                bound = bind(frame.node, call, [a.value for a in call.args], skip_first=method)
                argument = bound.get(name) if bound is not None and caller is not None else None
                entry = escape.escaped(argument, caller) if isinstance(argument, cst.BaseExpression) else None
                if entry is None or entry.region is None:
                    break
                entries.append(entry)
            else:
                if entries and all(e.region is entries[0].region for e in entries):
                    params[name] = replace(entries[0])
        if params:
            found.append((frame, params))
    return found
