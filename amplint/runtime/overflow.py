"""The overflow locator: the first op whose fp16/bf16 output holds inf/NaN while its inputs were
finite -- where an AMP run that "goes to NaN" starts.

A ``TorchDispatchMode`` sees every aten op after autocast has cast its inputs.  For every op with
a float16/bfloat16 output it records, without reading anything back to the host, two device
scalars: how many of the output's values are non-finite, and whether its floating inputs (and
float scalars: ``masked_fill(m, float("-inf"))`` is fine) were all finite -- looked at before the
call for in-place ops, whose output is their input.  The records are read back in one batch (one
host sync per device) when the monitor's block ends, or every :data:`BATCH` records in a long
block, so a GPU is not stalled once per op (``mode="raise"`` reads each op's record at once, to
raise at the op).  Backward ops are skipped by default (with a
GradScaler, inf gradients in the first steps are expected and handled); ``backward=True`` checks
them as well.  Only the first hit is reported: every later NaN descends from it.
"""

from __future__ import annotations

import math
import sys
from typing import List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .locate import user_location

CODE = "OVERFLOW"
BATCH = 1024  # records read back per host sync in a long monitored block

_HALF = (torch.float16, torch.bfloat16)
_SKIP = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_",
    "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_", "_local_scalar_dense",
    "detach", "alias", "lift_fresh", "resize_", "isfinite", "isinf", "isnan",
}


def _inputs_finite(leaves):
    """A device bool scalar (or a Python bool): every floating input tensor/scalar is finite."""
    flags = []
    for x in leaves:
        if isinstance(x, torch.Tensor):
            if (x.is_floating_point() or x.is_complex()) and x.numel():
                flags.append(torch.isfinite(x).all())
        elif isinstance(x, float) and not math.isfinite(x):
            return False
    if not flags:
        return True
    flag = flags[0]
    for other in flags[1:]:
        flag = flag & other.to(flag.device)
    return flag


def _half_outputs(out) -> List[torch.Tensor]:
    return [x for x in tree_leaves(out)
            if isinstance(x, torch.Tensor) and x.dtype in _HALF and x.numel()]


# What overflowing means for each low-precision dtype, quoted in the finding (finfo's max).
_RANGE_NOTE = {
    "float16": "float16 overflows past ±65504",
    "bfloat16": "bfloat16 overflows past ±3.39e38, float32's range: the input itself was huge, "
                "or an op produced inf/NaN for another reason (0/0, log of 0, inf - inf)",
}


class _Record:
    __slots__ = ("bad", "where", "op", "module", "dtype", "shape")

    def __init__(self, bad, where, op, module, dtype, shape):
        self.bad = bad  # device int64 scalar: non-finite output values, 0 when the inputs were not finite
        self.where: Tuple[str, int] = where
        self.op, self.module, self.dtype, self.shape = op, module, dtype, shape


class OverflowMode(TorchDispatchMode):
    def __init__(self, monitor, backward: bool = False):
        super().__init__()
        self.monitor = monitor
        self.backward = backward
        self.done = False
        self.pending: List[_Record] = []
        self.syncs = 0  # host reads of the records, for tests and the benchmark

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.done or func.overloadpacket.__name__ in _SKIP:
            return func(*args, **kwargs)
        if not self.backward and torch._C._current_autograd_node() is not None:
            return func(*args, **kwargs)
        inputs_finite = None
        if func._schema.is_mutable:  # in-place: its output is its input, so look before
            leaves = tree_leaves((args, kwargs))
            if any(isinstance(x, torch.Tensor) and x.dtype in _HALF for x in leaves):
                inputs_finite = _inputs_finite(leaves)
        out = func(*args, **kwargs)
        halves = _half_outputs(out)
        if not halves:
            return out
        if inputs_finite is None:
            inputs_finite = _inputs_finite(tree_leaves((args, kwargs)))
        if inputs_finite is False:
            return out
        first = halves[0]
        nonfinite = (~torch.isfinite(first)).sum()
        for other in halves[1:]:
            nonfinite = nonfinite + (~torch.isfinite(other)).sum().to(nonfinite.device)
        if inputs_finite is not True:
            nonfinite = nonfinite * inputs_finite.to(nonfinite.device)
        module = self.monitor.tracker.innermost()
        self.pending.append(_Record(
            nonfinite, user_location(sys._getframe(1)), str(func.overloadpacket),
            type(module).__name__ if module is not None else None,
            str(first.dtype).replace("torch.", ""), tuple(first.shape)))
        if len(self.pending) >= BATCH or self.monitor.mode == "raise":
            self.flush()  # raise mode stops at the op itself: one sync per op
        return out

    def __exit__(self, *exc):
        result = super().__exit__(*exc)
        self.flush()
        return result

    def flush(self) -> Optional[_Record]:
        """Read the pending records back (one sync per device) and report the first hit."""
        pending, self.pending = self.pending, []
        if not pending or self.done:
            return None
        with torch.utils._python_dispatch._disable_current_modes():
            by_device = {}
            for i, rec in enumerate(pending):
                by_device.setdefault(rec.bad.device, []).append(i)
            hits = []
            for device, indices in by_device.items():
                counts = torch.stack([pending[i].bad for i in indices]).tolist()
                self.syncs += 1
                hits.extend((i, n) for i, n in zip(indices, counts) if n)
        if not hits:
            return None
        index, count = min(hits)
        rec = pending[index]
        self.done = True
        where = f" in {rec.module}" if rec.module is not None else ""
        self.monitor.report(
            CODE,
            f"first non-finite {rec.dtype} output: {rec.op}{where} produced {count} inf/NaN "
            f"values from finite inputs ({_RANGE_NOTE.get(rec.dtype, rec.dtype)}): run this op "
            "in fp32 or rescale its inputs",
            location=rec.where, op=rec.op, module=rec.module, dtype=rec.dtype,
            shape=rec.shape, nonfinite=count, stack=[f"{rec.where[0]}:{rec.where[1]}"])
        return rec
