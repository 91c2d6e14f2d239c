"""The float32 reference of code that hard-codes its autocast: ``with fp32_reference(on):``.

The runnable-fixture contract runs every program once without mixed precision (``dtype=None``).
Code written for CUDA opens ``torch.autocast("cuda", dtype=torch.float16)`` and calls
``.half()`` itself, with no switch.  Inside this block (when ``on``) every autocast region opens
disabled and ``.half()`` / ``.bfloat16()`` / ``.to(float16 or bfloat16)`` keep float32 -- the
same program with no half anywhere, on real CUDA and under the emulation alike.
"""

from __future__ import annotations

import contextlib

import torch
from torch.overrides import TorchFunctionMode

_HALF = (torch.float16, torch.bfloat16)


class _NoHalf(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.Tensor.half, torch.Tensor.bfloat16):
            return args[0].float() if args[0].is_floating_point() else args[0]
        if func is torch.Tensor.to:
            args = tuple(torch.float32 if a in _HALF else a for a in args)
            if kwargs.get("dtype") in _HALF:
                kwargs = dict(kwargs, dtype=torch.float32)
        return func(*args, **kwargs)


@contextlib.contextmanager
def fp32_reference(on: bool = True):
    if not on:
        yield
        return
    cls = torch.amp.autocast_mode.autocast
    init = cls.__init__

    def disabled(self, *args, **kwargs):
        init(self, *args, **dict(kwargs, enabled=False))

    scaler_cls = torch.amp.grad_scaler.GradScaler
    scaler_init = scaler_cls.__init__

    def scaler_disabled(self, *args, **kwargs):
        scaler_init(self, *args, **dict(kwargs, enabled=False))

    cls.__init__, scaler_cls.__init__ = disabled, scaler_disabled
    try:
        with _NoHalf():
            yield
    finally:
        cls.__init__, scaler_cls.__init__ = init, scaler_init
