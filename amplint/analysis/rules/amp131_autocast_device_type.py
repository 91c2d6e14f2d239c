"""AMP131 autocast-device-type."""

from __future__ import annotations

from typing import Iterable, List, Optional, Set

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.names import visible_scopes
from amplint.analysis.facts.regions import literal_str
from amplint.analysis.facts.tree import CallSite, Frame, self_attr
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, dotted_expr, has_star_args

AUTOCAST = "torch.amp.autocast"  # also `torch.autocast` (names.py maps it here)
DEVICE = "torch.device"


class AutocastDeviceType(Rule):
    """## What it does
    Finds `torch.autocast(...)` and `torch.amp.autocast(...)` calls (in `with` items, decorators
    or assignments) that give no device type at all, or give a `torch.device` object where a
    device *type string* is required: `torch.device(...)` inline, or a name the file visibly
    binds to one (`device = torch.device("cuda" if ... else "cpu")`, a parameter annotated
    `torch.device`, `self.device = torch.device(...)`).

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
            elif self._is_device_object(ctx, arg.value, site.frame):
                yield self.report(
                    arg.value,
                    "`autocast` takes a device *type* string, not a `torch.device`: this raises "
                    "'ValueError: Expected `device_type` of type `str`'; pass "
                    "`torch.device(d).type`",
                    fix=self._type_fix(ctx, site, arg),
                )

    # -- what is a torch.device -----------------------------------------------------------
    def _is_device_object(self, ctx, expr: cst.BaseExpression, frame: Frame) -> bool:
        facts = ctx.facts
        if self._device_call(facts, expr, frame):
            return True
        if isinstance(expr, cst.Name):
            return self._name_is_device(ctx, expr.value, frame)
        attr = self_attr(expr)
        if attr is not None:
            cls = frame.class_frame
            if cls is None:
                return False
            values = facts.index.self_assigns(cls).get(attr, [])
            return bool(values) and all(
                self._device_call(facts, a.value, a.frame) for a in values
            )
        return False

    @staticmethod
    def _device_call(facts, expr: cst.BaseExpression, frame: Frame) -> bool:
        """`torch.device(...)`, or a conditional choosing between two of them."""
        if isinstance(expr, cst.IfExp):
            return AutocastDeviceType._device_call(facts, expr.body, frame) and (
                AutocastDeviceType._device_call(facts, expr.orelse, frame)
            )
        return isinstance(expr, cst.Call) and facts.resolve(expr.func, frame) == DEVICE

    def _name_is_device(self, ctx, name: str, frame: Frame) -> bool:
        facts = ctx.facts
        scope = next((s for s in visible_scopes(frame) if name in s.imports or name in s.bindings), None)
        if scope is None or name in scope.imports:
            return False
        assigns = [
            a for a in facts.tree.assigns
            if a.frame.scope is scope
            and any(isinstance(t, cst.Name) and t.value == name for t in a.targets)
        ]
        annotated = self._annotated_param(facts, scope, name)
        if not assigns and not annotated:
            return False
        if not all(
            len(a.targets) == 1 and self._device_call(facts, a.value, a.frame) for a in assigns
        ):
            return False
        # Only plain assignments bind it: no loop variable, `with ... as`, augmented assignment.
        return _plain_bindings(scope.node, name) == len(assigns) + (1 if annotated else 0)

    @staticmethod
    def _annotated_param(facts, scope: Frame, name: str) -> bool:
        node = scope.node
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef):
            return False
        for param in list(node.params.params) + list(node.params.kwonly_params) + list(
            node.params.posonly_params
        ):
            if param.name.value == name and param.annotation is not None:
                outer = scope.parent or scope
                return facts.resolve(param.annotation.annotation, outer) == DEVICE
        return False

    # -- fixes ----------------------------------------------------------------------------
    def _insert_fix(self, call: cst.Call, device: str):
        new_call = call.with_changes(
            args=[cst.Arg(cst.SimpleString(f'"{device}"'))] + list(call.args)
        )
        return self.fix(Applicability.UNSAFE, f'Pass the device type "{device}"', {call: new_call})

    def _type_fix(self, ctx, site: CallSite, arg: cst.Arg):
        value = arg.value
        if self._device_call(ctx.facts, value, site.frame) and isinstance(value, cst.Call):
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


class _Bindings(cst.CSTVisitor):
    """Counts the statements that bind `name` in one scope (not in nested functions/classes)."""

    def __init__(self, name: str, root: cst.CSTNode) -> None:
        self.name = name
        self.root = root
        self.count = 0

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name) and target.value == self.name:
            self.count += 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        if node is self.root:
            for param in _params(node.params):
                if param.name.value == self.name:
                    self.count += 1
            return True
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        return node is self.root

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)


def _params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def _plain_bindings(root: cst.CSTNode, name: str) -> int:
    visitor = _Bindings(name, root)
    root.visit(visitor)
    return visitor.count
