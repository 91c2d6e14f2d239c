"""AMP151 custom-function-without-custom-fwd."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.custom_functions import EntryFunction, function_classes, python_source_near
from amplint.analysis.facts.kernel_sources import half_kernels_near
from amplint.analysis.facts.float32_arguments import ALWAYS, float32_arguments
from amplint.analysis.facts.names import bound_locally, resolve
from amplint.analysis.facts.syntax import holder_key
from amplint.analysis.facts.tree import Frame
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import region_note


@dataclass(frozen=True)
class _Info:
    has_fwd: bool
    has_bwd: bool
    reason: str
    extension_only: bool
    where: str = ""  # "ops/functions.py:6" for a Function of another file


class CustomFunctionWithoutCustomFwd(Rule):
    """## What it does
    Finds `MyFunction.apply(...)` (also through `fn = MyFunction.apply`) inside an autocast
    region, where `MyFunction` is a `torch.autograd.Function` whose `forward` is not decorated with `@torch.amp.custom_fwd` (or the deprecated `torch.cuda.amp.custom_fwd`), or
    whose `backward` lacks `@torch.amp.custom_bwd`, and whose `forward`/`backward` do something
    dtype-sensitive: an op autocast casts (`mm`, `matmul`, `@`, `linear`, `conv*`, `einsum`, ...)
    or a call into a compiled extension (`_C`, `*_ext`, `*_cuda`, a loader's result, `torch.ops`, or
    any module bound by a plain `import M as N` whose `*forward*` forward calls and whose
    `*backward*` backward calls: `MSDA.ms_deform_attn_forward` / `MSDA.ms_deform_attn_backward`).
    `forward` and `backward` may be module-level functions of the file bound in the class body
    (`forward = staticmethod(_gate_proj_forward)`, safari's fused ops); their decorators count.

    The Function may be defined in another file of the project: imported by name and
    `.apply`'d here (Deformable-DETR's `MSDeformAttnFunction` in models/ops/functions, applied in
    models/ops/modules), or exported as `deform_conv2d = DeformConv2dFunction.apply` and called
    here (mmcv's ops). The region may be this file's or one the project pass puts around the
    calling function (the model's `forward` called under `autocast` in the training loop). The
    message then says where the Function is defined.

    ## Why is this bad?
    `forward` runs under the caller's autocast, but `backward` runs later, outside it: the saved
    tensors and the incoming gradient then have different dtypes, and the backward matmul
    raises `RuntimeError: expected m1 and m2 to have the same dtype, but got: c10::BFloat16 !=
    float` (on CUDA: `expected mat1 and mat2 to have the same dtype, but got: c10::Half !=
    float`). An extension compiled for float32 gets half inputs. The AMP docs ("Autocast and
    Custom Autograd Functions") ask for `custom_fwd`/`custom_bwd` on any Function that takes
    several floating inputs, wraps an autocastable op, or needs a particular dtype.
    Functions that only do elementwise work (a gradient-reversal layer, a straight-through
    estimator), and Functions that cast tensors themselves (`.float()`, `.to(grad.dtype)`,
    `.type_as(...)`), are not reported.

    Nor is an `.apply` whose caller casts the tensors it passes to float32 first, the manual
    `cast_inputs=torch.float32` (detectron2's `ROIAlignRotated.forward`): `x = x.float()` or
    `x.to(torch.float32)` inline, on every path to the call, for every argument that may be a
    floating tensor (literals and `self.attr` set from constructor parameters are not), when
    the Function only calls a compiled extension (an op autocast casts would be cast back to
    half inside `forward`). A cast under `if x.dtype == torch.float16:` leaves bfloat16 inputs
    uncast: it is accepted only where the region's dtype is float16 (`torch.autocast("cuda")`,
    detectron2's AMPTrainer), and still reported under a bfloat16 or unknown dtype; a guard
    `!= torch.float32` or `in (torch.float16, torch.bfloat16)` covers both.

    ## Example
    ```python
    class MyMM(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), a.t().mm(grad)

    with torch.autocast("cuda"):
        out = MyMM.apply(x, w)
    ```

    ## Use instead
    ```python
    class MyMM(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda")
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @torch.amp.custom_bwd(device_type="cuda")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), a.t().mm(grad)
    ```
    For a kernel that only supports float32, use
    `@torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)` instead.

    ## Fix safety
    A **suggestion**, no edit: whether the Function wants the caller's autocast state
    (`custom_fwd`) or float32 inputs (`cast_inputs=torch.float32`) depends on what it wraps.
    """

    code = "AMP151"
    name = "custom-function-without-custom-fwd"
    severity = Severity.WARNING
    fix_safety = "suggestion"
    triggers = ("autocast", "optim_context", "auto_fp16")

    flag = [
        Flag(  # the AMP docs' MyMM without the decorators
            "import torch\n"
            "class MyMM(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, a, b):\n"
            "        ctx.save_for_backward(a, b)\n"
            "        return a.mm(b)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        a, b = ctx.saved_tensors\n"
            "        return grad.mm(b.t()), a.t().mm(grad)\n"
            "mymm = MyMM.apply\n"
            "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "    output = mymm(input1, input2)\n",
        ),
        Flag(  # a CUDA extension behind a module whose forward runs under autocast
            "import torch\n"
            "from torch import nn\n"
            "from torch.autograd import Function\n"
            "from . import _C\n"
            "class _DeformConv(Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, offset, weight):\n"
            "        ctx.save_for_backward(x, offset, weight)\n"
            "        return _C.deform_conv_forward(x, offset, weight)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        return _C.deform_conv_backward(grad, *ctx.saved_tensors)\n"
            "class DeformConv(nn.Module):\n"
            "    def forward(self, x, offset):\n"
            "        return _DeformConv.apply(x, offset, self.weight)\n"
            "layer = DeformConv()\n"
            "with torch.amp.autocast('cuda'):\n"
            "    y = layer(x, offset)\n",
        ),
        Flag(  # a kernel module of any name: its *forward* in forward, its *backward* in backward
            "import torch\n"
            "import MultiScaleDeformableAttention as MSDA\n"
            "class MSDeformAttnFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, value, locations, weights):\n"
            "        ctx.save_for_backward(value, locations, weights)\n"
            "        return MSDA.ms_deform_attn_forward(value, locations, weights)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        return MSDA.ms_deform_attn_backward(*ctx.saved_tensors, grad)\n"
            "with torch.autocast('cuda'):\n"
            "    out = MSDeformAttnFunction.apply(value, locations, weights)\n",
        ),
        Flag(  # custom_fwd on forward only: backward still runs without autocast
            "import torch\n"
            "class LinearFn(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    @torch.amp.custom_fwd(device_type='cuda')\n"
            "    def forward(ctx, x, w):\n"
            "        ctx.save_for_backward(x, w)\n"
            "        return x @ w.t()\n"
            "    @staticmethod\n"
            "    def backward(ctx, g):\n"
            "        x, w = ctx.saved_tensors\n"
            "        return g @ w, g.t() @ x\n"
            "def step(x, w):\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "        return LinearFn.apply(x, w)\n",
        ),
        Flag(  # inputs cast to float32 only when float16: bfloat16 inputs reach the kernel
            "import torch\n"
            "from torch import nn\n"
            "from . import _C\n"
            "class _Rot(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, rois):\n"
            "        ctx.save_for_backward(rois)\n"
            "        return _C.rot_forward(x, rois)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        return _C.rot_backward(grad, *ctx.saved_tensors), None\n"
            "class RotAlign(nn.Module):\n"
            "    def forward(self, x, rois):\n"
            "        if x.dtype == torch.float16:\n"
            "            x = x.float()\n"
            "            rois = rois.float()\n"
            "        return _Rot.apply(x, rois).to(x.dtype)\n"
            "def run(x, rois):\n"
            "    layer = RotAlign()\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "        return layer(x, rois)\n",
        ),
        Flag(  # float32 inputs do not help a Function whose matmul autocast casts back to half
            "import torch\n"
            "class MyMM(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, a, b):\n"
            "        ctx.save_for_backward(a, b)\n"
            "        return a.mm(b)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        a, b = ctx.saved_tensors\n"
            "        return grad.mm(b.t()), a.t().mm(grad)\n"
            "with torch.autocast('cuda'):\n"
            "    out = MyMM.apply(a.float(), b.float())\n",
        ),
        Flag(  # only one of the two tensors is cast on the way to the kernel
            "import torch\n"
            "from torch import nn\n"
            "from . import _C\n"
            "class _Rot(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, rois):\n"
            "        return _C.rot_forward(x, rois)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad):\n"
            "        return _C.rot_backward(grad), None\n"
            "class RotAlign(nn.Module):\n"
            "    def forward(self, x, rois):\n"
            "        x = x.float()\n"
            "        return _Rot.apply(x, rois)\n"
            "layer = RotAlign()\n"
            "with torch.autocast('cuda'):\n"
            "    y = layer(x, rois)\n",
        ),
    ]
    clean = [
        # a plain module's helper in forward only: not a kernel binding pair
        "import torch\n"
        "import geometry\n"
        "class Scale(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return geometry.forward_scale(x)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return grad * 2\n"
        "with torch.autocast('cuda'):\n"
        "    out = Scale.apply(x)\n",
        # the documented form
        "import torch\n"
        "from torch.amp import custom_fwd, custom_bwd\n"
        "class MyMM(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd(device_type='cuda')\n"
        "    def forward(ctx, a, b):\n"
        "        ctx.save_for_backward(a, b)\n"
        "        return a.mm(b)\n"
        "    @staticmethod\n"
        "    @custom_bwd(device_type='cuda')\n"
        "    def backward(ctx, grad):\n"
        "        a, b = ctx.saved_tensors\n"
        "        return grad.mm(b.t()), a.t().mm(grad)\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    output = MyMM.apply(input1, input2)\n",
        # deprecated spelling with cast_inputs=float32 (forward runs with autocast off)
        "import torch\n"
        "from torch.cuda.amp import custom_fwd, custom_bwd\n"
        "class Kernel(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd(cast_inputs=torch.float32)\n"
        "    def forward(ctx, x):\n"
        "        return my_ext.forward(x)\n"
        "    @staticmethod\n"
        "    @custom_bwd\n"
        "    def backward(ctx, g):\n"
        "        return my_ext.backward(g)\n"
        "with torch.autocast('cuda'):\n"
        "    y = Kernel.apply(x)\n",
        # gradient reversal: elementwise only
        "import torch\n"
        "class GradReverse(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, alpha):\n"
        "        ctx.alpha = alpha\n"
        "        return x.view_as(x)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        return grad_output.neg() * ctx.alpha, None\n"
        "with torch.autocast('cuda'):\n"
        "    feats = GradReverse.apply(backbone(x), 1.0)\n",
        # dtypes matched by hand in forward/backward
        "import torch\n"
        "class Fp8Linear(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, w):\n"
        "        ctx.save_for_backward(w)\n"
        "        return x @ w.to(x.dtype).t()\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        (w,) = ctx.saved_tensors\n"
        "        return g @ w.to(g.dtype), None\n"
        "with torch.autocast('cuda'):\n"
        "    y = Fp8Linear.apply(x, w)\n",
        # applied outside autocast, or inside an fp32 island
        "import torch\n"
        "class MyMM(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a, b):\n"
        "        ctx.save_for_backward(a, b)\n"
        "        return a.mm(b)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        a, b = ctx.saved_tensors\n"
        "        return grad.mm(b.t()), a.t().mm(grad)\n"
        "out = MyMM.apply(a, b)\n"
        "with torch.autocast('cuda'):\n"
        "    h = model(x)\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        out = MyMM.apply(h.float(), w)\n",
        # detectron2's ROIAlignRotated: float16 inputs cast to float32 before the kernel, in a
        # float16 region (bfloat16 cannot arrive)
        "import torch\n"
        "from torch import nn\n"
        "from torch.autograd import Function\n"
        "from . import _C\n"
        "class _Rot(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, rois, output_size, scale):\n"
        "        ctx.save_for_backward(rois)\n"
        "        return _C.rot_forward(x, rois, output_size, scale)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return _C.rot_backward(grad, *ctx.saved_tensors), None, None, None\n"
        "rot_align = _Rot.apply\n"
        "class RotAlign(nn.Module):\n"
        "    def __init__(self, output_size, scale):\n"
        "        super().__init__()\n"
        "        self.output_size = output_size\n"
        "        self.scale = scale\n"
        "    def forward(self, x, rois):\n"
        "        orig_dtype = x.dtype\n"
        "        if orig_dtype == torch.float16:\n"
        "            x = x.float()\n"
        "            rois = rois.float()\n"
        "        return rot_align(x, rois, self.output_size, self.scale).to(dtype=orig_dtype)\n"
        "def run(x, rois):\n"
        "    layer = RotAlign((7, 7), 0.25)\n"
        "    with torch.autocast('cuda'):\n"
        "        return layer(x, rois)\n",
        # cast inline, or under a guard that covers bfloat16 too
        "import torch\n"
        "from . import _C\n"
        "class _Kernel(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, w):\n"
        "        return _C.kernel_forward(x, w)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return _C.kernel_backward(grad), None\n"
        "def apply_kernel(x, w):\n"
        "    if x.dtype != torch.float32:\n"
        "        x = x.float()\n"
        "    return _Kernel.apply(x, w.to(torch.float32)).to(w.dtype)\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    y = apply_kernel(x, w)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        classes, remote_aliases = self._function_classes(
            facts, python_source_near(ctx.path), half_kernels_near(ctx.path))
        if not classes and not remote_aliases:
            return
        aliases = _apply_aliases(facts, classes)
        for site in facts.tree.calls:
            name = self._applied(site, classes, aliases, remote_aliases)
            if name is None:
                continue
            region = facts.active_region(site.frame)
            if region is None:
                continue
            info = classes.get(name) or remote_aliases[name]
            if info.extension_only and _inputs_float32(facts, site, region):
                continue
            missing = []
            if not info.has_fwd:
                missing.append("`forward` has no `@torch.amp.custom_fwd`")
            if not info.has_bwd:
                missing.append("`backward` has no `@torch.amp.custom_bwd`")
            note, related = region_note(region)
            called = f"`{name}`" if name in remote_aliases and name not in classes else f"`{name}.apply`"
            subject = f"{name} ({info.where})" if info.where else name
            message = (
                f"{called} under autocast {note}, but {' and '.join(missing)}: {subject} "
                f"{info.reason}, and its backward runs outside autocast on the dtypes forward "
                "produced (mismatched dtypes raise); decorate forward with "
                "`@torch.amp.custom_fwd(device_type=...)` and backward with "
                "`@torch.amp.custom_bwd(device_type=...)` (or `cast_inputs=torch.float32` for a "
                "float32-only kernel)"
            )
            yield self.report(site.node, message, related=related)

    # -- facts ----------------------------------------------------------------------------
    @staticmethod
    def _function_classes(facts, python_module=None, half_kernel=None):
        """(classes by name, the names bound to another file's `Cls.apply`): this file's
        Functions, and those the project pass found in the files this one imports."""
        found: Dict[str, _Info] = {
            name: _Info(c.has_fwd, c.has_bwd or c.backward is None, c.reason, c.extension_only)
            for name, c in function_classes(facts, python_module, half_kernel).items()
        }
        remote_aliases: Dict[str, _Info] = {}
        for entry in facts.entries:
            if not isinstance(entry, EntryFunction):
                continue
            where = f"defined at {entry.where}"
            info = _Info(entry.has_fwd, entry.has_bwd, entry.reason, entry.extension_only,
                         where if entry.cls == entry.target else f"{entry.cls}, {where}")
            if entry.alias:
                remote_aliases[entry.target] = info
            elif entry.target not in found:
                found[entry.target] = info
        return found, remote_aliases

    @staticmethod
    def _applied(site, classes, aliases, remote_aliases) -> Optional[str]:
        func = site.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "apply"
            and isinstance(func.value, cst.Name)
            and func.value.value in classes
        ):
            name = func.value.value
            if classes[name].where:  # another file's class, under the name this file imports
                if not bound_locally(name, site.frame):
                    return name
            elif resolve((name,), site.frame) is None:  # this file's, not shadowed by an import
                return name
        if (isinstance(func, cst.Name) and func.value in remote_aliases
                and not bound_locally(func.value, site.frame)):
            return func.value
        key = _alias_key(func, site.frame)
        if key is not None and key in aliases:
            return aliases[key]
        return None



def _inputs_float32(facts, site, region) -> bool:
    """The caller casts the tensors it passes to float32 on every path (the manual
    `cast_inputs=torch.float32`); a float16-only guard covers float16 regions only."""
    cast = float32_arguments(facts, site)
    return cast == ALWAYS or (cast is not None and region.dtype == "float16")


def _alias_key(expr: cst.BaseExpression, frame: Frame) -> Optional[Tuple[str, str]]:
    """holder_key, with `self.x` qualified by its class (`("self", "Net.x")`)."""
    key = holder_key(expr)
    if key is not None and key[0] == "self":
        cls = frame.class_frame
        return ("self", f"{cls.name if cls else ''}.{key[1]}")
    return key


def _apply_aliases(facts, classes) -> Dict[Tuple[str, str], str]:
    """`mymm = MyMM.apply`, `self.fn = MyMM.apply` -> class name."""
    found: Dict[Tuple[str, str], str] = {}
    for site in facts.tree.assigns:
        value = site.value
        if not (
            isinstance(value, cst.Attribute)
            and value.attr.value == "apply"
            and isinstance(value.value, cst.Name)
            and value.value.value in classes
        ):
            continue
        for target in site.targets:
            key = _alias_key(target, site.frame)
            if key is not None:
                found[key] = value.value.value
    return found
