"""AMP102 bce-under-autocast: ``F.binary_cross_entropy`` / ``nn.BCELoss`` inside autocast.

Under CUDA autocast torch raises "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss
are unsafe to autocast."; under CPU autocast it runs in fp32 without a word. As the linter does,
the monitor reports it on CPU only when CPU stands in for CUDA (``stand_in_for_cuda``, which the
verifier sets on a machine without a GPU); then the finding says that CUDA would raise."""

from __future__ import annotations

import torch
import torch.nn.functional as F

CODE = "AMP102"

_FIX = "use F.binary_cross_entropy_with_logits / nn.BCEWithLogitsLoss on the logits, or an fp32 island"


def install(monitor):
    from . import autocast_dtype, autocast_on, dtype_name

    def pre(func, args, kwargs):
        inp = args[0] if args else kwargs.get("input")
        device = inp.device.type if isinstance(inp, torch.Tensor) else "cuda"
        if not autocast_on(device):
            return
        if device != "cuda" and not monitor.stand_in_for_cuda:
            return  # runs in fp32 under CPU autocast: not a hazard (the linter agrees)
        if device == "cuda":
            what = "raises 'torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.'"
        else:
            what = (f"runs in fp32 under {device} autocast here but raises under CUDA autocast "
                    "('... are unsafe to autocast.')")
        monitor.report(
            CODE,
            f"binary_cross_entropy / BCELoss under autocast {what}: {_FIX}",
            op="binary_cross_entropy",
            device=device,
            autocast_dtype=dtype_name(autocast_dtype(device)),
        )

    table = {F.binary_cross_entropy: (pre, None)}
    native = getattr(torch._C._nn, "binary_cross_entropy", None)
    if native is not None:
        table[native] = (pre, None)
    return table
