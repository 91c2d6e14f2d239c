"""AMP127 step-bypasses-scaler."""

from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.scalers import (
    SCALER_TRIGGERS, Event, Flow, exclusive, expr_line, runs_whenever, spans, through_place,
)
from amplint.analysis.facts.scaler_left import dead_steps, left_none
from amplint.analysis.facts.syntax import bound_names, dotted_name
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import method_call

# What a plain `X.step()` receiver must look like to be an optimizer: `optimizer`, `optim`,
# `opt`, `opt_g`, `g_opt`, `self.optimizer_d`, `optG`; not `prof.step()`, `ema.step()`,
# `self.step()`, `pbar.step()`.
_OPTIMIZER = re.compile(r"optim|(^|_)opt($|_|\d|[A-Z])|_opt$")


def optimizer_like(text: str) -> bool:
    return bool(_OPTIMIZER.search(text.rsplit(".", 1)[-1]))


def handed_back_by_owner(tree, optimizer: str, scaler: str) -> bool:
    """`optimizer` is bound in the file from a call on the object that holds the scaler
    (`model, optimizer = accelerator.prepare(model, optimizer)`, the scaler being
    `accelerator.scaler`): that object wraps the optimizer, and its `step()` may go through the
    scaler (accelerate's AcceleratedOptimizer calls `self.scaler.step(self.optimizer)`)."""
    owner = scaler.rsplit(".", 1)[0] if "." in scaler else None
    if owner is None or owner == "self":
        return False
    for site in tree.assigns:
        if not isinstance(site.value, cst.Call) or not isinstance(site.value.func, cst.Attribute):
            continue
        receiver = dotted_name(site.value.func.value)
        if receiver is None or ".".join(receiver) != owner:
            continue
        if any(optimizer in bound_names(target) for target in site.targets):
            return True
    return False


