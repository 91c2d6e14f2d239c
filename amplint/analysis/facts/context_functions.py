"""Regions opened through a context-manager function (OLMo's and many trainers' idiom):

    @contextlib.contextmanager
    def maybe_autocast(dtype):
        if dtype == torch.float32:
            yield
        else:
            with torch.autocast("cuda", dtype=dtype):
                yield

    with maybe_autocast(cfg.autocast_precision):   # this body runs where the generator yields
        loss = model(batch)

The body of `with f(...):` runs where `f`'s generator yields. It runs under an autocast when a
`yield` of `f` sits in an active autocast region of `f` (a `with` of `f` itself, as the region
analysis reads it: aliases, partials, `enabled=` included). Enabled when every `yield` does and
each such region is enabled; maybe enabled when some `yield` is outside any active region (the
float32 branch above) or a region is only maybe enabled. No region when no `yield` is under an
active one (`enabled=False`, or no autocast at all). Device and dtype: the region's own (a dtype
passed as a parameter is unknown: the call's argument is not substituted).

Generator functions decorated `@contextmanager` / `@contextlib.contextmanager` (the `async`
variants too) count, and so do functions that RETURN the context (Lightning's
`autocast_context_manager()`, nanoGPT-style `return nullcontext() if cpu else torch.autocast(...)`):
each own `return` gives the region its value opens (read as `with <value>:` in the function),
none for `nullcontext()` / `suppress()` or a value not known to open one; the same rule as for
the yields then gives enabled / maybe enabled / nothing. A `self.m()` whose method a subclass
of the file overrides is maybe enabled unless every override opens an enabled region too (the
runtime class may be the subclass); an override in another file is not seen. A class with
`__enter__` does not count. The same file: RegionAnalysis resolves the `with` call through its call graph (a function
of the file, `self.method`). Another file: the project pass (project/context_openers.py) gives
the calling file an EntryContextRegion."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.opener_dtypes import call_dtype, dtype_param
from amplint.analysis.facts.syntax import code_children, literal_bool, literal_str, rebinds, self_attr
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, iter_nodes, scope_key

CONTEXTMANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})

_SKIPPED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def is_contextmanager(frame: Frame) -> bool:
    node = frame.node
    if not isinstance(node, cst.FunctionDef) or frame.parent is None:
        return False
    return any(resolve_expr(dec.decorator, frame.parent) in CONTEXTMANAGERS for dec in node.decorators)


def yield_regions(function: cst.FunctionDef, with_region: Callable[[cst.With], object]) -> List[object]:
    """The region (or None) each `yield` of the function's own body runs under: the innermost
    `with` of the function whose `with_region(node)` is not None."""
    found: List[object] = []
    stack: List[Tuple[cst.CSTNode, object]] = [(function.body, None)]
    while stack:
        node, region = stack.pop()
        if isinstance(node, cst.Yield):
            found.append(region)
        if isinstance(node, cst.With):
            for item in node.items:
                stack.append((item, region))
            inner = with_region(node)
            stack.append((node.body, inner if inner is not None else region))
            continue
        for child in code_children(node):
            if not isinstance(child, _SKIPPED):
                stack.append((child, region))
    return found


def opened(regions: List[object]) -> Optional[Tuple[object, object]]:
    """(enabled, the region to take device and dtype from) for the yields' regions, or None.
    Disabled when no region is active and some is disabled (`autocast(enabled=False)`: inside
    an outer region it turns autocast off; with a path that opens nothing at all this says
    disabled too, the side that reports less)."""
    active = [r for r in regions if r is not None and r.active]  # type: ignore[attr-defined]
    if not active:
        off = [r for r in regions if r is not None]
        return (off[0].enabled, off[0]) if off else None  # type: ignore[attr-defined]
    states = type(active[0].enabled)  # type: ignore[attr-defined]  (regions.Enabled)
    every = len(active) == len(regions) and all(r.enabled is states.TRUE for r in active)  # type: ignore
    best = min(active, key=lambda r: (r.enabled is not states.TRUE, r.device != "cuda",  # type: ignore
                                      r.dtype != "float16"))  # type: ignore
    if best.cache_off and not all(r.cache_off for r in active):  # type: ignore[attr-defined]
        best = replace(best, cache_off=False)  # type: ignore[type-var]
    return (states.TRUE if every else states.MAYBE), best


def function_region(analysis, call: cst.Call, frame: Frame, Region, entries_only: bool = False):
    """The Region `with call:` enters when `call` runs a context-manager function that opens
    one: a function of this file (RegionAnalysis's call graph), or one of another file that the
    project pass found (EntryContextRegion, by the callee as written in this scope). `Region`:
    regions.Region (which imports this module). `entries_only`: the latter only (while the
    file's aliases are being read: `self.autocast = TorchAutocast(...)` of another file)."""
    if analysis._openers:
        written = dotted_name(call.func)
        entry = analysis._openers.get((scope_key(frame), ".".join(written))) if written else None
        if entry is not None:
            enabled = type(entry.enabled).FALSE if passes_false(call, entry.enabled_param) else entry.enabled
            device, dtype = forwarded(call, entry, analysis.tree, frame) if entry.forwarded else (
                entry.device, entry.dtype)
            return Region(enabled, device, dtype, call, "with", external=entry.cite,
                          opener=entry.callee, cache_off=entry.cache_off,
                          enabled_expr=param_argument(call, entry.enabled_param))
    if entries_only or not isinstance(call.func, (cst.Name, cst.Attribute)):
        return None
    if isinstance(call.func, cst.Name) and bound_locally(frame, call.func.value):
        return None  # a parameter or local of that name, not the file's function
    cls = class_called(analysis, call, frame)
    callees = [cls] if cls is not None else analysis.callgraph.callees(CallSite(call, frame, None, None, None))
    for callee in callees:
        found = _opened_by(analysis, callee)
        if found is not None:
            enabled, inner, param = found
            if passes_false(call, param):
                return Region(type(enabled).FALSE, inner.device, inner.dtype, call, "with", opener=callee.name,
                              cache_off=inner.cache_off)
            others = [_opened_by(analysis, other) for other in overrides(analysis, call, frame, callee)]
            if any(o is None or o[0] is not type(enabled).TRUE for o in others):
                enabled = type(enabled).MAYBE  # an override opens less (or nothing)
            dtype = call_dtype(call, inner.dtype_param) if inner.dtype_param is not None else inner.dtype
            if (inner.dtype_param is not None or any(o is not None and o[1].dtype_param is not None for o in others)) \
                    and any(o is not None and (o[1].dtype != dtype or o[1].dtype_param is not None) for o in others):
                dtype = None  # an override's region may have another dtype
            return Region(enabled, inner.device, dtype, call, "with", opener=callee.name,
                          cache_off=inner.cache_off and all(o is not None and o[1].cache_off for o in others))
    return None


def _opened_by(analysis, callee: Frame):
    memo = analysis._opened
    key = id(callee)
    if key not in memo:
        memo[key] = None  # a context manager that enters itself opens nothing more
        withs = analysis._with_frames
        regions: List[object] = []
        if callee.kind == "class":
            regions = entered_regions(analysis, callee)
        elif is_contextmanager(callee):
            regions = yield_regions(
                callee.node, lambda node: analysis.with_region(node, withs[id(node)].parent))
        elif isinstance(callee.node, cst.FunctionDef):
            regions = [analysis._region_of_expr(value, callee, call_it=False)
                       for value in returned_values(callee.node)]
        found = opened(regions) if regions else None
        if found is not None:
            inner = found[1]
            param = dtype_param(callee, regions) if inner.dtype is None else None  # type: ignore[attr-defined]
            if param is not None:
                inner = replace(inner, dtype=param[2], dtype_param=param)  # type: ignore[type-var]
            memo[key] = (found[0], inner, enabled_param(callee, regions))
    return memo[key]


def enabled_param(callee: Frame, regions: List[object]) -> Optional[Tuple[int, str]]:
    """(position the call fills it at, -1 for keyword-only; name) of the parameter that every
    active region's `enabled=` is written as (transformers' `maybe_autocast(device_type,
    dtype=None, enabled=True)`), when the function does not bind it again; else None."""
    active = [r for r in regions if r is not None and r.active]  # type: ignore[attr-defined]
    if callee.kind == "class":  # a context-manager class: the parameter of its `__init__`
        callee = callee.functions.get("__init__")  # type: ignore[assignment]
        if callee is None:
            return None
    node = callee.node
    if not isinstance(node, cst.FunctionDef):
        return None
    kwargs = _spread_kwargs(node)
    written = {r.enabled_expr.value if isinstance(r.enabled_expr, cst.Name) else  # type: ignore
               r.gate if r.enabled_expr is None and r.gate is not None else  # type: ignore
               _SPREAD if r.enabled_expr is None and kwargs and r.forwards == kwargs else None  # type: ignore
               for r in active}
    if len(written) != 1 or None in written:
        return None
    (name,) = written
    if name == _SPREAD:  # icefall's `torch_autocast(device_type="cuda", **kwargs)`
        return (-1, "enabled")
    positional = [p.name.value for p in list(node.params.posonly_params) + list(node.params.params)]
    if callee.parent is not None and callee.parent.kind == "class":
        if any(resolve_expr(d.decorator, callee.parent) == "staticmethod" for d in node.decorators):
            return None
        positional = positional[1:]  # called through the instance or the class's `self.`
    if name in positional:
        found = (positional.index(name), name)
    elif name in [p.name.value for p in node.params.kwonly_params]:
        found = (-1, name)
    else:
        return None
    return None if rebinds(node.body, name) else found


_SPREAD = "**"  # every active autocast gets the opener's `**kwargs`: a call's `enabled=` reaches it


def _spread_kwargs(node: cst.FunctionDef) -> Optional[str]:
    """The function's `**kwargs` name when its body only ever spreads it (`f(**kwargs)`: no
    read, no change) and no other parameter is named `enabled`; else None."""
    params = node.params
    if not isinstance(params.star_kwarg, cst.Param):
        return None
    named = (*params.posonly_params, *params.params, *params.kwonly_params)
    if any(p.name.value == "enabled" for p in named):
        return None
    name = params.star_kwarg.name.value
    nodes = list(iter_nodes(node.body))
    spread = sum(1 for n in nodes if isinstance(n, cst.Arg) and n.star == "**"
                 and isinstance(n.value, cst.Name) and n.value.value == name)
    used = sum(1 for n in nodes if isinstance(n, cst.Name) and n.value == name)
    return name if spread and spread == used else None


def forwarded(call: cst.Call, entry, tree=None, frame: Optional[Frame] = None) -> Tuple[Optional[str], Optional[str]]:
    """(device, dtype) of an opener that passes its `**kwargs` on to the autocast (audiocraft's
    `TorchAutocast(enabled, *args, **kwargs)`): the call's literal `device_type=` / `dtype=`
    keywords, or a `dtype=self.<attr>` the method stored just before (stored_dtypes.py); unknown
    where the call writes anything else (a `**` of its own, a name)."""
    from amplint.analysis.data import dtype_rules as _R
    from amplint.analysis.facts.stored_dtypes import stored_dtype

    device, dtype = entry.device, entry.dtype
    for arg in call.args:
        if arg.star == "**":
            return None, None
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "device_type":
            text = literal_str(arg.value)
            device = text.split(":")[0] if text is not None else None
        elif keyword == "dtype":
            name = dotted_name(arg.value)
            found = _R.DTYPE_NAMES.get(".".join(name)) if name and name[0] == "torch" else None
            attr = self_attr(arg.value) if found is None and tree is not None and frame is not None else None
            method = frame.function if attr is not None else None
            if attr is not None and method is not None:
                found = stored_dtype(tree, method, call, attr)
            dtype = found if found in _R.FLOAT_ORDER else None
    return device, dtype


def param_argument(call: cst.Call, param: Optional[Tuple[int, str]]) -> Optional[cst.BaseExpression]:
    """The expression the call passes for the `enabled` parameter `param` (None: it passes
    none, or a `*args` / `**kw` may fill it): the opened region's flag, as written."""
    if param is None:
        return None
    index, name = param
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
        else:
            if position == index:
                return arg.value
            position += 1
    return None


def passes_false(call: cst.Call, param: Optional[Tuple[int, str]]) -> bool:
    """Does the call pass a literal `False` for the `enabled` parameter `param`?"""
    passed = param_argument(call, param)
    return passed is not None and literal_bool(passed) is False


def entered_regions(analysis, cls: Frame) -> List[object]:
    """A context-manager class (its own `__enter__` and `__exit__`): the regions its `__enter__`
    enters, `X.__enter__()` or `stack.enter_context(X)` with `X` read as `with X:` in it (a
    `self._ctx` bound to an autocast in `__init__` included). One entered under an `if`, a loop
    or a `try` of `__enter__` (or not entered at all) counts as a path without it."""
    enter, leave = cls.functions.get("__enter__"), cls.functions.get("__exit__")
    if enter is None or leave is None or not isinstance(enter.node, cst.FunctionDef):
        return []
    found: List[object] = []
    stack: List[Tuple[cst.CSTNode, bool]] = [(enter.node.body, False)]
    while stack:
        node, conditional = stack.pop()
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            entered = None
            if node.func.attr.value == "__enter__" and not node.args:
                entered = node.func.value
            elif node.func.attr.value == "enter_context" and len(node.args) == 1:
                entered = node.args[0].value
            if entered is not None:
                regions = _held(analysis, cls, entered, enter)
                found.extend(regions + [None] if conditional else regions)
        inner = conditional or isinstance(node, (cst.If, cst.For, cst.While, cst.Try, cst.Match,
                                                 cst.IfExp, cst.BooleanOperation))
        for child in code_children(node):
            if not isinstance(child, _SKIPPED):
                stack.append((child, inner))
    return found if any(r is not None for r in found) else []


def _held(analysis, cls: Frame, entered: cst.BaseExpression, enter: Frame) -> List[object]:
    """The region(s) `with entered:` opens in `__enter__`: for `self.attr`, what this class's
    own methods assign to it (each assignment a path; the alias table of the file is keyed
    by attribute name only, so another class's `self.attr` is not read here)."""
    attr = self_attr(entered)
    if attr is None:
        return [analysis._region_of_expr(entered, enter, call_it=False)]
    values = [site for site in analysis.tree.assigns if len(site.targets) == 1
              and self_attr(site.targets[0]) == attr and site.frame.class_frame is cls]
    return [analysis._region_of_expr(site.value, site.frame, call_it=False) for site in values] or [None]


def class_called(analysis, call: cst.Call, frame: Frame) -> Optional[Frame]:
    """The class of this file that `Name(...)` instantiates (a module-level class the name is
    not bound to otherwise where it is read)."""
    func = call.func
    if not isinstance(func, cst.Name):
        return None
    module = analysis.tree.module_frame
    cls = analysis.tree.classes.get(func.value)
    if cls is None or cls.parent is not module or func.value in module.imports:
        return None
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope is not module:
        if func.value in scope.bindings or func.value in scope.imports or func.value in scope.functions:
            return None
        scope = scope.parent
    return cls


def returned_values(function: cst.FunctionDef) -> List[cst.BaseExpression]:
    """The values of the function's own `return`s; none when a `return` has no value or the
    function is a generator (its call returns a generator, not what it returns)."""
    values: List[cst.BaseExpression] = []
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Yield, cst.Await)):
            return []
        if isinstance(node, cst.Return):
            if node.value is None:
                return []
            values.append(node.value)
        for child in code_children(node):
            if not isinstance(child, _SKIPPED):
                stack.append(child)
    return values


