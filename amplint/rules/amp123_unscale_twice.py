"""AMP123 unscale-twice."""

from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

import libcst as cst

from amplint.diagnostics import Diagnostic, Severity
from amplint.facts.scalers import (
    Event, Flow, arms, exclusive, gates, jumps_between, runs_whenever,
)
from amplint.facts.scalers import SCALER_TRIGGERS
from amplint.rules import Flag, Rule


class UnscaleTwice(Rule):
    """## What it does
    Finds a second `scaler.unscale_(optimizer)` of the same optimizer before `scaler.update()`
    (also after that optimizer's `scaler.step`), and an `unscale_` that runs more often than
    the scaler's `update()`: every micro-step of a gradient-accumulation loop whose `step` and
    `update` run only every k-th iteration (or after the inner loop).

    ## Why is this bad?
    `unscale_` records that the optimizer's gradients are unscaled until `update()` resets it.
    A second call raises
    `RuntimeError: unscale_() has already been called on this optimizer since the last update().`
    and one after `step` raises `RuntimeError: unscale_() is being called after step().` The
    docs: "`unscale_` should only be called once per optimizer per `step` call, and only after
    all gradients for that optimizer's assigned parameters have been accumulated." In an
    accumulation loop the second micro-step raises. The same happens when `unscale_` runs every
    iteration (or every call of a step function) but `step`/`update()` are skipped on some path
    (`if not skip_optimizer_step:`, `if grad_norm.isfinite():`, an early `return`): the message
    names that path. `unscale_` of two different optimizers, or inside the same
    `if (i + 1) % k == 0:` arm as the step and update, is fine; so is a skipped `step` whose
    `update()` still runs.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        scaler.scale(loss_fn(model(x), y) / k).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % k == 0:
            scaler.step(optimizer)
            scaler.update()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        scaler.scale(loss_fn(model(x), y) / k).backward()
        if (i + 1) % k == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
    ```

    ## Fix safety
    **Suggestion** only: whether to drop an `unscale_` or move it (and the clipping that needs
    it) under the step's condition depends on what the code between them does with the
    gradients.
    """

    code = "AMP123"
    name = "unscale-twice"
    severity = Severity.ERROR
    fix_safety = "suggestion"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(  # unscale per micro-step, step and update every k
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for i, (x, y) in enumerate(loader):\n"
            "    scaler.scale(loss_fn(model(x), y) / k).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    if (i + 1) % k == 0:\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
        Flag(  # unscale in a helper call and again before clipping
            "import torch\n"
            "def step(model, loss, opt, scaler):\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(opt)\n"
            "    grad_norm = compute_grad_norm(model)\n"
            "    if clip:\n"
            "        scaler.unscale_(opt)\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)\n"
            "    scaler.step(opt)\n"
            "    scaler.update()\n",
        ),
        Flag(  # inner micro-step loop unscales, the outer loop updates
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "while True:\n"
            "    for micro_step in range(accum):\n"
            "        scaler.scale(model(X, Y)).backward()\n"
            "        scaler.unscale_(optimizer)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
        Flag(  # accumulation by `continue`: the unscale runs before it
            "import torch\n"
            "def train(model, loader, opt, scaler, k):\n"
            "    for i, batch in enumerate(loader):\n"
            "        scaler.scale(model(batch)).backward()\n"
            "        scaler.unscale_(opt)\n"
            "        if (i + 1) % k != 0:\n"
            "            continue\n"
            "        scaler.step(opt)\n"
            "        scaler.update()\n",
        ),
        Flag(  # unscale then skip: the step and update wait for a flag, the unscale does not
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for batch in loader:\n"
            "    scaler.scale(model(batch)).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    if not skip_optimizer_step:\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
        Flag(  # a step function that skips non-finite gradients, update included
            "import torch\n"
            "def train_step(model, batch, optimizer, scaler):\n"
            "    scaler.scale(model(batch)).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    if grad_norm.isfinite():\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
    ]
    clean = [
        # the step is skipped on non-finite gradients, the update is not
        "import torch\n"
        "def train_step(model, batch, optimizer, scaler):\n"
        "    scaler.scale(model(batch)).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    if grad_norm.isfinite():\n"
        "        scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # the skip flag gates the unscale too
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for batch in loader:\n"
        "    scaler.scale(model(batch)).backward()\n"
        "    if not skip_optimizer_step:\n"
        "        scaler.unscale_(optimizer)\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # Lightning: the unscale has a test of its own that implies the step's
        "import torch\n"
        "def optimizer_step(self, optimizer, model, closure):\n"
        "    closure_result = closure()\n"
        "    skip_unscaling = closure_result is None and model.automatic_optimization\n"
        "    if not handles_unscaling(optimizer) and not skip_unscaling:\n"
        "        self.scaler.unscale_(optimizer)\n"
        "    if not skip_unscaling:\n"
        "        step_output = self.scaler.step(optimizer)\n"
        "        self.scaler.update()\n"
        "        return step_output\n"
        "    return closure_result\n",
        # an AMP / plain split after an unconditional unscale (a disabled scaler's is a no-op)
        "import torch\n"
        "def train_step(model, batch, optimizer, scaler, use_amp):\n"
        "    scaler.scale(model(batch)).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    if use_amp:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n"
        "    else:\n"
        "        optimizer.step()\n",
        # unscale once per step, inside the accumulation arm
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for i, (x, y) in enumerate(loader):\n"
        "    scaler.scale(loss_fn(model(x), y) / k).backward()\n"
        "    if (i + 1) % k == 0:\n"
        "        scaler.unscale_(optimizer)\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # two optimizers, each unscaled once
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "scaler.unscale_(opt_g)\n"
        "scaler.unscale_(opt_d)\n"
        "torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
        "scaler.step(opt_g)\n"
        "scaler.step(opt_d)\n"
        "scaler.update()\n",
        # DINO: unscale in the clipping arm, the same step every iteration
        "import torch\n"
        "def train(loader, optimizer, fp16_scaler, args):\n"
        "    for it, images in enumerate(loader):\n"
        "        loss = model(images)\n"
        "        if fp16_scaler is None:\n"
        "            loss.backward()\n"
        "            optimizer.step()\n"
        "        else:\n"
        "            fp16_scaler.scale(loss).backward()\n"
        "            if args.clip_grad:\n"
        "                fp16_scaler.unscale_(optimizer)\n"
        "                clip_gradients(model, args.clip_grad)\n"
        "            fp16_scaler.step(optimizer)\n"
        "            fp16_scaler.update()\n",
        # unscale in both arms of one if
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "if clip_grad is not None:\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(params, clip_grad)\n"
        "else:\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = grad_norm(params)\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        for flow, unscale in scalers.walk("unscale"):
            earlier = self._earlier(flow, unscale)
            if earlier is not None:
                what = "unscale_" if earlier.kind == "unscale" else "step"
                error = (
                    "unscale_() has already been called on this optimizer since the last "
                    "update()." if what == "unscale_" else "unscale_() is being called after step()."
                )
                yield self.report(
                    unscale.node,
                    f"second unscale of `{unscale.arg}`: `{unscale.scaler}.{what}` at line "
                    f"{{first_line}} already ran with no `update()` between; raises "
                    f"'RuntimeError: {error}'; unscale once per step",
                    related={"first_line": earlier.node},
                )
                continue
            update = self._less_often(flow, unscale)
            if update is not None:
                yield self.report(
                    unscale.node,
                    f"`{unscale.scaler}.unscale_` runs on iterations where "
                    f"`{unscale.scaler}.update()` (line {{update_line}}) does not: the next "
                    "one raises 'RuntimeError: unscale_() has already been called on this "
                    "optimizer since the last update().'; unscale under the same condition "
                    "as the step",
                    related={"update_line": update.node},
                )
                continue
            skipped = self._skipped(ctx.module, flow, unscale)
            if skipped is not None:
                update, path, jump = skipped
                yield self.report(
                    unscale.node,
                    f"`{unscale.scaler}.unscale_({unscale.arg})` runs on every pass, but "
                    f"`{unscale.scaler}.update()` (line {{update_line}}) is skipped {path}: "
                    "the next `unscale_` then raises 'RuntimeError: unscale_() has already "
                    "been called on this optimizer since the last update().'; call "
                    f"`{unscale.scaler}.update()` on that path too, or unscale under the same "
                    "condition",
                    related={"update_line": update.node, **({"jump_line": jump} if jump else {})},
                )

    @staticmethod
    def _earlier(flow: Flow, unscale: Event) -> Optional[Event]:
        for prior in flow.of("unscale", "step", scaler=unscale.scaler):
            if prior.order >= unscale.order or prior.arg != unscale.arg:
                continue
            if exclusive(prior, unscale):
                continue
            if prior.loop != unscale.loop:
                continue
            updates = [
                u for u in flow.between(prior, unscale, "update")
                if u.scaler == unscale.scaler and not exclusive(u, unscale)
            ]
            if not updates:
                return prior
        return None

    @staticmethod
    def _skipped(module: cst.Module, flow: Flow, unscale: Event) -> Optional[Tuple]:
        """Unscale then skip: every `update()` after the unscale waits for a test the unscale
        does not (`if not skip_optimizer_step:`), or a `return`/`continue` may leave first.
        The unscale must run whenever the update's enclosing arms outside the gate do (an
        unscale under a test of its own, `if not handles_unscaling and not skip:`, is left
        alone). A test about AMP itself (`if use_amp:`, `if scaler.is_enabled():`) or one whose other
        arm steps the optimizer is a split of paths, not a skip. Code that runs once (a module
        body outside loops) is left alone."""
        loop = unscale.loop
        if loop is None and flow.frame.kind != "function":
            return None
        updates = [
            u for u in flow.of("update", scaler=unscale.scaler)
            if u.order > unscale.order and not exclusive(u, unscale) and u.loop == loop
        ]
        if not updates:
            return None
        path = None
        jump_node = None
        for update in updates:
            if not runs_whenever(unscale, update, loop):
                return None  # the unscale has a test of its own (`if ... and not skip:`)
            found = None
            for branch in gates(update, unscale, loop):
                test = " ".join(module.code_for_node(branch.node.test).split())
                if _AMP_TEST.search(test) or str(unscale.scaler) in test:
                    return None
                if any(
                    e.kind in ("opt_step", "step") and any(
                        c.node is branch.node and getattr(c, "index", 0) != 0 for c in e.ctx
                    ) for e in flow.events
                ):
                    return None
                found = f"on the path where `if {test}:` is not taken"
                break
            if found is None:
                jumps = jumps_between(flow, unscale, update)
                if not jumps:
                    return None  # this update runs whenever the unscale does
                jump = jumps[0]
                for branch in jump.branches(loop):
                    test = " ".join(module.code_for_node(branch.node.test).split()) if isinstance(
                        branch.node, cst.If) else ""
                    if _AMP_TEST.search(test) or str(unscale.scaler) in test:
                        return None
                found = f"when the `{jump.kind}` at line {{jump_line}} runs first"
                jump_node = jump_node or jump.node
            path = path or found
        return (updates[0], path, jump_node) if path is not None else None

    @staticmethod
    def _less_often(flow: Flow, unscale: Event) -> Optional[Event]:
        updates = [
            u for u in flow.of("update", scaler=unscale.scaler) if not exclusive(u, unscale)
        ]
        loop = unscale.loop
        if not updates or loop is None:
            return None
        inside = [u for u in updates if u.inside(loop)]
        if not inside:
            # updates only outside the unscale's loop (an inner micro-step loop)
            after = [u for u in updates if u.order > unscale.order]
            return after[0] if after else None
        for update in inside:
            extra = arms(update, loop) - arms(unscale, loop)
            # an `if <test>:` arm the unscale is not in (`if (i + 1) % k == 0:`); arms that
            # only say an earlier test failed (`elif use_amp:` after `if on_tpu:`) are not
            # taken as accumulation gates
            gated = any(sig[0] == "cond" and sig[2] for sig in extra)
            if not gated and not jumps_between(flow, unscale, update):
                return None
        return inside[0]


_AMP_TEST = re.compile(r"amp|fp16|half|mixed|scaler|precision|float16|enabled", re.IGNORECASE)

