"""Autocast calls as written: the autocast APIs and float dtype names, and the `Region` one call
(a `with` item, a decorator, a framework method) opens. facts/regions.py finds which calls open
the regions of a file (names bound to them, partials, entries of the project pass) and reads
each through these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.bound_values import BoundValues, EntryBoundSpans
from amplint.analysis.facts.class_dtypes import self_dtypes
from amplint.analysis.facts.dtype_choices import dtype_choices
from amplint.analysis.facts.dtype_fields import field_dtype
from amplint.analysis.facts.foreign_stores import stored_elsewhere
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.region_entries import Enabled
from amplint.analysis.facts.syntax import bound_arguments, dict_literal, literal_bool, literal_str, self_attr
from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes


@dataclass(eq=False)
class Region:
    enabled: Enabled
    device: Optional[str]  # "cuda", "cpu", another literal, or None when unknown
    dtype: Optional[str]  # "float16", "bfloat16", or None when unknown
    origin: cst.CSTNode  # what to cite: the autocast call, decorator or calling expression
    kind: str  # "with" | "decorator" | "framework" | "call"
    device_expr: Optional[cst.BaseExpression] = None  # the device argument as written
    with_node: Optional[cst.With] = None
    via: Optional["Region"] = None  # for kind "call": the caller's region
    # For regions that come from outside this file (kind "project"): how to cite them,
    # e.g. "the autocast region at train.py:12" or "Trainer(precision='16-mixed') at main.py:30".
    external: Optional[str] = None
    enabled_expr: Optional[cst.BaseExpression] = None  # `enabled=` as written, if given
    # a region a context-manager function opens (facts/context_functions.py): its name; the
    # fixes that edit the autocast call or move code out of the `with` leave it alone
    opener: Optional[str] = None
    # the names an opener's parameters reach it by: `torch.autocast(*args, **kwargs)` forwards
    # `kwargs`; `torch.autocast(...) if enabled else None` is gated by `enabled`
    forwards: Optional[str] = None
    gate: Optional[str] = None
    # the autocast passes `cache_enabled=False` (an opener's region: every autocast it may
    # open does), so it keeps no cast of a weight for a later forward
    cache_off: bool = False
    # `dtype=self.<attr>` read through the classes that can be self (facts/class_dtypes.py)
    # when they disagree: (class, dtype) for each, `dtype` then None
    dtype_by_class: Optional[Tuple[Tuple[str, str], ...]] = None
    dtype_expr: Optional[cst.BaseExpression] = None  # `dtype=` as written, if given
    # an opener whose autocast's `dtype=` is its own parameter (facts/opener_dtypes.py):
    # (position, name, the default's dtype); `dtype` is then the default's, a call may pass another
    dtype_param: Optional[Tuple[int, str, Optional[str]]] = None
    # `dtype=` picks one of these by a test (facts/dtype_choices.py), `dtype` then None
    dtype_choices: Tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.enabled is not Enabled.FALSE

    @property
    def may_be_cuda(self) -> bool:
        return self.device in (None, "cuda")

    @property
    def root(self) -> "Region":
        region = self
        while region.via is not None:
            region = region.via
        return region


AUTOCAST_APIS = {
    # qualified name -> (device if fixed by the API, default dtype, positional parameters)
    "torch.amp.autocast": (None, None, ("device_type", "dtype", "enabled", "cache_enabled")),
    "torch.cuda.amp.autocast": ("cuda", "float16", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("cpu", "bfloat16", ("enabled", "dtype", "cache_enabled")),
}
_DEFAULT_DTYPE = _R.DEFAULT_REGION_DTYPE
DTYPES = {name: dtype for name, dtype in _R.DTYPE_NAMES.items() if dtype in _R.FLOAT_ORDER}


def autocast_call_region(qualified: str, call: cst.Call, origin: cst.CSTNode, module: Frame,
                         entries: tuple = (), frame: Optional[Frame] = None) -> Region:
    """The region a call of an autocast API opens (`module`: the file's module frame, where a
    `**helper()` is looked up; `entries`: the project pass's, for `dtype=self.<attr>`)."""
    fixed_device, default_dtype, positional = AUTOCAST_APIS[qualified]
    args = bound_arguments(call, positional)
    forwards = None
    for arg in call.args:
        if arg.star == "**":  # `autocast(**get_autocast_args(args))`, `**{"dtype": ...}`
            for key, value in star_kwargs(arg.value, module).items():
                args.setdefault(key, value)
            if isinstance(arg.value, cst.Name):
                forwards = arg.value.value
    enabled_expr = args.get("enabled")
    flag = True if enabled_expr is None else literal_bool(enabled_expr)
    enabled = Enabled.MAYBE if flag is None else (Enabled.TRUE if flag else Enabled.FALSE)
    device_expr = args.get("device_type")
    device = fixed_device or literal_str(device_expr)
    if device is not None:
        device = device.split(":")[0]
    dtype_expr = args.get("dtype")
    dtype = default_dtype or _DEFAULT_DTYPE.get(device or "")
    by_class = None
    if dtype_expr is not None:
        name = dotted_name(dtype_expr)
        dtype = DTYPES.get(".".join(name)) if name and name[0] == "torch" else None
        if dtype is None and isinstance(dtype_expr, cst.Name) \
                and dtype_expr.value not in stored_elsewhere(entries):
            # a constant bound once (`AMP_DTYPE = torch.bfloat16`) no other file patches
            # (`train_util.AMP_DTYPE = torch.float16`: read at call time)
            dtype = DTYPES.get(resolve_expr(dtype_expr, frame or module) or "")
        if dtype is None and frame is not None and isinstance(dtype_expr, cst.Attribute):
            field = field_dtype(dtype_expr, frame, entries)  # `dtype=cfg.amp_dtype`, a dataclass field
            dtype = field.dtype if field is not None else None
        attr = self_attr(dtype_expr) if frame is not None else None
        options = self_dtypes(entries, frame, attr) if attr is not None else None
        if options:
            found = {d for _, d in options}
            dtype, by_class = (found.pop(), None) if len(found) == 1 else (None, options)
        if dtype is None and by_class is None and not (attr is not None and _class_binds(frame, attr)):
            # (a class attribute is class_dtypes.py's: it knows every subclass of the project)
            dtype = _bound_dtype(dtype_expr, module, entries)
    choices = dtype_choices(dtype_expr, frame, DTYPES) if dtype is None and by_class is None else ()
    kind = "with"
    return Region(enabled, device, dtype, origin, kind, device_expr=device_expr, dtype_by_class=by_class,
                  dtype_choices=choices,
                  dtype_expr=dtype_expr, enabled_expr=enabled_expr, forwards=forwards,
                  cache_off=literal_bool(args["cache_enabled"]) is False if "cache_enabled" in args else False)


def _class_binds(frame: Optional[Frame], attr: str) -> bool:
    """Does the class of method `frame` bind `attr` in its own body?"""
    owner = frame.class_frame if frame is not None else None
    body = getattr(getattr(owner, "node", None), "body", None)
    for stmt in getattr(body, "body", ()):
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                [small.target] if isinstance(small, cst.AnnAssign) else [])
            if any(isinstance(t, cst.Name) and t.value == attr for t in targets):
                return True
    return False


