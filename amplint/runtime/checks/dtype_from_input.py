"""AMP111 dtype-from-input: a fill value that is exactly the range of another floating dtype
(``torch.finfo(x.dtype).max`` with ``x`` float32) written into a half tensor, where it overflows:
"value cannot be converted to type c10::Half without overflow". The value came from the dtype
of a different tensor than the one filled; take it from the filled tensor."""

from __future__ import annotations

import torch

CODE = "AMP111"

_SOURCES = (torch.float32, torch.float64, torch.bfloat16)


def finfo_bound_of(value, dtype):
    """The dtype whose finfo min/max ``value`` is, when that range does not fit ``dtype``."""
    if isinstance(value, bool) or not isinstance(value, float) or dtype is None:
        return None
    if not dtype.is_floating_point:
        return None
    for source in _SOURCES:
        if source == dtype:
            continue
        bound = torch.finfo(source).max
        if abs(value) == bound and bound > torch.finfo(dtype).max:
            return source
    return None


# function name -> position of the fill value
_FILLS = {"masked_fill": 2, "masked_fill_": 2, "fill_": 1, "fill": 1, "index_fill": 3,
          "index_fill_": 3, "fill_diagonal_": 1, "full_like": 1, "new_full": 2}


def install(monitor):
    from . import dtype_name

    def pre(func, args, kwargs):
        name = getattr(func, "__name__", "")
        index = _FILLS.get(name)
        if index is None or len(args) <= index or not isinstance(args[0], torch.Tensor):
            return
        dtype = kwargs.get("dtype") or args[0].dtype
        source = finfo_bound_of(args[index], dtype)
        if source is None:
            return
        value = args[index]
        monitor.report(
            CODE,
            f"{name}() with value {value:g} = torch.finfo({dtype_name(source)})."
            f"{'max' if value > 0 else 'min'} into a {dtype_name(dtype)} tensor raises 'value "
            f"cannot be converted to type {dtype_name(dtype)} without overflow': the dtype was "
            "taken from another tensor; use torch.finfo(<filled tensor>.dtype)",
            op=name, value=value, dtype=dtype_name(dtype), source=dtype_name(source),
            explains=("AMP110",),
        )

    T = torch.Tensor
    table = {}
    for name in _FILLS:
        for owner in (T, torch):
            func = getattr(owner, name, None)
            if func is not None:
                table[func] = (pre, None)
    return table
