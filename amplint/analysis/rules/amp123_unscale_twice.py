"""AMP123 unscale-twice."""

from __future__ import annotations

from typing import Iterable, Optional

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.scalers import (
    Event, Flow, exclusive, jumps_between, runs_whenever, spans, through_place,
)
from amplint.analysis.rules._unscale_paths import less_often, skipped as skipped_update
from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._framework_unscale import framework_double_unscales


class UnscaleTwice(Rule):
    """## What it does
    Finds a second `scaler.unscale_(optimizer)` of the same optimizer before `scaler.update()`
    (also after that optimizer's `scaler.step`), and an `unscale_` that runs more often than
    the scaler's `update()`: every micro-step of a gradient-accumulation loop whose `step` and
    `update` run only every k-th iteration (or after the inner loop).

    Framework calls count as unscales (amplint.analysis.data.scaler_vocab): accelerate's
    `accelerator.unscale_gradients(opt)` unscales `opt`, and `accelerator.clip_grad_norm_` /
    `clip_grad_value_` unscale every prepared optimizer first, so an `unscale_gradients` (in the
    loop or in a helper of the file it calls) followed by `clip_grad_norm_` before the
    optimizer's `step()` unscales twice.

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
        Flag(  # each optimizer unscaled on every batch, the update only after the epoch
            "import torch\n"
            "def fit(model, loader, optimizers, scaler):\n"
            "    for x in loader:\n"
            "        scaler.scale(model(x)).backward()\n"
            "        for optimizer in optimizers:\n"
            "            scaler.unscale_(optimizer)\n"
            "            scaler.step(optimizer)\n"
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
        Flag(  # accelerate: unscale_gradients, then clip_grad_norm_ unscales again
            "from accelerate import Accelerator\n"
            "accelerator = Accelerator(mixed_precision='fp16')\n"
            "for batch in loader:\n"
            "    accelerator.backward(model(batch))\n"
            "    accelerator.unscale_gradients(optimizer=optimizer)\n"
            "    accelerator.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n",
        ),
        Flag(  # accelerate: the first unscale in a helper of the file
            "from accelerate import Accelerator\n"
            "def grad_norm(accelerator, model, optimizer):\n"
            "    accelerator.unscale_gradients(optimizer)\n"
            "    return sum(p.grad.norm() for p in model.parameters())\n"
            "def train(accelerator, model, optimizer, loader):\n"
            "    for batch in loader:\n"
            "        accelerator.backward(model(batch))\n"
            "        norm = grad_norm(accelerator, model, optimizer)\n"
            "        accelerator.clip_grad_value_(model.parameters(), 1.0)\n"
            "        optimizer.step()\n",
        ),
        Flag(  # minGPT-style: a helper given the scaler unscales a second time
            "import torch\n"
            "def grad_norm_callback(scaler, optimizer):\n"
            "    scaler.unscale_(optimizer)\n"
            "def run(model, x, optimizer):\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    grad_norm_callback(scaler, optimizer)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
    ]
    clean = [
        # several optimizers unscaled in a loop over them, then one update (each once)
        "import torch\n"
        "def step_all(model, x, optimizers, scaler):\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for optimizer in optimizers:\n"
        "        scaler.unscale_(optimizer)\n"
        "    for optimizer in optimizers:\n"
        "        scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # the helper is the only unscale; or it gets another optimizer
        "import torch\n"
        "def grad_norm_callback(scaler, optimizer):\n"
        "    scaler.unscale_(optimizer)\n"
        "def run(model, x, opt_a, opt_b):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    scaler.scale(model(x)).backward()\n"
        "    scaler.unscale_(opt_a)\n"
        "    grad_norm_callback(scaler, opt_b)\n"
        "    scaler.step(opt_a)\n"
        "    scaler.step(opt_b)\n"
        "    scaler.update()\n",
        "import torch\n"
        "def grad_norm_callback(scaler, optimizer):\n"
        "    scaler.unscale_(optimizer)\n"
        "def run(model, x, optimizer):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    scaler.scale(model(x)).backward()\n"
        "    grad_norm_callback(scaler, optimizer)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # accelerate's documented loop: clip_grad_norm_ unscales once per step
        "from accelerate import Accelerator\n"
        "accelerator = Accelerator(mixed_precision='fp16')\n"
        "for batch in loader:\n"
        "    accelerator.backward(model(batch))\n"
        "    if accelerator.sync_gradients:\n"
        "        accelerator.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n",
        # a GAN: each clip_grad_norm_ is followed by its optimizer's step
        "from accelerate import Accelerator\n"
        "def train(accelerator, g, d, opt_g, opt_d, batch):\n"
        "    accelerator.backward(d_loss(d, g, batch))\n"
        "    accelerator.clip_grad_norm_(d.parameters(), 1.0)\n"
        "    opt_d.step()\n"
        "    accelerator.backward(g_loss(d, g, batch))\n"
        "    accelerator.clip_grad_norm_(g.parameters(), 1.0)\n"
        "    opt_g.step()\n",
        # two optimizers, each unscaled once by name
        "from accelerate import Accelerator\n"
        "accelerator.backward(loss)\n"
        "accelerator.unscale_gradients(opt_a)\n"
        "accelerator.unscale_gradients(opt_b)\n"
        "opt_a.step()\n"
        "opt_b.step()\n",
        # the branch that unscales returns before the clip
        "from accelerate import Accelerator\n"
        "def clip(accelerator, model, optimizer, log_only):\n"
        "    if log_only:\n"
        "        accelerator.unscale_gradients(optimizer)\n"
        "        return grad_norm(model)\n"
        "    return accelerator.clip_grad_norm_(model.parameters(), 1.0)\n",
        # transformers' Trainer: the second clip runs only when the first did not
        "from accelerate import Accelerator\n"
        "class Trainer:\n"
        "    def _clip_grad_norm(self, model):\n"
        "        return self.accelerator.clip_grad_norm_(model.parameters(), self.max_norm)\n"
        "    def _get_grad_norm(self, model, grad_norm=None):\n"
        "        if grad_norm is None:\n"
        "            grad_norm = self.accelerator.clip_grad_norm_(\n"
        "                model.parameters(), float('inf'))\n"
        "        return grad_norm\n"
        "    def step(self, model):\n"
        "        # accelerate's GradScaler unscales inside clip_grad_norm_\n"
        "        grad_norm = None\n"
        "        if self.max_norm > 0:\n"
        "            grad_norm = self._clip_grad_norm(model)\n"
        "        grad_norm = self._get_grad_norm(model, grad_norm=grad_norm)\n"
        "        self.optimizer.step()\n",
        # not accelerate's: a file that does not import it, a method of another object
        "def clip(trainer, model):\n"
        "    trainer.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    trainer.clip_grad_norm_(model.parameters(), 1.0)\n",
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
        yield from framework_double_unscales(self, ctx.module, scalers)
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
            update = less_often(flow, unscale)
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
            skipped = skipped_update(ctx.module, flow, unscale)
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
        yield from self._through_calls(scalers)

    def _through_calls(self, scalers) -> Iterable[Diagnostic]:
        """A second unscale that comes through a call of a same-file helper given the scaler
        (`cb(scaler, optimizer)` whose body unscales): the composed flows (scaler_protocol)."""
        for flow, unscale in scalers.walk("unscale", composed=True):
            earlier = self._earlier(flow, unscale)
            if earlier is None or (earlier.origin is None and unscale.origin is None):
                continue
            if not spans(earlier, unscale):
                continue  # both inside one callee: reported there
            what = "unscale_" if earlier.kind == "unscale" else "step"
            error = (
                "unscale_() has already been called on this optimizer since the last "
                "update()." if what == "unscale_" else "unscale_() is being called after step()."
            )
            through = " (line {inner_line}, through this call)" if unscale.inner is not None else ""
            if unscale.remote is not None:  # the second unscale is in another file's callee
                through = f" (`{unscale.remote.text}` at {unscale.remote.where}, through this call)"
            first = "at line {first_line}" + (
                ", through the call at line {call_line}," if earlier.origin is not None else ""
            )
            related = {"first_line": earlier.inner or earlier.node}
            if earlier.remote is not None:
                first = f"at {earlier.remote.where}, through the call at line {{first_line}},"
                related = {"first_line": earlier.node}
            elif earlier.origin is not None:
                related["call_line"] = earlier.node
            if unscale.inner is not None and unscale.remote is None:
                related["inner_line"] = unscale.inner
            yield self.report(
                unscale.node,
                f"second unscale of `{unscale.arg}`{through}: `{unscale.scaler}.{what}` {first} "
                f"already ran with no `update()` between; raises 'RuntimeError: {error}'; "
                "unscale once per step",
                related=related,
                through=through_place(unscale),
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
            if any(runs_whenever(j, prior) for j in jumps_between(flow, prior, unscale)):
                continue  # `scaler.step(opt); return` in one arm, the unscale after the `if`
            updates = [
                u for u in flow.between(prior, unscale, "update")
                if u.scaler == unscale.scaler and not exclusive(u, unscale)
            ]
            if not updates:
                return prior
        return None
