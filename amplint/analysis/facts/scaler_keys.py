"""Per-key stepping across a call: the optimizer a caller's key picks in the callee.

StyleTTS2's `MultiOptimizer.step(key=None)` steps `self.optimizers[k]` for `k in keys`, where
`keys = [key] if key is not None else self.keys`; its training loop calls `optimizer.step(key)`
for each key of a display of literals. Composed at such a call, the callee's loop runs once,
with `k` the caller's `key` (loop_bindings.single_pass), so the step's optimizer is the
caller's `optimizer.optimizers[key]`: the caller's `for key in (...)` loop steps another
optimizer each iteration (scaler_paths.passed_optimizer), which AMP121 (one update after the
loop is the protocol) and AMP126 (an update inside it is between two optimizers' steps) read.
Exact or nothing: the call must pass the parameter a value that is not None (a literal, or the
target of a caller's `for` over a display of literals); a subscript by a parameter is renamed
only when the call binds that parameter to a dotted name.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Sequence, Tuple

import libcst as cst

from amplint.analysis.facts.loop_bindings import single_pass
from amplint.analysis.facts.returned_values import display_elements
from amplint.analysis.facts.scaler_flow import Loop, key_text

_SUBSCRIPT = re.compile(r"^(.+)\[(\w+)\]$")


def keyed_text(text: str, rename) -> Optional[str]:
    """`self.optimizers[key]` in the caller's names: the container renamed as any text, the
    subscript, a parameter of the callee, to the name the call binds it to; `rename.text(text)`
    for anything else."""
    match = _SUBSCRIPT.match(text)
    key = rename.bound.get(match.group(2)) if match is not None else None
    container = rename.text(match.group(1)) if key is not None else None
    if container is None:
        return rename.text(text)
    return f"{container}[{key}]"


def once_loops(loops: Sequence[Tuple[cst.CSTNode, Optional[Tuple[str, str]]]], call: cst.Call,
               positional: Sequence[str], keywords: Sequence[str],
               caller_ctx) -> Dict[int, Tuple[str, str]]:
    """id(loop node) -> (target, parameter) for the callee's loops (each with its
    `single_pass`) that this call runs once: it passes the parameter a value that is not None."""
    found: Dict[int, Tuple[str, str]] = {}
    for node, once in loops:
        if once is None or id(node) in found:
            continue
        value = _argument(call, once[1], positional, keywords)
        if value is not None and _not_none(value, caller_ctx):
            found[id(node)] = once
    return found


def run_once(ctx, arg: Optional[str], once: Dict[int, Tuple[str, str]]):
    """(ctx without the loops that run once, `arg` with their targets read as the parameters
    they are bound to: `self.optimizers[k]` -> `self.optimizers[key]`)."""
    kept = []
    for item in ctx:
        bound = once.get(id(item.node)) if isinstance(item, Loop) else None
        if bound is None:
            kept.append(item)
            continue
        if arg is not None:
            match = _SUBSCRIPT.match(arg)
            if match is not None and match.group(2) == bound[0]:
                arg = f"{match.group(1)}[{bound[1]}]"
            elif arg == bound[0]:
                arg = bound[1]
    return tuple(kept), arg


def _argument(call: cst.Call, param: str, positional: Sequence[str],
              keywords: Sequence[str]) -> Optional[cst.BaseExpression]:
    if any(a.star for a in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    if param in positional:
        index = list(positional).index(param)
        plain = [a for a in call.args if a.keyword is None]
        return plain[index].value if index < len(plain) else None
    return None


def _not_none(value: cst.BaseExpression, caller_ctx) -> bool:
    """A literal other than None, or the target of a loop of the caller around the call whose
    iterable is a display of string or integer literals (`for key in ("enc", "dec")`)."""
    if isinstance(value, (cst.SimpleString, cst.Integer)):
        return True
    name = key_text(value)
    if name is None or "." in name:
        return False
    for item in caller_ctx:
        node = item.node if isinstance(item, Loop) else None
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == name:
            shown = display_elements(node.iter)
            return shown is not None and all(t[:1] in ("'", '"', "#") for t in shown)
    return False


def own_single_passes(events, frame, tree) -> Dict[int, Tuple[str, str]]:
    """id(loop node) -> (target, parameter) for the loops of the function `frame` around its own
    protocol events that run once when a call passes the parameter (single_pass)."""
    found: Dict[int, Tuple[str, str]] = {}
    seen = set()
    for event in events:
        if event.origin is not None or event.remote is not None:
            continue  # a callee's loops are not this function's statements
        for loop in event.loops:
            if id(loop.node) in seen:
                continue
            seen.add(id(loop.node))
            once = _single_pass(loop.node, frame, tree)
            if once is not None:
                found[id(loop.node)] = once
    return found


def _single_pass(loop, frame, tree):
    """single_pass, asked once per loop of the file (every composed call of a callee asks again)."""
    known = tree.__dict__.setdefault("_single_passes", {})
    key = id(loop)
    if key not in known:
        known[key] = single_pass(loop, frame, tree) if isinstance(loop, cst.For) and isinstance(
            loop.iter, (cst.Name, cst.List, cst.Tuple)) else None
    return known[key]
