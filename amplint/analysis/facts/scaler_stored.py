"""A method of another file's helper class called on an instance the caller constructs: what
the constructor call stored in the instance's attributes (the callee's side:
project/scaler_stored.py).

`accumulator = GradAccumulator(optimizer, args.accum_steps)` then `accumulator.maybe_step(i)`:
the method's `self.optimizer` is the caller's `optimizer`, and its `self.scaler` (parameter
`scaler=None`, not passed) is `None`, so an arm under `if self.scaler is not None:` never runs
for this instance.

Exact or nothing: the receiver is a local of the calling function bound once, by
`name = Cls(...)` with `Cls` the method's class spelled by its name (a subclass's instance or a
factory's value is not read), without `*args`/`**kwargs`; the function uses that name only to
call its methods (`name.m(...)`: never passed on, never an attribute read or written, which
could hand the instance to code that stores another value); an argument is followed only when
it is a dotted name whose root the function binds once."""

from __future__ import annotations

from typing import Dict, Tuple

import libcst as cst

from amplint.analysis.facts.scaler_flow import key_text
from amplint.analysis.facts.syntax import dotted_name


def constructed_attrs(analysis, frame, call: cst.Call, entry) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(`self.attr` -> the caller's text of what the constructor call passed for it,
    `self.attr` -> `receiver.attr` for those it left at their `None` default)."""
    func = call.func
    if not entry.stored or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return {}, {}
    receiver = func.value.value
    scope = frame.scope
    tree = analysis.tree
    if scope.kind != "function" or not tree.bound_once(scope, receiver):
        return {}, {}
    sites = [site for site in tree.assigns if site.frame.scope is scope and len(site.targets) == 1
             and isinstance(site.targets[0], cst.Name) and site.targets[0].value == receiver]
    if len(sites) != 1 or not isinstance(sites[0].value, cst.Call):
        return {}, {}
    made = sites[0].value
    cls = entry.callee.split(": ", 1)[-1].split(".", 1)[0]
    name = dotted_name(made.func)
    if name is None or name[-1] != cls or any(arg.star for arg in made.args):
        return {}, {}
    if not _only_method_calls(scope.node, receiver):
        return {}, {}
    positional = [arg.value for arg in made.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in made.args if arg.keyword is not None}
    mapped: Dict[str, str] = {}
    left: Dict[str, str] = {}
    for attr, param, position, none_default in entry.stored:
        value = keywords.get(param)
        if value is None and 0 <= position < len(positional):
            value = positional[position]
        if value is None:
            if none_default:
                left["self." + attr] = f"{receiver}.{attr}"
            continue
        text = key_text(value)
        if text is not None and tree.bound_once(scope, text.split(".", 1)[0]):
            mapped["self." + attr] = text
    return mapped, left


def _only_method_calls(function: cst.CSTNode, name: str) -> bool:
    """Whether every use of `name` in `function` but its one binding calls a method of it."""
    counter = _Uses(name)
    function.visit(counter)
    return counter.names == counter.calls + 1


class _Uses(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.names = 0
        self.calls = 0

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.names += 1

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            self.calls += 1
