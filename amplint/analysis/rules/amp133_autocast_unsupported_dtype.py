"""AMP133 autocast-unsupported-dtype."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.autocast_calls import AUTOCAST_APIS
from amplint.analysis.facts.syntax import bound_arguments, literal_bool, literal_str
from amplint.analysis.facts.tree import Frame
from amplint.analysis.rules import Flag, Rule

SUPPORTED = ("float16", "bfloat16")
# torch dtype attribute -> canonical name
FLOATING = {
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
}
NOT_FLOATING = {
    "int8", "int16", "short", "int32", "int", "int64", "long", "uint8", "uint16", "uint32",
    "uint64", "bool", "complex32", "chalf", "complex64", "cfloat", "complex128", "cdouble",
    "qint8", "quint8", "qint32", "quint4x2",
}


def _dtype_name(expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
    """`torch.float32` -> "float32", `torch.float8_e4m3fn` -> "float8_e4m3fn", through import
    aliases; None for anything that is not a literal torch dtype."""
    qualified = resolve_expr(expr, frame)
    if qualified is None or not qualified.startswith("torch.") or qualified.count(".") != 1:
        return None
    attr = qualified.split(".", 1)[1]
    if attr in FLOATING:
        return FLOATING[attr]
    if attr in NOT_FLOATING or attr.startswith(("float8", "float4")):
        return attr
    return None


class AutocastUnsupportedDtype(Rule):
    """## What it does
    Finds autocast regions whose `dtype=` is a literal torch dtype autocast cannot run in:
    anything but `torch.float16`/`torch.bfloat16` on a device other than CUDA
    (`torch.autocast("cpu", dtype=torch.float32)`, `torch.cpu.amp.autocast(dtype=torch.float64)`,
    `"mps"`, `"xpu"`), and on any device a dtype that is not floating point
    (`torch.int8`, `torch.float8_e4m3fn`, complex). `with` items, decorators, names bound to
    autocast and `functools.partial(torch.autocast, ...)` are all checked.

    ## Why is this bad?
    On every device but CUDA, torch 2.13 checks the dtype when the region is built, warns and
    turns autocast off:
    `UserWarning: In CPU autocast, but the target dtype is not supported. Disabling autocast.
    CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.`
    The region then runs with autocast disabled: no mixed precision, and, unlike CUDA float32
    autocast, nothing is cast up either. Nested in a bfloat16 region as an "fp32 island", the
    bfloat16 activations meet fp32 weights and the first matmul raises
    `RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Float`;
    elsewhere the block silently runs without autocast and the warning repeats every step.
    CUDA has no such check: the dtype is handed to the autocast dispatcher, which casts the ops
    on its lower-precision list to it; integer, complex and float8 dtypes are not types those
    kernels compute in (fp8 matmuls need `torch._scaled_mm` / Transformer Engine, not autocast).
    A region with `enabled=False` is never checked by torch and is not reported;
    `enabled=<expression>` is reported, since the enabled run is affected.

    Not reported: `torch.autocast("cuda", dtype=torch.float32)`, which on CUDA casts every
    autocast op to float32 (projects use it as an fp32 island inside a float16 region), and a
    `dtype=` that is an expression or a variable (`dtype=dtype or torch.float32`).

    ## Example
    ```python
    with torch.autocast("cpu", dtype=torch.float32):
        coords = structure_module(single, pair)
    ```

    ## Use instead
    ```python
    # an fp32 island: switch autocast off (cast half inputs with .float() if any)
    with torch.autocast("cpu", enabled=False):
        coords = structure_module(single.float(), pair.float())
    # or mixed precision on CPU: use a dtype CPU autocast supports
    with torch.autocast("cpu", dtype=torch.bfloat16):
        coords = structure_module(single, pair)
    ```

    ## Fix safety
    No automatic fix, only the suggestion: whether the block was meant as an fp32 island
    (`enabled=False`) or as mixed precision (`dtype=torch.bfloat16`) is the author's call, and
    the two give different numbers.
    """

    code = "AMP133"
    name = "autocast-unsupported-dtype"
    severity = Severity.WARNING
    fix_safety = "suggestion"
    triggers = ("autocast",)

    flag = [
        Flag(  # CPU autocast with float32: warns and disables
            "import torch\n"
            "def predict(model, x):\n"
            "    with torch.autocast(device_type='cpu', dtype=torch.float32):\n"
            "        return model(x)\n",
        ),
        Flag(  # the deprecated CPU spelling, positional dtype after enabled
            "import torch\n"
            "with torch.cpu.amp.autocast(True, torch.float64):\n"
            "    y = model(x)\n",
        ),
        Flag(  # fp8 is not an autocast dtype, on any device
            "import torch\n"
            "from torch.amp import autocast\n"
            "@autocast('cuda', dtype=torch.float8_e4m3fn)\n"
            "def forward(x, w):\n"
            "    return x @ w\n",
        ),
        Flag(  # a partial bound to self, maybe enabled
            "import functools\n"
            "import torch\n"
            "class Runner:\n"
            "    def __init__(self, use_amp):\n"
            "        self.autocast = functools.partial(torch.autocast, 'mps', dtype=torch.float32,\n"
            "                                          enabled=use_amp)\n",
        ),
        Flag(  # an alias of torch, a name bound to the region
            "import torch as th\n"
            "ctx = th.autocast('cpu', dtype=th.double)\n"
            "with ctx:\n"
            "    y = net(x)\n",
        ),
    ]
    clean = [
        # the documented recipes
        "import torch\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    out = model(x)\n"
        "with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "    out = model(x)\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n",
        # CUDA float32 autocast: an fp32 island inside a float16 region (openfold, ComfyUI)
        "import torch\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    s = trunk(x)\n"
        "    with torch.no_grad(), torch.amp.autocast(device_type='cuda', dtype=torch.float32):\n"
        "        coords = structure_module(s)\n",
        # enabled=False is never checked by torch
        "import torch\n"
        "with torch.autocast('cpu', dtype=torch.float32, enabled=False):\n"
        "    y = model(x)\n",
        # dtype chosen at run time, as the fixtures' runnable contract writes it
        "import torch\n"
        "def amplint_run(device, dtype):\n"
        "    with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):\n"
        "        return model(x)\n",
        # a device variable with float32: CUDA runs it as an fp32 island
        "import torch\n"
        "def vocoder(self, mel):\n"
        "    with torch.autocast(device_type=mel.device.type, dtype=torch.float32):\n"
        "        return self.net(mel.float())\n",
        # a local `torch` is not torch
        "def f(torch, x):\n"
        "    with torch.autocast('cpu', dtype=torch.float32):\n"
        "        return x\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        for qualified, site in facts.qualified_calls:
            call = site.node
            if qualified in AUTOCAST_APIS:
                args = bound_arguments(call, AUTOCAST_APIS[qualified][2])
            elif qualified == "functools.partial" and call.args:
                inner = resolve_expr(call.args[0].value, site.frame)
                if inner not in AUTOCAST_APIS:
                    continue
                qualified = inner
                rest = cst.Call(func=call.args[0].value, args=tuple(call.args[1:]))
                args = bound_arguments(rest, AUTOCAST_APIS[qualified][2])
            else:
                continue
            found = self._problem(qualified, args, site.frame, facts)
            if found is None:
                continue
            dtype, device = found
            message = self._message(dtype, device, args)
            if "dtype" in args and _dtype_name(args["dtype"], site.frame) is None:
                message += (f" (`{ctx.module.code_for_node(args['dtype'])}` holds `torch.{dtype}` on every path the "
                            "project's calls show)")
            yield self.report(call, message)

    @staticmethod
    def _problem(
        qualified: str, args: dict, frame: Frame, facts=None
    ) -> Optional[Tuple[str, Optional[str]]]:
        """(dtype, device) when this autocast call asks for a dtype autocast cannot run: a
        literal, or a float dtype the expression holds on every path of the project's solve
        (facts/bound_values.py: `self.amp_dtype` set from a helper returning `torch.float32`)."""
        if "dtype" not in args or literal_bool(args.get("enabled")) is False:
            return None
        dtype = _dtype_name(args["dtype"], frame)
        if dtype is None and facts is not None:
            bound = facts.bound_values.one_dtype(args["dtype"])
            dtype = bound if bound in ("float32", "float64") else None
        if dtype is None or dtype in SUPPORTED:
            return None
        device = AUTOCAST_APIS[qualified][0] or literal_str(args.get("device_type"))
        if device is not None:
            device = device.split(":")[0]
        if dtype in ("float32", "float64") and device in (None, "cuda"):
            return None  # CUDA casts to it (an fp32 island); unknown device: maybe CUDA
        return dtype, device

    @staticmethod
    def _message(dtype: str, device: Optional[str], args: dict) -> str:
        enabled = args.get("enabled")
        maybe = " (when enabled)" if enabled is not None and literal_bool(enabled) is None else ""
        if device not in (None, "cuda"):
            name = device.upper()
            return (
                f"autocast on '{device}' does not support `torch.{dtype}`{maybe}: torch warns "
                f"'In {name} autocast, but the target dtype is not supported. Disabling "
                "autocast.' and the region runs with autocast off; for an fp32 island write "
                "`enabled=False`, for mixed precision use `dtype=torch.bfloat16` (or float16)"
            )
        return (
            f"autocast cannot run ops in `torch.{dtype}`{maybe}; autocast "
            "supports `torch.float16` and `torch.bfloat16` (float32 on CUDA only)"
        )
