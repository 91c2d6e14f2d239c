"""AMP105 autocast-output-escape: a half tensor produced in an autocast region (by a matmul,
linear or conv, or a view of one) meets a float32 tensor in an op that needs equal dtypes after
the region has ended (``mm``/``matmul``/``linear``/``conv``, an index put into a float32 buffer).
Reported at the user's line of the use, citing where the tensor was produced."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.weak import WeakIdKeyDictionary

from ..locate import user_location

CODE = "AMP105"

_PRODUCERS = ("mm", "matmul", "bmm", "addmm", "baddbmm", "__matmul__", "linear",
              "conv1d", "conv2d", "conv3d")
# Ops whose output has their input's dtype: the tag follows the value.
_KEEP = ("detach", "view", "reshape", "transpose", "t", "permute", "contiguous", "flatten",
         "clone", "squeeze", "unsqueeze", "relu", "gelu", "silu", "dropout")
# Ops that raise on mixed dtypes outside autocast: positions of the written source for writes.
_PAIRS = ("mm", "matmul", "bmm", "__matmul__", "__rmatmul__", "linear", "conv1d", "conv2d",
          "conv3d")
_WRITES = {"__setitem__": 2, "index_put_": 2, "index_put": 2, "index_add_": 3,
           "index_copy_": 3, "scatter_": 3, "scatter_add_": 3}


def _tensors(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _tensors(a)


def install(monitor):
    from . import HALF_DTYPES, autocast_on, dtype_name

    made = WeakIdKeyDictionary()  # half tensor -> (filename, line) where the region made it

    def produced(func, args, kwargs, result):
        if not isinstance(result, torch.Tensor) or result.dtype not in HALF_DTYPES:
            return
        if autocast_on(result.device.type):
            made[result] = user_location()

    def kept(func, args, kwargs, result):
        if len(made) and args and isinstance(args[0], torch.Tensor) and args[0] in made:
            if isinstance(result, torch.Tensor) and result.dtype == args[0].dtype:
                made[result] = made[args[0]]

    def report(func, half, where):
        op = getattr(func, "__name__", str(func))
        filename, line = made[half]
        monitor.report(
            CODE,
            f"a {dtype_name(half.dtype)} tensor produced under autocast at {filename}:{line} is "
            f"used after the region in {op}() {where}, which needs equal dtypes: cast it back "
            "with .float() after the region",
            op=op, produced_at=f"{filename}:{line}", explains=("AMP101",),
        )

    def pair(func, args, kwargs):
        if not len(made):
            return
        tensors = list(_tensors(args)) + list(_tensors(kwargs.values()))
        halves = [t for t in tensors if t in made and t.dtype in HALF_DTYPES]
        if not halves or autocast_on(halves[0].device.type):
            return
        if any(t.dtype == torch.float32 for t in tensors):
            report(func, halves[0], "with a float32 tensor")

    def write(func, args, kwargs):
        if not len(made) or not args or not isinstance(args[0], torch.Tensor):
            return
        name = getattr(func, "__name__", "")
        position = _WRITES.get(name, -1)
        source = args[position] if 0 < position < len(args) else None
        if not isinstance(source, torch.Tensor) or source not in made:
            return
        if args[0].dtype != torch.float32 or autocast_on(source.device.type):
            return
        if name == "__setitem__" and not list(_tensors([args[1]])):
            return  # basic indexing converts the value
        report(func, source, "into a float32 buffer")

    table = {}
    T = torch.Tensor
    for name in _PRODUCERS:
        for owner in (T, torch, F):
            func = getattr(owner, name, None)
            if func is not None:
                table[func] = (None, produced)
    for name in _KEEP:
        for owner in (T, torch, F):
            func = getattr(owner, name, None)
            if func is not None and func not in table:
                table[func] = (None, kept)
    for name in _PAIRS:
        for owner in (T, torch, F):
            func = getattr(owner, name, None)
            if func is not None:
                pre, post = table.get(func, (None, None))
                table[func] = (pair, post)
    for name in _WRITES:
        for owner in (T, torch):
            func = getattr(owner, name, None)
            if func is not None:
                pre, post = table.get(func, (None, None))
                table[func] = (write, post)
    return table
