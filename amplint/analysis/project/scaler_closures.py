"""Closures across files in the scaler summaries: `self.step = training.make_step(self.opt,
self.scaler)` in one file, `def make_step(...): def step(): ...; return step` in another. The
caller's summary records the call of the held closure under its factory's imported name (a
"closure" call); the factory's file records which nested def each module function returns and
the factory parameters the closure's free names stand for (facts/returned_closures.py decides
both, exactly or not at all)."""

from __future__ import annotations

from typing import Optional, Tuple

from amplint.analysis.facts.tree import dotted_name


def imported_factory(graph, site, imported) -> Optional[str]:
    """`training.make_step` for a call of the value `training.make_step(...)` returned, bound
    once to the called local or `self.` attribute (returned_closures.factory_call), when the
    factory's name is a module-level import of the file that its scope does not shadow."""
    if graph is None:
        return None
    made = graph.closures.factory_call(site)
    if made is None:
        return None
    dotted = dotted_name(made[0].func)
    if not dotted or dotted[0] not in imported or len(dotted) > 2:
        return None
    scope = made[1]
    while scope is not None and scope.kind != "module":
        if dotted[0] in scope.bindings or dotted[0] in scope.imports:
            return None
        scope = scope.parent
    return ".".join(dotted)


def factory_of(facts, frame) -> Optional[Tuple[str, Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]]:
    """For the closure a module function returns (returned_closures.py): the factory's key,
    its positional and keyword-only parameters, and those it never binds again."""
    factory = frame.parent
    if factory is None or factory.kind != "function" or factory.parent is not facts.tree.module_frame:
        return None
    if facts.callgraph is None or facts.callgraph.closures.closure_of(factory) is not frame:
        return None
    params = factory.node.params
    positional = tuple(p.name.value for p in (*params.posonly_params, *params.params))
    keywords = tuple(p.name.value for p in params.kwonly_params)
    fixed = tuple(n for n in positional + keywords if facts.tree.bound_once(factory, n))
    return factory.name, positional, keywords, fixed
