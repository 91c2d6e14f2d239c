"""Runtime fixes for code you cannot edit -- mmcv's fp16 utilities done right for ``torch.amp``.

- :func:`cast_inputs` casts nested inputs *by source dtype*: only tensors whose dtype is ``src``
  change; lists, tuples, namedtuples and dicts keep their type; integer tensors (labels, indices)
  and non-tensors are untouched (mmcv's ``cast_tensor_type`` casts every tensor).
- :func:`keep_norm_fp32` keeps normalization layers in fp32 inside a half model (their running
  statistics overflow in fp16); :func:`half_model` is ``model.half()`` plus that.
- :func:`bce_fp32_island` (a context manager) and :func:`patch_bce_fp32` (on a model) run
  ``F.binary_cross_entropy`` / ``nn.BCELoss`` in an fp32 island under autocast, where CUDA autocast
  would raise "... are unsafe to autocast.".

Each of them is checked by the verifier in tests/runtime/test_fixes.py.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Iterable, List, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from .checks import HALF_DTYPES, autocast_on

DTypes = Union[torch.dtype, Iterable[torch.dtype]]


def _dtype_set(dtypes: DTypes) -> Tuple[torch.dtype, ...]:
    return (dtypes,) if isinstance(dtypes, torch.dtype) else tuple(dtypes)


def cast_inputs(obj, src: DTypes = torch.float32, dst: torch.dtype = torch.float16):
    """Return ``obj`` with every tensor of dtype ``src`` (one dtype or several) cast to ``dst``.

    Containers keep their type (list, tuple, namedtuple, dict, OrderedDict, defaultdict, set);
    tensors of other dtypes and all non-tensors are returned as they are.
    """
    srcs = _dtype_set(src)

    def cast(x):
        if isinstance(x, torch.Tensor):
            return x.to(dst) if x.dtype in srcs else x
        if isinstance(x, (str, bytes)):
            return x
        if isinstance(x, Mapping):
            try:
                out = copy.copy(x)
                for key in x:
                    out[key] = cast(x[key])
                return out
            except TypeError:  # read-only mapping
                return {key: cast(value) for key, value in x.items()}
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
            return type(x)(*(cast(v) for v in x))
        if isinstance(x, (list, tuple, set, frozenset)):
            return type(x)(cast(v) for v in x)
        return x

    return cast(obj)


NORM_TYPES: Tuple[type, ...] = tuple(
    t for t in (
        nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm,
        nn.modules.instancenorm._InstanceNorm, getattr(nn, "RMSNorm", None),
    ) if t is not None
)


class _Handles:
    """Removable handles for hooks a fix registered; ``remove()`` undoes the hooks."""

    def __init__(self, handles):
        self.handles = list(handles)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def __len__(self) -> int:
        return len(self.handles)


def _norm_pre(module, args, kwargs):
    dtypes = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype in HALF_DTYPES]
    module._amplint_io_dtype.append(dtypes[0] if dtypes else None)
    if not dtypes:
        return None
    return (cast_inputs(args, HALF_DTYPES, torch.float32),
            cast_inputs(kwargs, HALF_DTYPES, torch.float32))


def _norm_post(module, args, kwargs, output):
    dtype = module._amplint_io_dtype.pop() if module._amplint_io_dtype else None
    if dtype is None:
        return None
    return cast_inputs(output, torch.float32, dtype)


def keep_norm_fp32(model: nn.Module, types: Tuple[type, ...] = NORM_TYPES) -> _Handles:
    """Keep ``model``'s normalization layers (BatchNorm, GroupNorm, LayerNorm, InstanceNorm,
    RMSNorm) in fp32: their parameters and buffers become float32, half inputs are cast to fp32
    on the way in and outputs back to the input's dtype on the way out (forward hooks).

    Call it after ``model.half()`` (a later ``.half()`` would undo it).  Returns handles whose
    ``remove()`` drops the hooks (the layers stay fp32).
    """
    handles = []
    for module in model.modules():
        if isinstance(module, types) and not hasattr(module, "_amplint_io_dtype"):
            module.float()
            module._amplint_io_dtype = []
            handles.append(module.register_forward_pre_hook(_norm_pre, with_kwargs=True))
            handles.append(module.register_forward_hook(_norm_post, with_kwargs=True, always_call=True))
    return _Handles(handles)


def half_model(model: nn.Module, dtype: torch.dtype = torch.float16) -> nn.Module:
    """``model.to(dtype)`` with its normalization layers kept in fp32 (mmcv's
    ``wrap_fp16_model``); for pure half training/inference *without* autocast."""
    model.to(dtype)
    keep_norm_fp32(model)
    return model


_BCE = tuple(f for f in (F.binary_cross_entropy, getattr(torch._C._nn, "binary_cross_entropy", None))
             if f is not None)


class bce_fp32_island(TorchFunctionMode):
    """Inside this context, ``F.binary_cross_entropy`` / ``nn.BCELoss`` run with autocast
    disabled and fp32 inputs (the fp32 island that CUDA autocast demands); everything else runs
    unchanged::

        with torch.autocast("cuda"), bce_fp32_island():
            loss = third_party_model.loss(pred, target)
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _BCE:
            inp = args[0] if args else kwargs.get("input")
            device = inp.device.type if isinstance(inp, torch.Tensor) else "cuda"
            if autocast_on(device):
                with torch.autocast(device, enabled=False):
                    return func(*cast_inputs(args, HALF_DTYPES, torch.float32),
                                **cast_inputs(kwargs, HALF_DTYPES, torch.float32))
        return func(*args, **kwargs)


def patch_bce_fp32(model: nn.Module) -> _Handles:
    """Run ``model``'s BCE losses in an fp32 island under autocast: while ``model`` (and each of
    its ``nn.BCELoss`` submodules) runs forward, a :class:`bce_fp32_island` is active (forward
    hooks; no source is edited).  BCE called from a non-forward method of the model is covered
    by its BCELoss submodules; a functional call there needs ``with bce_fp32_island():``.
    Returns handles whose ``remove()`` undoes the patch.
    """
    handles = []
    targets: List[nn.Module] = [model] + [m for m in model.modules() if isinstance(m, nn.BCELoss)]
    for module in dict.fromkeys(targets):
        islands: List[bce_fp32_island] = []

        def pre(mod, args, _islands=islands):
            island = bce_fp32_island()
            island.__enter__()
            _islands.append(island)

        def post(mod, args, output, _islands=islands):
            if _islands:
                _islands.pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post, always_call=True))
    return _Handles(handles)