def _bound_dtype(expr: cst.BaseExpression, module: Frame, entries: tuple) -> Optional[str]:
    """The one float dtype `expr` holds on every path of the project's solve
    (facts/bound_values.py): `self.compute_dtype` stored from a helper returning
    `torch.bfloat16` (the region is read before the file's facts exist: no `FileFacts` here)."""
    if not any(isinstance(e, EntryBoundSpans) for e in entries) or not isinstance(module.node, cst.Module):
        return None
    dtype = BoundValues(module.node, entries).one_dtype(expr)
    return dtype if dtype in DTYPES.values() else None


def star_kwargs(expr: cst.BaseExpression, module: Frame) -> Dict[str, cst.BaseExpression]:
    """The keywords `**expr` passes, when the file shows them: a dict literal, or a call of a
    module-level function of this file whose every `return` is a dict literal. A key the
    returns disagree on (or that only some give) maps to an unknown value."""
    if isinstance(expr, cst.Dict):
        return dict_literal(expr) or {}
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
        return {}
    helper = module.functions.get(expr.func.value)
    if helper is None or expr.func.value in module.imports:
        return {}
    returns = [n for n in iter_nodes(helper.node.body) if isinstance(n, cst.Return)]
    dicts = [dict_literal(r.value) for r in returns if r.value is not None]
    if not dicts or len(dicts) != len(returns) or any(d is None for d in dicts):
        return {}
    merged: Dict[str, cst.BaseExpression] = {}
    code = cst.Module(body=[]).code_for_node
    for entries in dicts:
        for key, value in entries.items():  # type: ignore[union-attr]
            if all(key in d and code(d[key]) == code(value) for d in dicts):  # type: ignore
                merged[key] = value
            else:
                merged[key] = cst.Name("__unknown__")
    return merged


def framework_region(call: cst.Call) -> Optional[Region]:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("autocast", "optim_context"):
        root = dotted_name(func.value)
        if root and root[0] == "torch":
            return None
        return Region(Enabled.MAYBE, None, None, call, "framework")
    return None


def decorator_region(frame: Frame, module: Frame, entries: tuple = ()) -> Optional[Region]:
    node = frame.node
    assert isinstance(node, cst.FunctionDef)
    outer = frame.parent
    assert outer is not None
    for dec in node.decorators:
        expr = dec.decorator
        call = expr if isinstance(expr, cst.Call) else None
        func = call.func if call is not None else expr
        qualified = resolve_expr(func, outer) or ""
        last = qualified.rsplit(".", 1)[-1] or (dotted_name(func) or ("",))[-1]
        if call is not None and qualified in AUTOCAST_APIS:
            region = autocast_call_region(qualified, call, dec, module, entries)
            region.kind = "decorator"
            return region
        if qualified.endswith("custom_fwd") and call is not None:
            cast = bound_arguments(call, ()).get("cast_inputs")
            cast_name = dotted_name(cast) if cast is not None else None
            if cast_name and DTYPES.get(".".join(cast_name)) == "float32":
                return Region(Enabled.FALSE, None, "float32", dec, "decorator")
        if last == "force_fp32":
            return Region(Enabled.FALSE, None, "float32", dec, "decorator")
        if last == "auto_fp16":
            # mmcv runs the body under autocast once `fp16_enabled` is set on the module.
            return Region(Enabled.MAYBE, "cuda", "float16", dec, "decorator")
    return None
