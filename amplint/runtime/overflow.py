"""The overflow locator: the first op whose fp16/bf16 output holds inf/NaN while its inputs were
finite -- where an AMP run that "goes to NaN" starts.

A ``TorchDispatchMode`` sees every aten op after autocast has cast its inputs.  Outputs are
checked for non-finite values only when they are float16/bfloat16; the inputs (and float
scalars: ``masked_fill(m, float("-inf"))`` is fine) are checked only on a hit, or before the call
for in-place ops.  Backward ops are skipped by default (with a GradScaler, inf gradients in the
first steps are expected and handled); ``backward=True`` checks them as well.  Only the first hit
is reported: every later NaN descends from it.
"""

from __future__ import annotations

import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

CODE = "OVERFLOW"

_HALF = (torch.float16, torch.bfloat16)
_SKIP = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_",
    "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_", "_local_scalar_dense",
    "detach", "alias", "lift_fresh", "resize_", "isfinite", "isinf", "isnan",
}


def _finite(leaves) -> bool:
    for x in leaves:
        if isinstance(x, torch.Tensor):
            if (x.is_floating_point() or x.is_complex()) and x.numel() and not bool(torch.isfinite(x).all()):
                return False
        elif isinstance(x, float) and not math.isfinite(x):
            return False
    return True


def _bad_output(out):
    for x in tree_leaves(out):
        if isinstance(x, torch.Tensor) and x.dtype in _HALF and x.numel():
            if not bool(torch.isfinite(x).all()):
                return x
    return None


class OverflowMode(TorchDispatchMode):
    def __init__(self, monitor, backward: bool = False):
        super().__init__()
        self.monitor = monitor
        self.backward = backward
        self.done = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.done or func.overloadpacket.__name__ in _SKIP:
            return func(*args, **kwargs)
        inputs_finite = None
        if func._schema.is_mutable:  # in-place: its output is its input, so look before
            leaves = tree_leaves((args, kwargs))
            if any(isinstance(x, torch.Tensor) and x.dtype in _HALF for x in leaves):
                inputs_finite = _finite(leaves)
        out = func(*args, **kwargs)
        bad = _bad_output(out)
        if bad is None:
            return out
        if not self.backward and torch._C._current_autograd_node() is not None:
            return out
        if inputs_finite is None:
            inputs_finite = _finite(tree_leaves((args, kwargs)))
        if not inputs_finite:
            return out
        self.done = True
        module = self.monitor.tracker.innermost()
        where = f" in {type(module).__name__}" if module is not None else ""
        n_inf = int(torch.isinf(bad).sum())
        n_nan = int(torch.isnan(bad).sum())
        op = str(func.overloadpacket)
        self.monitor.report(
            CODE,
            f"first non-finite {str(bad.dtype).replace('torch.', '')} output: {op}{where} produced "
            f"{n_inf} inf / {n_nan} NaN values from finite inputs (float16 overflows past ±65504): "
            "run this op in fp32 or rescale its inputs",
            op=op,
            module=type(module).__name__ if module is not None else None,
            dtype=str(bad.dtype).replace("torch.", ""),
            shape=tuple(bad.shape),
            inf=n_inf,
            nan=n_nan,
        )
        return out
