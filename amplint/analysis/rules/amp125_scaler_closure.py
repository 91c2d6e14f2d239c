"""AMP125 scaler-closure."""

from __future__ import annotations

from typing import Iterable, Optional, Set

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.scalers import key_text
from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.rules import Flag, Rule

LBFGS = {"torch.optim.LBFGS", "torch.optim.lbfgs.LBFGS"}


class ScalerClosure(Rule):
    """## What it does
    Finds `scaler.step(optimizer, closure=...)`, `scaler.step(optimizer, closure)` and
    `scaler.step(optimizer)` where the optimizer is a `torch.optim.LBFGS` built in the same file.

    ## Why is this bad?
    GradScaler does not support closures. With `closure=` it raises
    `RuntimeError: Closure use is not currently supported if GradScaler is enabled.`
    A positional closure slips past that check and is forwarded to `optimizer.step(closure)`:
    the closure's re-evaluations produce gradients the scaler never unscales nor checks for
    inf/NaN, so the step uses scaled gradients. LBFGS, which needs a closure, fails without one:
    `TypeError: LBFGS.step() missing 1 required positional argument: 'closure'`. A scaler
    created with `enabled=False` passes the closure through and is not reported.

    ## Example
    ```python
    optimizer = torch.optim.LBFGS(model.parameters())
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        return loss
    scaler.step(optimizer, closure)
    scaler.update()
    ```

    ## Use instead
    ```python
    optimizer = torch.optim.LBFGS(model.parameters())
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)  # fp32: LBFGS and loss scaling do not mix
        loss.backward()
        return loss
    optimizer.step(closure)
    ```

    ## Fix safety
    **Suggestion** only: dropping the scaler (or the closure) changes the training algorithm;
    Lightning refuses the combination outright ("AMP and the LBFGS optimizer are not
    compatible").
    """

    code = "AMP125"
    name = "scaler-closure"
    severity = Severity.ERROR
    fix_safety = "suggestion"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "def closure():\n"
            "    optimizer.zero_grad()\n"
            "    loss = model(x).sum()\n"
            "    scaler.scale(loss).backward()\n"
            "    return loss\n"
            "scaler.step(optimizer, closure=closure)\n"
            "scaler.update()\n",
        ),
        Flag(  # an LBFGS optimizer on self, closure passed positionally
            "import torch\n"
            "from torch.optim import LBFGS\n"
            "class Fitter:\n"
            "    def __init__(self, model):\n"
            "        self.opt = LBFGS(model.parameters(), lr=1)\n"
            "        self.scaler = torch.amp.GradScaler('cuda')\n"
            "    def fit_step(self, closure):\n"
            "        self.scaler.step(self.opt, closure)\n"
            "        self.scaler.update()\n",
        ),
        Flag(  # LBFGS stepped through the scaler with no closure at all
            "import torch\n"
            "optimizer = torch.optim.LBFGS(model.parameters())\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "scaler.scale(loss).backward()\n"
            "scaler.step(optimizer)\n"
            "scaler.update()\n",
        ),
    ]
    clean = [
        # the recipe: no closure
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # LBFGS without a scaler, closure on the optimizer itself
        "import torch\n"
        "optimizer = torch.optim.LBFGS(model.parameters())\n"
        "def closure():\n"
        "    optimizer.zero_grad()\n"
        "    loss = model(x).sum()\n"
        "    loss.backward()\n"
        "    return loss\n"
        "optimizer.step(closure)\n",
        # a disabled scaler forwards the closure
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
        "scaler.step(optimizer, closure=closure)\n"
        "scaler.update()\n",
        # Lightning: refuse LBFGS, step other optimizers with kwargs
        "import torch\n"
        "from torch.optim import LBFGS\n"
        "class MixedPrecision:\n"
        "    def __init__(self):\n"
        "        self.scaler = torch.amp.GradScaler('cuda')\n"
        "    def optimizer_step(self, optimizer, **kwargs):\n"
        "        if isinstance(optimizer, LBFGS):\n"
        "            raise TypeError('AMP and the LBFGS optimizer are not compatible.')\n"
        "        step_output = self.scaler.step(optimizer, **kwargs)\n"
        "        self.scaler.update()\n"
        "        return step_output\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        lbfgs: Optional[Set[str]] = None
        for flow in scalers.flows:
            for step in flow.of("step"):
                info = scalers.info(step.scaler)
                if info is None or info.disabled or info.other_class:
                    continue  # another scaler class's `step` may take the closure
                call = step.node
                assert isinstance(call, cst.Call)
                keyword = any(a.keyword is not None and a.keyword.value == "closure" for a in call.args)
                positional = [a for a in call.args if a.keyword is None and not a.star]
                if keyword:
                    message = (
                        f"`{step.scaler}.step(..., closure=...)` raises 'RuntimeError: Closure use "
                        "is not currently supported if GradScaler is enabled.'; GradScaler and "
                        "closure optimizers do not mix: step the optimizer in fp32 without the "
                        "scaler"
                    )
                elif len(positional) >= 2:
                    message = (
                        f"closure passed positionally to `{step.scaler}.step`: it is forwarded to "
                        "`optimizer.step(closure)` and its gradients are never unscaled nor checked "
                        "for inf/NaN ('Closure use is not currently supported'); step the optimizer "
                        "in fp32 without the scaler"
                    )
                else:
                    if lbfgs is None:
                        lbfgs = self._lbfgs_names(ctx.facts)
                    optimizer = positional[0].value if positional else None
                    if optimizer is None or scalers.ref(key_text(optimizer), flow.frame) not in lbfgs:
                        continue
                    message = (
                        f"LBFGS stepped through `{step.scaler}.step` without a closure raises "
                        "'TypeError: LBFGS.step() missing 1 required positional argument: "
                        "'closure''; and GradScaler does not support closures: train LBFGS "
                        "without the scaler"
                    )
                yield self.report(call, message)

    @staticmethod
    def _lbfgs_names(facts) -> Set[str]:
        names: Set[str] = set()
        for assign in facts.tree.assigns:
            value = assign.value
            if isinstance(value, cst.Call) and resolve_expr(value.func, assign.frame) in LBFGS:
                for target in assign.targets:
                    ref = facts.scalers.ref(key_text(target), assign.frame)
                    if ref is not None:
                        names.add(ref)
        return names
