"""AMP103 half-with-autocast: a module holding fp16/bf16 parameters runs inside an autocast region.

With a GradScaler this ends in "ValueError: Attempting to unscale FP16 gradients." (that error,
when it leaves a monitored block, is reported as AMP103 too); without one, half weights train with
no fp32 master copy.  Pure half inference without autocast stays silent."""

from __future__ import annotations

CODE = "AMP103"


def _half_param(params, half):
    for p in params:
        if p is not None and p.dtype in half:  # a module may hold None (bias_k=None)
            return p
    return None


def install(monitor):
    from . import HALF_DTYPES, autocast_dtype, autocast_on, dtype_name

    def on_module(module, outermost):
        if monitor.tracker.amp103_done or not (autocast_on("cuda") or autocast_on("cpu")):
            return
        if outermost:
            param = _half_param(module.parameters(), HALF_DTYPES)
        else:
            param = _half_param(module._parameters.values(), HALF_DTYPES)
        if param is None or not autocast_on(param.device.type):
            return
        monitor.tracker.amp103_done = True
        device = param.device.type
        monitor.report(
            CODE,
            f"{type(module).__name__} holds {dtype_name(param.dtype)} parameters and runs inside "
            f"{device} autocast: drop the .half()/.to(half) cast and let autocast choose dtypes "
            "(with a GradScaler, unscale_ raises 'Attempting to unscale FP16 gradients.'; without "
            "one, half weights train with no fp32 master copy)",
            module=type(module).__name__,
            param_dtype=dtype_name(param.dtype),
            autocast_dtype=dtype_name(autocast_dtype(device)),
        )

    monitor.tracker.callbacks.append(on_module)
    return {}
