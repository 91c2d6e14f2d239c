"""CUDA autocast emulated on CPU: ``verify --device cuda-emulated`` (the default without a GPU).

Most CI has no GPU, and CPU autocast is not CUDA autocast: other op lists (CPU runs BCE in
float32 instead of raising, leaves ``exp``/``softmax``/``layer_norm`` to the input's dtype...),
bfloat16 by default, and a GradScaler("cuda") that switches itself off.  Inside
:class:`CudaEmulation` a program written for CUDA runs on CPU tensors under CUDA's rules:

- **the policy**: for every op of CUDA's autocast lists (:mod:`amplint.runtime.cuda_policy`) a
  Python kernel is registered on the ``AutocastCPU`` dispatch key -- the same place in the
  dispatcher as CUDA's own autocast, above autograd, so the casts are recorded for backward --
  that casts the inputs as CUDA's ``CastPolicy`` does; ``binary_cross_entropy`` raises CUDA's
  "unsafe to autocast" error; ops that only CPU autocast lists get a fallthrough (no cast).
  The kernels are removed again when the block ends.
- **the device**: ``torch.autocast("cuda")`` / ``torch.cuda.amp.autocast`` open CPU autocast
  (float16 by default, as on CUDA), ``torch.is_autocast_enabled("cuda")`` and
  ``get_autocast_dtype("cuda")`` answer for it; ``.cuda()``, ``.to("cuda")`` and ``device="cuda"``
  land on CPU; ``torch.cuda.is_available()`` / ``is_bf16_supported()`` say True.
- **the weight cache**: a float32 leaf that requires grad is cast once per outermost region and
  reused, as CUDA's ``cached_cast`` does (with grad enabled, as torch 2.13 does).
- **GradScaler("cuda")** (and ``torch.cuda.amp.GradScaler``) is a working CPU GradScaler with
  CUDA's semantics: scaling, inf checks, skipped steps, "Attempting to unscale FP16 gradients".

What CUDA raises because of dtypes then happens on CPU too, by the same kernels' checks: an index
write of a half value into a float32 buffer ("Index put requires the source and destination
dtypes match"), a fill value that overflows float16 ("value cannot be converted to type at::Half
without overflow").

What it cannot show: CUDA's kernels themselves -- the accumulation order and blocking of cuBLAS
and cuDNN (their float16 results differ from CPU's in the last bits), TF32 for float32 matmuls
and convolutions, fused/flash attention kernels, the autocast weight cache's memory effects, and
anything that depends on a real device (streams, memory, ``torch.cuda`` APIs beyond the few
above).  Numerics therefore come from CPU's float16/bfloat16 kernels; the verdict's noise bound
(:mod:`amplint.runtime.noise`) is what makes them comparable.
"""

from __future__ import annotations

import re
import threading
import warnings
import weakref
from typing import Dict, List, Optional

import torch
from torch.overrides import TorchFunctionMode

from . import cuda_policy

_EXCLUDE = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
_LOCK = threading.Lock()
_CPU_ONLY: Optional[List[str]] = None


def _overload(name: str):
    op, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, op), overload or "default")


def cpu_autocast_ops() -> List[str]:
    """Every aten op (``name.overload``) with a CPU autocast kernel in the installed torch."""
    global _CPU_ONLY
    if _CPU_ONLY is None:
        found = []
        for name in torch._C._dispatch_get_all_op_names():
            if not name.startswith("aten::"):
                continue
            table = torch._C._dispatch_dump_table(name)
            if re.search(r"^AutocastCPU: registered at .*autocast_mode\.cpp", table, re.M):
                found.append(name[len("aten::"):])
        _CPU_ONLY = found
    return _CPU_ONLY


def cuda_autocast_ops() -> List[str]:
    """Every aten op with a CUDA autocast kernel in the installed torch (the test's yardstick)."""
    found = []
    for name in torch._C._dispatch_get_all_op_names():
        if name.startswith("aten::") and re.search(
                r"^AutocastCUDA: registered at .*autocast_mode\.cpp",
                torch._C._dispatch_dump_table(name), re.M):
            found.append(name[len("aten::"):])
    return found


# -- the cast policies --------------------------------------------------------------------------
def _eligible(t) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


# the autocast weight cache (cached_cast in autocast_mode.cpp): a float32 leaf that requires grad
# is cast once per outermost region and reused; cleared with torch's cache.  As in torch 2.13
# ("Fix #158232") the cast is made with grad enabled even under no_grad, so a later forward with
# grad through a weight first cast under no_grad still reaches it (older torch lost that
# gradient: AMP150's hazard), and nothing is cached in inference mode.
_CACHE: Dict[int, tuple] = {}


def _cast(value, dtype):
    if _eligible(value) and value.dtype != dtype:
        if (dtype == torch.get_autocast_dtype("cpu") and value.dtype == torch.float32
                and value.requires_grad and value.is_leaf and not value._is_view()
                and torch.is_autocast_cache_enabled() and not torch.is_inference_mode_enabled()):
            hit = _CACHE.get(id(value))
            if hit is not None and hit[0]() is value:
                return hit[1]
            with torch.enable_grad():
                out = value.to(dtype)
            _CACHE[id(value)] = (weakref.ref(value), out)
            return out
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _tensors(values):
    for v in values:
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _first_tensor(args):
    return next(_tensors(args), None)


