"""AMP131 autocast-device-type."""

from __future__ import annotations

from typing import Iterable, Set

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.device_values import (
    bound_device_lines, device_call, is_device_object, param_device_entry,
)
from amplint.analysis.facts.syntax import literal_str
from amplint.analysis.facts.tree import CallSite
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, dotted_expr, has_star_args

AUTOCAST = "torch.amp.autocast"  # also `torch.autocast` (names.py maps it here)


class AutocastDeviceType(Rule):
    """## What it does
    Finds `torch.autocast(...)` and `torch.amp.autocast(...)` calls (in `with` items, decorators
    or assignments) that give no device type at all, or give a `torch.device` object where a
    device *type string* is required: `torch.device(...)` inline, or a name the file visibly
    binds to one (`device = torch.device("cuda" if ... else "cpu")`, a parameter annotated
    `torch.device`, `self.device = torch.device(...)`, a parameter a call site of any file
    binds to one).

    ## Why is this bad?
    `device_type` is the first, required parameter of `torch.autocast` (only the deprecated
    `torch.cuda.amp.autocast` implied it). Leaving it out raises
    `TypeError: autocast.__init__() missing 1 required positional argument: 'device_type'`,
    and a `torch.device` raises
    ``ValueError: Expected `device_type` of type `str`, got: `<class 'torch.device'>` ``,
    both when the region is entered for the first time, often deep into a run.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with torch.autocast(device_type=device, dtype=torch.float16):
        out = model(x)
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with torch.autocast(device_type=torch.device(device).type, dtype=torch.float16):
        out = model(x)
    ```

    ## Fix safety
    Wrapping a device in `torch.device(d).type` is **safe**: it is the device's type whether `d`
    is a `torch.device` or a string (`"cuda:0"` gives `"cuda"`), so it cannot change a call that
    worked. Inserting a missing device type is **unsafe**: amplint writes `"cuda"` (or the one
    literal device type the file's other autocast calls use), which may not be the device the
    code runs on.
    """

    code = "AMP131"
    name = "autocast-device-type"
    severity = Severity.ERROR
    fix_safety = "safe / unsafe"
    triggers = ("autocast",)

    flag = [
        Flag(  # no device type at all
            "import torch\n"
            "def train_step(model, x, use_amp):\n"
            "    with torch.autocast(enabled=use_amp, dtype=torch.float16):\n"
            "        return model(x)\n",
            fixed="import torch\n"
            "def train_step(model, x, use_amp):\n"
            "    with torch.autocast(\"cuda\", enabled=use_amp, dtype=torch.float16):\n"
            "        return model(x)\n",
            unsafe=True,
        ),
        Flag(  # a torch.device bound in the file
            "import torch\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "for x, y in loader:\n"
            "    with torch.autocast(device_type=device, dtype=torch.bfloat16):\n"
            "        loss = model(x.to(device)).mean()\n",
            fixed="import torch\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "for x, y in loader:\n"
            "    with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16):\n"
            "        loss = model(x.to(device)).mean()\n",
        ),
        Flag(  # inline torch.device, positional, through `from torch import amp`
            "import torch\n"
            "from torch import amp\n"
            "with amp.autocast(torch.device('cuda:0')):\n"
            "    out = model(x)\n",
            fixed="import torch\n"
            "from torch import amp\n"
            "with amp.autocast(torch.device('cuda:0').type):\n"
            "    out = model(x)\n",
        ),
        Flag(  # a parameter annotated torch.device, in a decorator
            "import torch\n"
            "def make(dev: torch.device):\n"
            "    @torch.autocast(dev)\n"
            "    def fwd(x):\n"
            "        return x @ x\n"
            "    return fwd\n",
            fixed="import torch\n"
            "def make(dev: torch.device):\n"
            "    @torch.autocast(torch.device(dev).type)\n"
            "    def fwd(x):\n"
            "        return x @ x\n"
            "    return fwd\n",
        ),
        Flag(  # missing; the file's other regions are on the CPU: insert "cpu"
            "import torch\n"
            "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    a = model(x)\n"
            "with torch.amp.autocast(dtype=torch.bfloat16):\n"
            "    b = model(y)\n",
            fixed="import torch\n"
            "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    a = model(x)\n"
            "with torch.amp.autocast(\"cpu\", dtype=torch.bfloat16):\n"
            "    b = model(y)\n",
            unsafe=True,
        ),
        Flag(  # the fallback import runs only on old torch: the name is torch.amp.autocast
            "try:\n"
            "    from torch.amp import autocast\n"
            "except ImportError:\n"
            "    from torch.cuda.amp import autocast\n"
            "with autocast(dtype=torch.float16):\n"
            "    out = model(x)\n",
            fixed="try:\n"
            "    from torch.amp import autocast\n"
            "except ImportError:\n"
            "    from torch.cuda.amp import autocast\n"
            "with autocast(\"cuda\", dtype=torch.float16):\n"
            "    out = model(x)\n",
            unsafe=True,
        ),
    ]
    clean = [
        # the deprecated class first, torch.amp only as the fallback: the device is implied
        "try:\n"
        "    from torch.cuda.amp import autocast\n"
        "except ImportError:\n"
        "    from torch.amp import autocast\n"
        "with autocast(dtype=torch.float16):\n"
        "    out = model(x)\n",
        # the documented forms
        "import torch\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    out = model(x)\n"
        "with torch.amp.autocast('cpu', dtype=torch.bfloat16):\n"
        "    out = model(x)\n",
        # a device's type, and a device string from the config
        "import torch\n"
        "device = torch.device('cuda')\n"
        "with torch.autocast(device_type=device.type, enabled=args.amp):\n"
        "    out = model(x)\n"
        "with torch.autocast(args.device, enabled=args.amp):\n"
        "    out = model(x)\n",
        # the deprecated CUDA form implies the device (AMP130's business)
        "import torch\n"
        "with torch.cuda.amp.autocast(enabled=True):\n"
        "    out = model(x)\n",
        # a name that is a string in this file; **kwargs may carry device_type
        "import torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "with torch.autocast(device, dtype=torch.float16):\n"
        "    out = model(x)\n"
        "with torch.autocast(**amp_kwargs):\n"
        "    out = model(x)\n",
        # partial(torch.autocast, ...) gets its device type where it is called
        "import torch\n"
        "from functools import partial\n"
        "amp_autocast = partial(torch.autocast, dtype=torch.bfloat16)\n"
        "with amp_autocast(device_type='cuda'):\n"
        "    out = model(x)\n",
        # accelerate's autocast() is a different API
        "import torch\n"
        "with accelerator.autocast():\n"
        "    out = model(x)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        sites = [site for _, site in facts.calls_to(AUTOCAST)]
        literal_devices: Set[str] = set()
        for site in sites:
            arg = argument(site.node, 0, "device_type")
            device = literal_str(arg.value) if arg is not None else None
            if device is not None:
                literal_devices.add(device.split(":")[0])
        default = literal_devices.pop() if len(literal_devices) == 1 else "cuda"
        for site in sites:
            call = site.node
            if has_star_args(call):
                continue
            arg = argument(call, 0, "device_type")
            if arg is None:
                yield self.report(
                    call,
                    "`autocast(...)` without a device type raises 'TypeError: "
                    "autocast.__init__() missing 1 required positional argument: "
                    f"'device_type''; pass it first, e.g. `\"{default}\"`",
                    fix=self._insert_fix(call, default),
                )
            elif is_device_object(facts, arg.value, site.frame):
                bound = param_device_entry(facts, arg.value, site.frame)
                where = f" (the parameter `{bound.param}` gets {bound.cite} from a call)" if bound is not None else ""
                if not where and not device_call(facts, arg.value, site.frame):
                    lines = bound_device_lines(facts, arg.value)
                    if lines:
                        where = " (it holds the `torch.device` made at %s)" % " and ".join(lines)
                yield self.report(
                    arg.value,
                    "`autocast` takes a device *type* string, not a `torch.device`" + where + ": this raises "
                    "'ValueError: Expected `device_type` of type `str`'; pass "
                    "`torch.device(d).type`",
                    fix=self._type_fix(ctx, site, arg),
                )

    # -- fixes ----------------------------------------------------------------------------
    def _insert_fix(self, call: cst.Call, device: str):
        new_call = call.with_changes(
            args=[cst.Arg(cst.SimpleString(f'"{device}"'))] + list(call.args)
        )
        return self.fix(Applicability.UNSAFE, f'Pass the device type "{device}"', {call: new_call})

    def _type_fix(self, ctx, site: CallSite, arg: cst.Arg):
        value = arg.value
        if device_call(ctx.facts, value, site.frame) and isinstance(value, cst.Call):
            new_value: cst.BaseExpression = cst.Attribute(value=value, attr=cst.Name("type"))
            imports: tuple = ()
        else:
            try:
                torch_name, needs = ctx.facts.torch_name(site.frame)
            except LookupError:
                return None
            new_value = cst.Attribute(
                value=cst.Call(func=dotted_expr(f"{torch_name}.device"), args=[cst.Arg(value)]),
                attr=cst.Name("type"),
            )
            imports = ("torch",) if needs else ()
        return self.fix(
            Applicability.SAFE, "Pass the device's type: `torch.device(d).type`",
            {value: new_value}, imports,
        )
