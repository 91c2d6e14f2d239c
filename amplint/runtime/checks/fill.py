"""AMP110 fp16-overflow-constant: a fill value outside the range of the tensor's dtype.

``masked_fill(m, -1e9)`` on an fp16 tensor raises "value cannot be converted to type at::Half
without overflow"; ``x[i] = -1e9`` and ``torch.where(m, x, -1e9)`` silently give -inf."""

from __future__ import annotations

import math

import torch

CODE = "AMP110"


def out_of_range(value, dtype) -> bool:
    """True when the Python number ``value`` cannot be represented in ``dtype``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or dtype is None:
        return False
    if dtype.is_floating_point:
        return math.isfinite(value) and abs(value) > torch.finfo(dtype).max
    if dtype.is_complex or dtype == torch.bool:
        return False
    info = torch.iinfo(dtype)
    return not (info.min <= value <= info.max)


def _arg(args, kwargs, index, name):
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def _dtype(t):
    return t.dtype if isinstance(t, torch.Tensor) else None


def install(monitor):
    from . import dtype_name

    from .dtype_from_input import finfo_bound_of

    defer = "AMP111" in monitor.checks  # another dtype's finfo bound: AMP111 reports it

    def check(func, value, dtype, raises=True):
        if not out_of_range(value, dtype):
            return
        if defer and raises and finfo_bound_of(value, dtype) is not None:
            return
        name = getattr(func, "__name__", str(func))
        if dtype.is_floating_point:
            bound = torch.finfo(dtype)
            hint = "use torch.finfo(x.dtype).min (or .max)"
            limit = f"±{bound.max:.6g}"
        else:
            bound = torch.iinfo(dtype)
            hint = "use a value inside the dtype's range"
            limit = f"[{bound.min}, {bound.max}]"
        effect = (f"raises 'value cannot be converted to type {dtype_name(dtype)} without overflow'"
                  if raises else "silently becomes inf")
        monitor.report(
            CODE,
            f"{name}() with value {value:g} outside the range of {dtype_name(dtype)} ({limit}) "
            f"{effect}: {hint}",
            op=name,
            value=value,
            dtype=dtype_name(dtype),
        )

    def masked_fill(func, args, kwargs):
        check(func, _arg(args, kwargs, 2, "value"), _dtype(_arg(args, kwargs, 0, "input")))

    def fill(func, args, kwargs):
        check(func, _arg(args, kwargs, 1, "value"), _dtype(_arg(args, kwargs, 0, "input")))

    def index_fill(func, args, kwargs):
        check(func, _arg(args, kwargs, 3, "value"), _dtype(_arg(args, kwargs, 0, "input")))

    def full(func, args, kwargs):
        dtype = kwargs.get("dtype")
        if dtype is not None:
            check(func, _arg(args, kwargs, 1, "fill_value"), dtype)

    def new_full(func, args, kwargs):
        dtype = kwargs.get("dtype") or _dtype(args[0] if args else None)
        check(func, _arg(args, kwargs, 2, "fill_value"), dtype)

    def full_like(func, args, kwargs):
        dtype = kwargs.get("dtype") or _dtype(_arg(args, kwargs, 0, "input"))
        check(func, _arg(args, kwargs, 1, "fill_value"), dtype)

    def setitem(func, args, kwargs):
        if len(args) == 3:
            check(func, args[2], _dtype(args[0]), raises=False)

    def where(func, args, kwargs):
        if len(args) == 3:
            x, y = args[1], args[2]
            if isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
                check(func, y, x.dtype, raises=False)
            elif isinstance(y, torch.Tensor) and not isinstance(x, torch.Tensor):
                check(func, x, y.dtype, raises=False)

    def method_where(func, args, kwargs):
        if len(args) == 3 and isinstance(args[0], torch.Tensor):
            check(func, args[2], args[0].dtype, raises=False)

    T = torch.Tensor
    table = {
        T.masked_fill: masked_fill,
        T.masked_fill_: masked_fill,
        torch.masked_fill: masked_fill,
        T.fill_: fill,
        torch.fill: fill,
        T.index_fill: index_fill,
        T.index_fill_: index_fill,
        torch.index_fill: index_fill,
        torch.full: full,
        T.new_full: new_full,
        torch.full_like: full_like,
        T.__setitem__: setitem,
        torch.where: where,
        T.where: method_where,
    }
    fill_ = getattr(torch, "fill_", None)
    if fill_ is not None:
        table[fill_] = fill
    return {func: (pre, None) for func, pre in table.items()}
