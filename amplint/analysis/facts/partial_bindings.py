"""The keywords a `functools.partial` binds for its later calls: `log_grads = partial(grad_logger,
scaler=scaler, optimizer=optimizer)` then `log_grads(params)` runs `grad_logger(params,
scaler=scaler, optimizer=optimizer)` (I-JEPA's train.py binds its scaler into the gradient logger
this way). The GradScaler protocol composes such a call with those keywords bound
(facts/scaler_protocol.py), as if the call spelled them.

Exact or nothing: the called name is bound once in the calling function, by that assignment,
to `partial(f, kw=value, ...)` (keywords only, no `*`/`**`), each value a name bound once
there, or a parameter; so at the call it still names what the partial holds.

`partial(f, kw=x, ...) if x is not None else f` is the same call: where `x` is None, `f`
alone leaves `kw` at its default, which must then be `None`, and the other keywords the partial
binds then matter to no event: every event composed must lie in an `if kw is not None:` (or
`if kw:`) arm of `f` (`bind`); `tested` names that keyword.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve
from amplint.analysis.facts.tree import CallSite, dotted_name


@dataclass(frozen=True)
class PartialBinding:
    function: Tuple[str, ...]  # the partial's function as written (`grad_logger`)
    keywords: Dict[str, str]  # keyword -> the caller's text of the value the partial holds
    tested: Optional[str] = None  # the keyword an `... if x is not None else f` tests


def partial_binding(tree, closures, site: CallSite) -> Optional[PartialBinding]:
    """The partial the bare-name call `site` calls, as the call's own keywords, or None."""
    func = site.node.func
    scope = site.frame.scope
    if not isinstance(func, cst.Name) or scope is None or scope.kind != "function":
        return None
    if func.value not in scope.bindings or not tree.bound_once(scope, func.value):
        return None
    value = closures.assigned().get((id(scope), func.value))
    tested: Optional[str] = None
    if isinstance(value, cst.IfExp):
        checked = _not_none(value.test)
        if checked is None or dotted_name(value.orelse) is None:
            return None
        value, plain = value.body, dotted_name(value.orelse)
        if not isinstance(value, cst.Call) or not value.args or dotted_name(value.args[0].value) != plain:
            return None
        tested = next((a.keyword.value for a in value.args[1:]
                       if a.keyword is not None and dotted_name(a.value) == (checked,)), None)
        if tested is None:
            return None
    if not isinstance(value, cst.Call) or resolve(dotted_name(value.func), scope) != "functools.partial":
        return None
    args = value.args
    if not args or args[0].keyword is not None or args[0].star:
        return None
    function = dotted_name(args[0].value)
    if function is None:
        return None
    keywords: Dict[str, str] = {}
    for arg in args[1:]:
        if arg.keyword is None or arg.star or not isinstance(arg.value, cst.Name):
            return None
        if not tree.bound_once(scope, arg.value.value):
            return None
        keywords[arg.keyword.value] = arg.value.value
    return PartialBinding(function, keywords, tested)


def _not_none(test: cst.BaseExpression) -> Optional[str]:
    """`x` of the test `x is not None` (a plain name), else None."""
    if (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.IsNot)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
        and isinstance(test.left, cst.Name)
    ):
        return test.left.value
    return None


def bind_remote(analysis, site: CallSite, entry, rename) -> bool:
    """Binds the keywords of the `functools.partial` a bare-name call of another file's function
    calls (partial_bindings.py); False where they cannot be bound (`bind`)."""
    if not isinstance(site.node.func, cst.Name):
        return True
    bound = partial_binding(analysis.tree, analysis.callgraph.closures, site)
    if bound is None:
        return True
    if entry.callee.rsplit(" ", 1)[-1].rsplit(".", 1)[-1] != bound.function[-1]:
        return False  # the project resolved the call to another function than the partial's
    arms = (tuple((item[3], item[4]) for item in event[5] if item[0] == "B") for event in entry.events)
    return bind(bound, entry.none_defaults, rename, arms)


def partial_callee(analysis, site: CallSite):
    """(the module-level def of this file, the partial's binding) for a call of a
    `functools.partial` of it, or None."""
    if not isinstance(site.node.func, cst.Name) or analysis.callgraph is None:
        return None
    closures = analysis.callgraph.closures
    bound = partial_binding(analysis.tree, closures, site)
    if bound is None or len(bound.function) != 1:
        return None
    callee = closures.module_def(site.frame.scope, bound.function[0])
    return (callee, bound) if callee is not None else None


def bind(bound: PartialBinding, nones, rename, arms) -> bool:
    """The partial's keywords into `rename` (scaler_protocol's renamer: its `params` and
    `bound`). A partial chosen by `x is not None` over the bare function: False unless `x`'s
    keyword defaults to None and every event lies in an arm that needs it set (`arms`: each
    event's (condition, polarity) pairs), so that no event runs with the bare function."""
    if bound.tested is not None:
        arm = (bound.tested + " is not None", True)
        if bound.tested not in nones or not all(arm in pairs for pairs in arms):
            return False
    for keyword, text in bound.keywords.items():
        if keyword in rename.params and keyword not in rename.bound:
            rename.bound[keyword] = text
    return True
