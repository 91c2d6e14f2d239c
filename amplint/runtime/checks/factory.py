"""AMP101 factory-default-dtype: a float32 tensor made by ``torch.zeros/ones/empty/full/rand/
randn/tensor`` without ``dtype=`` inside an autocast region or a half module's forward, which then
meets a half tensor in an op that needs equal dtypes (index put / ``x[i] = v``, scatter, and
matmul-like ops outside autocast).  Reported at the factory's line, where the fix goes."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.weak import WeakIdKeyDictionary

from ..locate import user_location

CODE = "AMP101"

_FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "tensor")

# Ops that raise when their tensors' dtypes differ, whether or not autocast is on.
_STRICT = (
    "__setitem__", "index_put", "index_put_", "index_copy", "index_copy_", "masked_scatter",
    "masked_scatter_", "scatter", "scatter_", "put_",
)
# Ops that raise on mixed dtypes, unless autocast casts their inputs first.
_STRICT_NO_AUTOCAST = ("matmul", "__matmul__", "mm", "bmm", "addmm", "baddbmm", "linear",
                       "conv1d", "conv2d", "conv3d")


def _tensors(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b


def install(monitor):
    from . import HALF_DTYPES, autocast_on, dtype_name

    fresh = WeakIdKeyDictionary()  # tensor -> (filename, line, factory name, region)

    def made(func, args, kwargs, result):
        if kwargs.get("dtype") is not None or not isinstance(result, torch.Tensor):
            return
        if result.dtype != torch.float32:
            return
        if autocast_on(result.device.type):
            region = "an autocast region"
        elif monitor.tracker.half_depth > 0:
            region = "a half module's forward"
        else:
            return
        filename, line = user_location()
        fresh[result] = (filename, line, func.__name__, region)

    def meets(func, args, kwargs, autocast_matters=False):
        if not len(fresh):
            return
        tensors = list(_tensors(args)) + list(_tensors(kwargs.values()))
        tagged = [t for t in tensors if t in fresh]
        if not tagged:
            return
        halves = [t for t in tensors if t.dtype in HALF_DTYPES]
        if not halves:
            return
        if autocast_matters and autocast_on(halves[0].device.type):
            return
        filename, line, factory, region = fresh[tagged[0]]
        op = getattr(func, "__name__", str(func))
        used_at = user_location()
        monitor.report(
            CODE,
            f"torch.{factory}() without dtype= made a float32 tensor inside {region}; it meets a "
            f"{dtype_name(halves[0].dtype)} tensor in {op}() at {used_at[0]}:{used_at[1]}, which "
            "needs equal dtypes ('Index put requires the source and destination dtypes match'): "
            f"use x.new_{factory if factory != 'tensor' else 'tensor'}(...) or pass dtype=",
            location=(filename, line),
            op=op,
            factory=factory,
            used_at=f"{used_at[0]}:{used_at[1]}",
        )
        for t in tagged:
            fresh.pop(t, None)

    def strict(func, args, kwargs):
        meets(func, args, kwargs)

    def strict_no_autocast(func, args, kwargs):
        meets(func, args, kwargs, autocast_matters=True)

    table = {}
    for name in _FACTORIES:
        table[getattr(torch, name)] = (None, made)
    T = torch.Tensor
    for name in _STRICT:
        for owner in (T, torch):
            func = getattr(owner, name, None)
            if func is not None:
                table[func] = (strict, None)
    for name in _STRICT_NO_AUTOCAST:
        for owner in (T, torch, F):
            func = getattr(owner, name, None)
            if func is not None:
                table[func] = (strict_no_autocast, None)
    return table