class StepBypassesScaler(Rule):
    """## What it does
    Finds a plain `optimizer.step()` whose gradients came from `scaler.scale(loss).backward()`:
    the optimizer is stepped directly instead of through `scaler.step(optimizer)`.

    ## Why is this bad?
    `scaler.scale(loss)` multiplies the loss, and so every gradient, by the loss scale (65536 by
    default). `scaler.step` divides the gradients by it again (`unscale_`) and skips the step
    when they hold inf/NaN. Stepped directly, the optimizer applies gradients 65536 times too
    large (plain SGD moves the weights 65536 times too far; Adam's normalisation hides most of
    it, but weight decay and `eps` are then off by that factor), silently; a `scaler.update()`
    after such a step raises
    `AssertionError: No inf checks were recorded prior to update.` After an explicit
    `scaler.unscale_(optimizer)` the size is right, but the inf/NaN steps the scaler exists to
    skip are applied, and the weights become NaN at the first overflow. Not reported: an
    optimizer that `scaler.step` steps anywhere in the file (a non-AMP branch steps it
    directly), a step in a branch that excludes the scaled backward (`if scaler is None:`), a
    step whose gradients a `scaler.step` or another optimizer's step consumed first, a scaler
    created with `enabled=False` on every path, an optimizer handed back by the object that
    holds the scaler (`model, optimizer = accelerator.prepare(model, optimizer)`: its wrapper
    steps through the scaler), and receivers that are not optimizers (`prof.step()`,
    `ema.step()`).

    Through a call, a helper's arm that needs a parameter the call leaves at its `None`
    default (`optimizer_step(optimizer)` of `def optimizer_step(optimizer, scaler=None): if
    scaler is not None: scaler.step(optimizer) else: optimizer.step()`) never runs for that
    call: the caller that scaled the loss is reported at the call (Swin-Transformer's
    `@timed` step helper in another file).

    ## Example
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        optimizer.step()
        scaler.update()
        optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    ```

    ## Fix safety
    **Unsafe**: `optimizer.step()` becomes `scaler.step(optimizer)`, and `scaler.update()` is
    inserted after it when the file never updates that scaler. Offered only when the step is an
    expression statement with no arguments, runs only where the scaled backward runs, and the
    scaler cannot be `None` there. In fp32 runs (a disabled scaler) nothing changes; in AMP runs
    the updates change size (that is the point) and inf/NaN steps are skipped, so the training
    trajectory differs from the one the code produced so far.
    """

    code = "AMP127"
    name = "step-bypasses-scaler"
    severity = Severity.WARNING
    fix_safety = "unsafe"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    optimizer.step()\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n",
            unsafe=True,
        ),
        Flag(  # no update at all: the fix adds one after the step
            "import torch\n"
            "class Trainer:\n"
            "    def __init__(self, model):\n"
            "        self.scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
            "        self.optimizer = torch.optim.AdamW(model.parameters())\n"
            "    def train_step(self, loss, i):\n"
            "        self.scaler.scale(loss / 4).backward()\n"
            "        if (i + 1) % 4 == 0:\n"
            "            self.optimizer.step()  # accumulate\n"
            "            self.optimizer.zero_grad()\n",
            fixed="import torch\n"
            "class Trainer:\n"
            "    def __init__(self, model):\n"
            "        self.scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
            "        self.optimizer = torch.optim.AdamW(model.parameters())\n"
            "    def train_step(self, loss, i):\n"
            "        self.scaler.scale(loss / 4).backward()\n"
            "        if (i + 1) % 4 == 0:\n"
            "            self.scaler.step(self.optimizer)  # accumulate\n"
            "            self.scaler.update()\n"
            "            self.optimizer.zero_grad()\n",
            unsafe=True,
        ),
        Flag(  # unscaled first: right size, but inf/NaN steps are applied
            "import torch\n"
            "def step(model, loss, opt, scaler):\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(opt)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    opt.step()\n"
            "    scaler.update()\n",
            fixed="import torch\n"
            "def step(model, loss, opt, scaler):\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(opt)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    scaler.step(opt)\n"
            "    scaler.update()\n",
            unsafe=True,
        ),
        Flag(  # the scaled backward is conditional, the step is not: reported without a fix
            "import torch\n"
            "def train(model, loader, optimizer, scaler=None):\n"
            "    for x in loader:\n"
            "        loss = model(x)\n"
            "        if scaler is not None:\n"
            "            scaler.scale(loss).backward()\n"
            "        else:\n"
            "            loss.backward()\n"
            "        optimizer.step()\n",
        ),
        Flag(  # a trainer's step() helper, composed through the call
            "import torch\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = torch.amp.GradScaler()\n"
            "    def optimizer_step(self):\n"
            "        self.optimizer.step()\n"
            "        self.optimizer.zero_grad()\n"
            "    def train_step(self, loss):\n"
            "        self.scaler.scale(loss).backward()\n"
            "        self.optimizer_step()\n",
        ),
    ]
    clean = [
        # the documented recipe
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    scaler.scale(loss_fn(model(x), y)).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # separate AMP and non-AMP branches
        "import torch\n"
        "def train_step(loss, optimizer, scaler=None):\n"
        "    if scaler is not None:\n"
        "        scaler.scale(loss).backward()\n"
        "    else:\n"
        "        loss.backward()\n"
        "    if scaler is None:\n"
        "        optimizer.step()\n"
        "    else:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the optimizer is stepped by scaler.step elsewhere in the file (AMP vs plain, by flag)
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=use_amp)\n"
        "scaler.scale(loss).backward()\n"
        "if use_amp:\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "if not use_amp:\n"
        "    optimizer.step()\n",
        # a GAN: the fp32 generator is stepped after the scaler consumed the scaled gradients
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for real in loader:\n"
        "    scaler.scale(disc_loss(D, real)).backward()\n"
        "    scaler.step(opt_d)\n"
        "    scaler.update()\n"
        "    gen_loss(G, D, real).backward()\n"
        "    opt_g.step()\n",
        # a scaler created disabled: scale() returns the loss unchanged
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
        "scaler.scale(loss).backward()\n"
        "optimizer.step()\n",
        # the profiler and an EMA helper step too; they are not optimizers
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x in loader:\n"
        "    scaler.scale(model(x)).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    ema.step()\n"
        "    prof.step()\n",
        # the helper steps through the scaler (a parameter named otherwise in the helper)
        "import torch\n"
        "def optimizer_step(opt, grad_scaler):\n"
        "    grad_scaler.step(opt)\n"
        "    grad_scaler.update()\n"
        "    opt.zero_grad()\n"
        "def train(loader, model, optimizer):\n"
        "    scaler = torch.amp.GradScaler()\n"
        "    for x in loader:\n"
        "        scaler.scale(model(x)).backward()\n"
        "        optimizer_step(optimizer, scaler)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        stepped = [(e.arg, id(e.node)) for f in scalers.flows for e in f.of("step") if e.arg]
        for flow in scalers.composed:
            for step in flow.of("opt_step"):
                text = step.arg
                if text is None or not optimizer_like(text):
                    continue
                # a scaler step of a same-file callee in the arm this call leaves dead is none of
                # this path's (across files it is not among the file's own steps at all)
                dead = dead_steps(scalers, step.origin) if step.origin is not None else ()
                if any(arg == text and node not in dead for arg, node in stepped):
                    continue
                backward = self._scaled_backward(scalers, flow, step)
                if backward is None or not spans(backward, step):
                    continue
                if handed_back_by_owner(ctx.facts.tree, text, str(backward.scaler)):
                    continue
                if str(backward.scaler).startswith(text + "."):
                    # the object stepped holds the scaler that scaled the backward
                    # (`self.optim.backward(loss)` ran `self.optim._scaler.scale(loss)`): a
                    # wrapper that owns the protocol, whose own `step()` is not torch's
                    continue
                yield self._report(scalers, flow, step, backward, text)

    @staticmethod
    def _scaled_backward(scalers, flow: Flow, step: Event) -> Optional[Event]:
        """The last scaled backward before `step` on the same pass whose gradients no step
        consumed in between."""
        for event in reversed([e for e in flow.events if e.order < step.order]):
            if exclusive(event, step):
                continue
            if event.kind == "scale" and event.backward:
                info = scalers.info(event.scaler)
                if not scalers.live(event.scaler) or info is None:
                    return None
                if not info.constructed and "scaler" not in str(event.scaler).lower():
                    return None  # a loss scaler of some other kind, known from use only
                if any(
                    not exclusive(e, event)
                    for e in flow.between(event, step, "step", "opt_step")
                ):
                    return None
                return event
        return None

    def _report(self, scalers, flow: Flow, step: Event, backward: Event, text: str):
        scaler = str(backward.scaler)
        unscaled = [
            u for u in flow.between(backward, step, "unscale")
            if u.scaler == backward.scaler and u.arg == text and runs_whenever(u, step)
        ]
        if unscaled:
            why = (
                f"`{scaler}.unscale_` ran, but inf/NaN gradients (the steps the scaler skips) "
                "are applied"
            )
        else:
            why = (
                "the optimizer steps on gradients still multiplied by the loss scale (65536 by "
                "default): an SGD update is that many times too large, and a step whose gradients "
                "hold inf/NaN is not skipped"
            )
            if any(
                u.scaler == backward.scaler and not exclusive(u, step)
                for u in flow.of("update") if u.order > step.order
            ):
                why += (
                    ", and the `update()` that follows raises 'AssertionError: No inf checks "
                    "were recorded prior to update.'"
                )
        related = {"backward_line": backward.inner or backward.node}
        where = ""
        if step.origin is not None and step.inner is not None:
            where = " (line {step_line}, through this call)"
            related["step_line"] = step.inner
        elif step.remote is not None:
            where = f" (at {step.remote.where}, through this call)"
        left = left_none(scalers, step.origin) if step.origin is not None else ()
        if left and where:
            names = ", ".join(f"`{name}`" for name in left)
            where = where[:-1] + f", which leaves {names} at its default `None`)"
        if backward.remote is not None:
            related["backward_call"] = backward.origin
            where_backward = f"{backward.remote.where}, through the call at line {{backward_call}}"
        elif backward.origin is not None:
            related["backward_call"] = backward.origin
            where_backward = "line {backward_line}, through the call at line {backward_call}"
        else:
            where_backward = "line {backward_line}"
        message = (
            f"`{text}.step()`{where} after `{scaler}.scale(...).backward()` ({where_backward}) "
            f"bypasses the scaler: {why}; use `{scaler}.step({text})`"
        )
        return self.report(
            step.node, message, fix=self._fix(scalers, flow, step, backward, text),
            related=related, through=through_place(step),
        )

    def _fix(self, scalers, flow: Flow, step: Event, backward: Event, text: str):
        call = step.node
        stmt = step.stmt
        if (
            step.origin is not None or backward.origin is not None or stmt is None or backward.receiver is None
            or not isinstance(call, cst.Call) or call.args
            or not any(isinstance(s, cst.Expr) and s.value is call for s in stmt.body)
        ):
            return None
        info = scalers.info(backward.scaler)
        if info is None or info.maybe_none or not runs_whenever(backward, step):
            return None
        assert isinstance(call.func, cst.Attribute)
        new = method_call(backward.receiver.deep_clone(), "step", [cst.Arg(call.func.value)])
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
        if scalers.updated_anywhere(scaler_text := str(backward.scaler)):
            return self.fix(
                Applicability.UNSAFE, f"Step through the scaler: `{scaler_text}.step({text})`",
                {call: new},
            )
        if len(stmt.body) != 1:
            return None
        update = method_call(backward.receiver.deep_clone(), "update")
        lines = [stmt.with_changes(body=[stmt.body[0].with_changes(value=new)]), expr_line(update)]
        return self.fix(
            Applicability.UNSAFE,
            f"Step through the scaler: `{scaler_text}.step({text})`, then `{scaler_text}.update()`",
            {stmt: cst.FlattenSentinel(lines)},
        )

