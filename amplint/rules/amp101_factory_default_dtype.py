"""AMP101 factory-default-dtype."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from amplint.diagnostics import Applicability, Diagnostic, Severity
from amplint.facts.tree import CallSite
from amplint.rules import Flag, Rule
from amplint.rules._util import (
    argument, code_of, has_float_data, has_star_args, is_float_literal, keyword, kwarg,
    method_call, positional, region_note, with_args,
)

# factory -> the `Tensor.new_*` method that keeps the reference tensor's dtype and device
FACTORIES = {
    "torch.zeros": "new_zeros",
    "torch.ones": "new_ones",
    "torch.empty": "new_empty",
    "torch.full": "new_full",
    "torch.tensor": "new_tensor",
    "torch.rand": None,  # no new_rand: the fix passes dtype=r.dtype instead
    "torch.randn": None,
}
KEPT_KEYWORDS = {"device", "requires_grad", "size", "fill_value", "data"}


class FactoryDefaultDtype(Rule):
    """## What it does
    Finds `torch.zeros/ones/empty/full/rand/randn` and `torch.tensor(<float data>)` without
    `dtype=` in fp16 code: under an enabled autocast region, in a function called from one, in
    the methods of a module class the file turns `.half()`, or in an mmcv `@auto_fp16` body.

    ## Why is this bad?
    A factory without `dtype=` makes float32 whatever the surrounding precision is. Writing half
    values into that buffer raises
    `RuntimeError: Index put requires the source and destination dtypes match, got Float for the
    destination and Half for the source.`; mixed into arithmetic it silently upcasts the half
    tensors it meets to float32, costing memory and speed.

    Integer and bool factories (`dtype=torch.long`, `torch.full(s, 0)`), `*_like` and `new_*`
    calls, an explicit `dtype=`, and 0-d scalars (`torch.tensor(0.0)`, which never upcast a
    tensor they meet) are not reported.

    ## Example
    ```python
    with torch.autocast("cuda"):
        h = self.encoder(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda"):
        h = self.encoder(x)
        out = h.new_zeros(n, h.shape[-1])
        out[idx] = h
    ```

    ## Fix safety
    The fix takes the reference tensor from the `device=r.device` argument and rewrites
    `torch.zeros(s, device=r.device)` to `r.new_zeros(s)` (`new_ones`, `new_empty`,
    `new_full(s, v)`, `new_tensor(data)`; `rand`/`randn` get `dtype=r.dtype`), keeping
    `requires_grad=`. In fp32 `r` is float32, so the result is the same tensor as before.
    It is **safe** when `r` is known to be a floating tensor of the fp16 code: the value written
    into the new buffer, a module's output, or (in a half module, not under autocast, where
    parameters stay float32 and the fix would change nothing) a parameter. It is **unsafe**
    otherwise: `input_ids.new_zeros(...)` would be int64. Without a `device=r.device` argument
    there is no reference tensor and no fix: pass `dtype=` yourself.
    """

    code = "AMP101"
    name = "factory-default-dtype"
    severity = Severity.ERROR
    fix_safety = "safe / unsafe"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half")

    flag = [
        Flag(
            "import torch\n"
            "def step(model, x, idx, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x)\n"
            "        out = torch.zeros(n, h.shape[-1], device=h.device)\n"
            "        out[idx] = h\n",
            fixed="import torch\n"
            "def step(model, x, idx, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x)\n"
            "        out = h.new_zeros(n, h.shape[-1])\n"
            "        out[idx] = h\n",
        ),
        Flag(  # a module turned half: its forward is fp16 code; r's dtype unknown -> unsafe
            "import torch\n"
            "class Net(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        mask = torch.ones(x.shape[0], device=x.device, requires_grad=False)\n"
            "        return x * mask\n"
            "net = Net().cuda().half()\n",
            fixed="import torch\n"
            "class Net(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        mask = x.new_ones(x.shape[0], requires_grad=False)\n"
            "        return x * mask\n"
            "net = Net().cuda().half()\n",
            unsafe=True,
        ),
        Flag(  # in a half module a parameter is a floating reference: safe
            "import torch\n"
            "class Head(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        noise = torch.randn(x.shape, device=self.proj.weight.device)\n"
            "        return self.proj(x + noise)\n"
            "head = Head().half()\n",
            fixed="import torch\n"
            "class Head(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        noise = torch.randn(x.shape, device=self.proj.weight.device, dtype=self.proj.weight.dtype)\n"
            "        return self.proj(x + noise)\n"
            "head = Head().half()\n",
        ),
        Flag(  # under autocast a parameter stays float32: reported, no fix
            "import torch\n"
            "from torch.cuda.amp import autocast as ac\n"
            "class Head(torch.nn.Module):\n"
            "    @ac()\n"
            "    def forward(self, x):\n"
            "        noise = torch.randn(x.shape, device=self.proj.weight.device)\n"
            "        return self.proj(x + noise)\n",
        ),
        Flag(  # no device=: reported, nothing to fix with
            "import torch\n"
            "def helper(h):\n"
            "    return h + torch.tensor([0.5, 1.5]).cuda()\n"
            "def train(model, x):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        return helper(model(x))\n",
        ),
        Flag(  # torch.full with a float fill
            "import torch\n"
            "with torch.autocast('cuda'):\n"
            "    bias = torch.full((4, 4), float('-inf'), device='cuda')\n",
        ),
    ]
    clean = [
        # integer / bool factories, explicit dtype, *_like, new_*
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    idx = torch.zeros(4, dtype=torch.long, device='cuda')\n"
        "    pos = torch.arange(10, device='cuda')\n"
        "    m = torch.ones(3, 3, dtype=torch.bool)\n"
        "    z = torch.zeros_like(x)\n"
        "    y = x.new_zeros(3)\n"
        "    c = torch.full((2,), 0)\n"
        "    d = torch.tensor([1, 2, 3])\n"
        "    s = torch.tensor(0.0, device='cuda')\n",
        # no autocast anywhere: plain fp32 code
        "import torch\n"
        "def forward(x):\n"
        "    return x + torch.zeros(x.shape, device=x.device)\n",
        # an fp32 island under enabled=False
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        acc = torch.zeros(3, device='cuda')\n",
        # after the autocast block
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n"
        "total = torch.zeros(1, device=out.device)\n",
        # a name that shadows torch is not torch
        "import torch\n"
        "def f(torch):\n"
        "    with autocast():\n"
        "        return torch.zeros(3)\n",
        # **kwargs may carry dtype
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    buf = torch.zeros(3, **factory_kwargs)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        for qualified, site in facts.calls_to(*FACTORIES):
            call = site.node
            if keyword(call, "dtype") or keyword(call, "out") or has_star_args(call):
                continue
            if not self._is_float_factory(qualified, call):
                continue
            region = facts.active_region(site.frame)
            if region is not None:
                note, related = region_note(region)
                where = f"under autocast {note}"
            elif facts.fp16.is_fp16(site.frame):
                where, related = "in fp16 code (a module the file turns half, or @auto_fp16)", {}
            else:
                continue
            short = qualified.replace("torch.", "torch.", 1)
            message = (
                f"`{short}` without `dtype=` creates float32 {where}; writing half values "
                "into it raises 'Index put requires the source and destination dtypes match', "
                "elsewhere it silently upcasts"
            )
            fix = self._fix(ctx, qualified, site, in_region=region is not None)
            yield self.report(call, message, fix=fix, related=related)

    @staticmethod
    def _is_float_factory(qualified: str, call: cst.Call) -> bool:
        if qualified == "torch.tensor":
            data = argument(call, 0, "data")
            return data is not None and has_float_data(data.value)
        if qualified == "torch.full":
            fill = argument(call, 1, "fill_value")
            return fill is not None and is_float_literal(fill.value)
        return True

    def _fix(self, ctx, qualified: str, site: CallSite, in_region: bool):
        call = site.node
        device = keyword(call, "device")
        if device is None or not (
            isinstance(device.value, cst.Attribute) and device.value.attr.value == "device"
        ):
            return None
        if any(a.keyword is not None and a.keyword.value not in KEPT_KEYWORDS for a in call.args):
            return None
        reference = device.value.value
        method = FACTORIES[qualified]
        if method is None:
            new_call = with_args(call, list(call.args) + [kwarg("dtype", cst.Attribute(
                value=reference, attr=cst.Name("dtype")))])
            description = f"Pass `dtype={code_of(ctx.module, reference)}.dtype`"
        else:
            kept = [a for a in call.args if a is not device]
            new_call = with_args(method_call(reference, method), kept, original=call)
            description = f"Use `{code_of(ctx.module, reference)}.{method}(...)`"
        kind = self._reference_kind(ctx, site, reference)
        if kind == "parameter" and in_region:
            return None  # under autocast parameters stay float32: new_* of one fixes nothing
        safe = kind == "activation" or kind == "parameter"
        return self.fix(
            Applicability.SAFE if safe else Applicability.UNSAFE, description, {call: new_call}
        )

    @staticmethod
    def _reference_kind(ctx, site: CallSite, reference: cst.BaseExpression) -> str:
        """"activation" (a module output, or the value written into the new buffer),
        "parameter" (`.weight`/`.bias`), or "unknown"."""
        facts = ctx.facts
        function = site.frame.function
        ref_code = code_of(ctx.module, reference)
        buffer = _assigned_name(site)
        for assign in facts.tree.assigns:
            if assign.frame.function is not function:
                continue
            for target in assign.targets:
                # the value written into the new buffer: `buf[idx] = r` / `buf[idx] = r[idx]`
                written = assign.value
                if isinstance(written, cst.Subscript):
                    written = written.value
                if (
                    buffer is not None
                    and isinstance(target, cst.Subscript)
                    and isinstance(target.value, cst.Name)
                    and target.value.value == buffer
                    and code_of(ctx.module, written) == ref_code
                ):
                    return "activation"
                # a module's output: `r = self.layer(x)` / `r = model(x)`
                if (
                    isinstance(target, cst.Name)
                    and isinstance(reference, cst.Name)
                    and target.value == reference.value
                    and isinstance(assign.value, cst.Call)
                    and _is_module_call(facts, assign)
                ):
                    return "activation"
        if isinstance(reference, cst.Attribute) and reference.attr.value in ("weight", "bias"):
            return "parameter"
        return "unknown"


def _assigned_name(site: CallSite) -> Optional[str]:
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if assign.value is site.node and len(assign.targets) == 1:
        target = assign.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None


def _is_module_call(facts, assign) -> bool:
    """`self.layer(x)` (an attribute that is not a method of the class) or `net(x)` where
    `net` is an instance of a module class of this file."""
    func = assign.value.func
    owner = facts.callgraph.self_attr_owner(func, assign.frame)
    if owner is not None:
        return facts.callgraph.method(owner[0], owner[1]) is None
    return facts.callgraph.class_of_instance(func, assign.frame) is not None