def _kernel(name: str, policy: str):
    op = _overload(name)
    if policy == "banned":
        def banned(*args, **kwargs):
            raise RuntimeError(cuda_policy.BCE_BANNED_MESSAGE)
        return banned
    if policy == "fp32_append_dtype":
        target = _overload(cuda_policy.APPEND_TARGET[name])

        def append(*args, **kwargs):
            with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
                first = _first_tensor(args)
                dtype = torch.float32 if _eligible(first) else first.dtype
                return target(*args, **kwargs, dtype=dtype)
        return append
    names = [a.name for a in op._schema.arguments]

    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            if policy == "lower_precision_fp":
                dtype = torch.get_autocast_dtype("cpu")
            elif policy == "fp32":
                dtype = torch.float32
            elif policy == "promote":
                dtype = torch.get_autocast_dtype("cpu")
                for t in _tensors(list(args) + list(kwargs.values())):
                    if _eligible(t) and t.dtype != dtype:
                        dtype = torch.float32
            else:  # fp32_set_opt_dtype
                if _eligible(_first_tensor(args)):
                    i = names.index("dtype")
                    if i < len(args):
                        if args[i] is None:
                            args = args[:i] + (torch.float32,) + args[i + 1:]
                    elif kwargs.get("dtype") is None:
                        kwargs = dict(kwargs, dtype=torch.float32)
                return op(*args, **kwargs)
            args = tuple(_cast(a, dtype) for a in args)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
            return op(*args, **kwargs)
    return kernel


def _register() -> "torch.library.Library":
    lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
        for name, (policy, _line) in cuda_policy.POLICY.items():
            lib.impl(name, _kernel(name, policy), "AutocastCPU")
        for name in cpu_autocast_ops():
            if name not in cuda_policy.POLICY:
                lib.impl(name, torch.library.fallthrough_kernel, "AutocastCPU")
    return lib


# -- the device ----------------------------------------------------------------------------------
def _is_cuda(value) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    return isinstance(value, str) and (value == "cuda" or value.startswith("cuda:"))


def _cpu(value):
    return "cpu" if _is_cuda(value) else value


class _CudaToCpu(TorchFunctionMode):
    """``.cuda()`` is the tensor itself; a cuda ``device`` argument is cpu."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.cuda:
            return args[0]
        if "device" in kwargs:
            kwargs = dict(kwargs, device=_cpu(kwargs["device"]))
        if func is torch.Tensor.to:
            args = tuple(_cpu(a) for a in args)
        return func(*args, **kwargs)


class CudaEmulation:
    """Run a block under CUDA's autocast rules on CPU (see the module doc).  Not reentrant;
    one block at a time per process (the kernels are process-wide)."""

    def __enter__(self):
        _LOCK.acquire()
        try:
            self._lib = _register()
            self._patches: Dict = {}
            self._patch_all()
            self._mode = _CudaToCpu()
            self._mode.__enter__()
        except BaseException:
            self._undo()
            _LOCK.release()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self._mode.__exit__(*exc)
        finally:
            self._undo()
            _LOCK.release()
        return False

    def _undo(self):
        _CACHE.clear()
        for (owner, attr), old in getattr(self, "_patches", {}).items():
            setattr(owner, attr, old)
        self._patches = {}
        lib = getattr(self, "_lib", None)
        if lib is not None:
            lib._destroy()
            self._lib = None

    def _patch(self, owner, attr, new):
        self._patches.setdefault((owner, attr), getattr(owner, attr))
        setattr(owner, attr, new)

    def _patch_all(self):
        autocast_cls = torch.amp.autocast_mode.autocast
        init = autocast_cls.__init__

        def autocast_init(self_, device_type, dtype=None, enabled=True, cache_enabled=None):
            if not (isinstance(device_type, str) and _is_cuda(device_type)):
                # a torch.device raises here as on CUDA ("Expected `device_type` of type `str`")
                return init(self_, device_type, dtype=dtype, enabled=enabled,
                            cache_enabled=cache_enabled)
            dtype = dtype or torch.float16
            # CUDA allows a float32 autocast (an fp32 island), CPU autocast refuses it: open it
            # as bfloat16, then give it float32 (the kernels cast to the region's dtype)
            init(self_, "cpu", dtype=torch.bfloat16 if dtype == torch.float32 else dtype,
                 enabled=enabled, cache_enabled=cache_enabled)
            self_.fast_dtype = dtype

        autocast_init.__qualname__ = "autocast.__init__"  # torch's own TypeError text
        self._patch(autocast_cls, "__init__", autocast_init)
        is_enabled, get_dtype = torch.is_autocast_enabled, torch.get_autocast_dtype
        self._patch(torch, "is_autocast_enabled",
                    lambda device_type="cuda": is_enabled(_cpu(device_type)))
        self._patch(torch, "get_autocast_dtype", lambda device_type: get_dtype(_cpu(device_type)))
        self._patch(torch, "get_autocast_gpu_dtype", lambda: get_dtype("cpu"))
        clear = torch.clear_autocast_cache

        def clear_cache():
            _CACHE.clear()
            clear()

        self._patch(torch, "clear_autocast_cache", clear_cache)
        scaler_cls = torch.amp.grad_scaler.GradScaler
        scaler_init = scaler_cls.__init__

        def scaler_init_cpu(self_, device="cuda", *args, **kwargs):
            scaler_init(self_, _cpu(device), *args, **kwargs)

        self._patch(scaler_cls, "__init__", scaler_init_cpu)
        for attr, value in (("is_available", lambda: True), ("is_bf16_supported", lambda *a, **k: True),
                            ("synchronize", lambda *a, **k: None), ("device_count", lambda: 1),
                            ("current_device", lambda: 0)):
            self._patch(torch.cuda, attr, value)
