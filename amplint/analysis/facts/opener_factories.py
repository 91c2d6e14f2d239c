"""Opener FACTORIES (mlfoundations/open_clip's `get_autocast(precision)`): a function whose every
`return` hands back a callable whose call opens a region, `partial(torch.amp.autocast, ...)`, or a
plain context (`suppress`, `nullcontext`: a path without a region, so maybe enabled). Its value
bound to a local (`autocast = get_autocast(args.precision)`) is an alias the region analysis
reads, as it reads a local `partial` of autocast; `with autocast():` opens the region. A factory
of another file: the project pass (project/context_factories.py) gives the calling file an
EntryContextRegion marked `factory`.

A factory may return such a value held at module level: a name bound once to the partial
(`return BF16`), or an entry of a table of them (llm-foundry's
`return _PRECISION_CONTEXTS[precision]` over `{"amp_bf16": partial(torch.autocast, ...)}`): every
value the table holds is one the call may return, so each must be a partial of autocast or a
plain context, and the file must never change the table (no item store or delete, no `update`,
`setdefault`, ...; module_tables)."""

from __future__ import annotations

from typing import List

import libcst as cst

from amplint.analysis.facts.context_functions import bound_locally, is_contextmanager, opened, returned_values
from amplint.analysis.facts.module_tables import held_values
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, scope_key

# context managers that open nothing: a path of an opener factory returning one has no region
_PLAIN_CONTEXTS = frozenset({"contextlib.suppress", "contextlib.nullcontext"})


def factory_opened(analysis, callee: Frame):
    """(enabled, region, None) for a function whose every `return` hands back an opener
    *factory*, a value whose call opens a region: `partial(torch.amp.autocast, ...)` (open_clip's
    `get_autocast(precision)`), or `suppress` / `nullcontext` (a path without a region, so maybe
    enabled); None when some `return` is anything else or none is a partial of autocast."""
    node = callee.node
    if not isinstance(node, cst.FunctionDef) or callee.kind != "function" or is_contextmanager(callee):
        return None
    if not any(_partial_call(site.node, callee) for site in callee.calls) and not _module_partials(analysis.tree):
        return None  # no `partial(...)` to return, nor one held at module level: its body need not be read (issue 34)
    returned = returned_values(node)
    held = held_values(analysis.tree, callee, returned)
    regions: List[object] = []
    for value, frame in held or [(value, callee) for value in returned]:
        if resolve_expr(value, frame) in _PLAIN_CONTEXTS:
            regions.append(None)
            continue
        region = analysis.partial_opens(value, frame)
        if region is None:
            return None
        regions.append(region)
    found = opened(regions) if any(r is not None for r in regions) else None
    if found is None:
        return None
    enabled, best = found
    # the returns disagree on the device or dtype (open_clip's "amp" and "amp_bf16"): unknown
    for field in ("device", "dtype"):
        if len({getattr(r, field) for r in regions if r is not None and r.active}) > 1:  # type: ignore
            setattr(best, field, None)
    return enabled, best, None


def _module_partials(tree) -> bool:
    """Does the module's own code (not a function's) call `functools.partial`? (once per file)"""
    found = getattr(tree, "_module_partials", None)
    if found is None:
        module = tree.module_frame
        found = tree._module_partials = any(_partial_call(site.node, site.frame) for site in module.calls)
    return found


def _partial_call(call: cst.Call, callee: Frame) -> bool:
    """`call` may be a `partial(torch.amp.autocast, ...)` as RegionAnalysis.partial_opens reads
    it in `callee`: every call straight in a function's body is among its frame's `calls`."""
    return bool(call.args) and resolve_expr(call.func, callee) == "functools.partial"


def factory_call(analysis, value: cst.BaseExpression, frame: Frame):
    """(enabled, device, dtype, how to cite it or None, the factory's name) when `value` is a
    call of an opener factory, a function whose every return is a partial of autocast (or a
    plain context): one of another file (the project's EntryContextRegion.factory,
    `get_autocast(args.precision)`) or of this file (factory_opened)."""
    if not isinstance(value, cst.Call):
        return None
    written = dotted_name(value.func)
    entry = analysis._factories.get((scope_key(frame), ".".join(written))) if written else None
    if entry is not None:
        return entry.enabled, entry.device, entry.dtype, entry.cite, entry.callee
    if not analysis._imports_functools or not isinstance(value.func, (cst.Name, cst.Attribute)) or (
            isinstance(value.func, cst.Name) and bound_locally(frame, value.func.value)):
        return None  # no partial to return without functools
    for callee in analysis.callgraph.callees(CallSite(value, frame, None, None, None)):
        key = id(callee)
        if key not in analysis._factory_memo:
            analysis._factory_memo[key] = factory_opened(analysis, callee)
        found = analysis._factory_memo[key]
        if found is not None:
            return found[0], found[1].device, found[1].dtype, None, callee.name
    return None
