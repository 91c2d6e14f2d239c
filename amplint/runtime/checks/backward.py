"""AMP104 backward-in-autocast: ``Tensor.backward``, ``torch.autograd.backward/grad`` while
autocast is enabled (the docs forbid it; custom Functions' backward then runs under autocast)."""

from __future__ import annotations

import torch

CODE = "AMP104"


def _first_tensor(obj):
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for item in obj:
            if isinstance(item, torch.Tensor):
                return item
    return None


def install(monitor):
    from . import autocast_dtype, autocast_on, dtype_name

    def pre(func, args, kwargs):
        first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
        tensor = _first_tensor(first)
        device = tensor.device.type if tensor is not None else "cuda"
        if not autocast_on(device):
            return
        api = "Tensor.backward" if func is torch.Tensor.backward else f"torch.autograd.{func.__name__}"
        monitor.report(
            CODE,
            f"{api}() runs while {device} autocast is enabled: run backward after the autocast "
            "`with` block (backward ops of custom Functions would run under autocast)",
            api=api,
            device=device,
            autocast_dtype=dtype_name(autocast_dtype(device)),
        )

    return {
        torch.Tensor.backward: (pre, None),
        torch.autograd.backward: (pre, None),
        torch.autograd.grad: (pre, None),
    }