def overrides(analysis, call: cst.Call, frame: Frame, callee: Frame) -> List[Frame]:
    """For `self.m(...)`: the defs of `m` in classes of this file derived from the caller's
    class (other than `callee`): at run time `self` may be one of them."""
    func = call.func
    owner = frame.class_frame
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == "self" and owner is not None):
        return []
    classes = analysis.tree.classes
    found = []
    for name in derived_classes(classes, owner.name):
        method = classes[name].functions.get(func.attr.value)
        if method is not None and method is not callee:
            found.append(method)
    return found


def derived_classes(classes: Dict[str, Frame], owner: str) -> List[str]:
    """The classes of the file derived from `owner` (by the last name of a base), sorted."""
    derived = {owner}
    changed = True
    while changed:
        changed = False
        for name, cls in classes.items():
            if name in derived or not isinstance(cls.node, cst.ClassDef):
                continue
            for base in cls.node.bases:
                written = dotted_name(base.value)
                if written and written[-1] in derived:
                    derived.add(name)
                    changed = True
                    break
    derived.discard(owner)
    return sorted(derived)


def bound_locally(frame: Frame, name: str) -> bool:
    """Is `name`, where `frame` reads it, bound by a function scope around it to something other
    than a def of that scope (a parameter, an assignment, an import)? The call graph resolves a
    plain name to a def of the nearest scope that has one, whatever else binds it."""
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "function" and (name in scope.bindings or name in scope.imports):
            return name not in scope.functions or name in scope.imports
        scope = scope.parent
    return False
