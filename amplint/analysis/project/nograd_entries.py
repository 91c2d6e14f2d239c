"""No-grad forwards behind a method call (AMP150 across files): a region's call
`model.generate(...)` that the class flow resolves to a method of another file decorated
`@torch.no_grad()` and calling `self(...)` (nanoGPT's `GPT.generate`) runs the model's forward
without grad. The calling file gets an `EntryNoGradCall` naming the call (its function, its
receiver, the method); the rule pairs it with a later grad forward of the same receiver in the
same region.

Cost: only targets whose method name is not `forward`, in files whose text says `no_grad` or
`inference_mode`, are parsed (once each, shared with the other entry passes)."""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

from amplint.analysis.facts.nograd_methods import (
    EntryNoGradArgs, EntryNoGradCall, EntryNoGradFunction, nograd_forward, nograd_params,
)
from amplint.analysis.project.function_entries import parsed_facts
from amplint.analysis.project.module_defs import module_functions
from amplint.analysis.project.nograd_held import note_nograd_held

_WORDS = ("no_grad", "inference_mode")


def receiver_name(receiver) -> Optional[Tuple[str, ...]]:
    """The dotted name of a flow value the rule can match by text: `model`, `self.policy`."""
    if receiver is None:
        return None
    if receiver[0] == "local":
        return (receiver[1],)
    if receiver[0] == "self":
        return ("self", receiver[1])
    if receiver[0] == "attr":
        base = receiver_name(receiver[1])
        return base + (receiver[2],) if base is not None else None
    return None


def note_nograd_call(project, path: str, key: str, receiver, attr: str, target: Tuple[str, str]) -> None:
    """Record an EntryNoGradCall for `path` when `target` (file, "Class.method"), which the call
    `receiver.attr(...)` in function `key` runs, is a no-grad forward method."""
    where, method_key = target
    note_nograd_held(project, path, key, receiver, attr, target)  # `guesser(x)` running its model
    if not attr or attr == "forward" or method_key.count(".") != 1 or method_key.split(".")[1] != attr:
        return
    name = receiver_name(receiver)
    if name is None:
        return
    memo: Dict[Tuple[str, str], Optional[int]] = project.__dict__.setdefault("_nograd_methods", {})
    if target not in memo:
        memo[target] = _nograd_line(project, where, method_key)
    line = memo[target]
    if isinstance(line, tuple):  # it runs some of its arguments under no_grad
        if {t[0] for t in project.flow.call_targets(path, key, receiver, attr)} != {target}:
            return  # the receiver may hold another class too: which method runs is not known
        params, line = line
        found_args = project.__dict__.setdefault("nograd_calls", {})
        found_args.setdefault(path, set()).add(EntryNoGradArgs(
            key or "", name, attr, params, method_key.split(".")[0], f"{project.display(where)}:{line}"))
        project.__dict__.setdefault("nograd_deps", {}).setdefault(path, set()).add(where)
        return
    if line is None:
        return
    cls = method_key.split(".")[0]
    found: Dict[str, Set[EntryNoGradCall]] = project.__dict__.setdefault("nograd_calls", {})
    found.setdefault(path, set()).add(
        EntryNoGradCall(key or "", name, attr, cls, f"{project.display(where)}:{line}"))
    project.__dict__.setdefault("nograd_deps", {}).setdefault(path, set()).add(where)


def _nograd_line(project, path: str, method_key: str) -> Optional[int]:
    text = project.files.get(path) or ""
    if not any(word in text for word in _WORDS):
        return None
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    module, facts = parsed
    cls, name = method_key.split(".")
    frame = facts.tree.classes.get(cls)
    method = frame.functions.get(name) if frame is not None else None
    from amplint.analysis.project.lines import node_lines

    if not nograd_forward(method):
        params = nograd_params(method)
        if not params:
            return None
        return params, node_lines(module, [method.node.name]).get(id(method.node.name), 0)
    return node_lines(module, [method.node.name]).get(id(method.node.name), 0)


def note_nograd_function(project, path: str, ref: str, target: Tuple[str, str]) -> None:
    """Record an EntryNoGradFunction for `path` when `target` (file, function), which a region's
    call of the imported `ref` runs, calls some of its parameters under no_grad (FixMatch's
    `pseudo_label(model, ...)` in utils/ssl.py)."""
    where, key = target
    if "." in key or where == path:
        return
    memo: Dict[Tuple[str, str], object] = project.__dict__.setdefault("_nograd_functions", {})
    if target not in memo:
        memo[target] = _nograd_function(project, where, key)
    found = memo[target]
    if found is None:
        return
    params, line = found
    calls = project.__dict__.setdefault("nograd_calls", {})
    calls.setdefault(path, set()).add(EntryNoGradFunction(ref, params, f"{project.display(where)}:{line}"))
    project.__dict__.setdefault("nograd_deps", {}).setdefault(path, set()).add(where)


def _nograd_function(project, path: str, key: str):
    text = project.files.get(path) or ""
    if not any(word in text for word in _WORDS) or not _may_run_nograd(text, key):
        return None
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    module, facts = parsed
    function = facts.tree.module_frame.functions.get(key)
    params = nograd_params(function)
    if not params:
        return None
    from amplint.analysis.project.lines import node_lines

    return params, node_lines(module, [function.node.name]).get(id(function.node.name), 0)


def _may_run_nograd(text: str, key: str) -> bool:
    """The module-level `def key` (with its decorators) says no_grad / inference_mode: the
    file is parsed with LibCST only then."""
    for node, segment in module_functions(text):
        if node.name == key:
            return any(word in segment for word in _WORDS)
    return False
