"""AMP120 clip-before-unscale."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.scalers import (
    Event, Flow, exclusive, expr_line, insert_before, jumps_between, parameter_scaler, runs_whenever,
)
from amplint.analysis.facts.scalers import SCALER_TRIGGERS, spans, through_place
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._lightning_clip import manual_clips
from amplint.analysis.rules._util import method_call, region_note


class ClipBeforeUnscale(Rule):
    """## What it does
    Finds gradient clipping — `torch.nn.utils.clip_grad_norm_/clip_grad_value_` under any import
    spelling, `model.clip_grad_norm_(...)` (FSDP), timm's `dispatch_clip_grad`, or a function of
    the same file that clips — after `scaler.scale(loss).backward()` and before
    `scaler.step(optimizer)`, with no `scaler.unscale_(optimizer)` before it.

    Lightning's manual optimization too: `self.clip_gradients(opt, ...)` in a LightningModule
    with `self.automatic_optimization = False`, run under Lightning's float16 mixed precision
    (`Trainer(precision="16-mixed")`, seen by the project pass), outside
    `on_before_optimizer_step`: Lightning unscales only inside `opt.step()`.

    ## Why is this bad?
    Between `scaler.scale(loss).backward()` and `scaler.step(optimizer)` the `.grad`s hold the
    gradients multiplied by the loss scale (65536 at the start). Clipping them applies the
    threshold to the scaled values: the effective `max_norm` becomes `max_norm / scale`, so the
    clip fires on nearly every step and shrinks the update by up to the scale factor (or, with a
    threshold meant for the scaled values, does not act when it should). Nothing is raised; the
    model just trains with wrong steps. The PyTorch AMP examples: "If you wish to modify or inspect
    the parameters' `.grad` attributes between `backward()` and `scaler.step(optimizer)`, you
    should unscale them first", with `scaler.unscale_(optimizer)`. Clipping after `unscale_`,
    in an `enabled=False` scaler's code, or in a separate non-AMP branch is fine.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    ```
    In Lightning's manual optimization, clip where Lightning has unscaled:
    ```python
    def on_before_optimizer_step(self, optimizer):
        self.clip_gradients(optimizer, gradient_clip_val=0.5, gradient_clip_algorithm="norm")
    ```

    ## Fix safety
    **Safe**, when it applies: `scaler.unscale_(optimizer)` is inserted on its own line before
    the clip when that scaler steps exactly one optimizer in the function, the step runs whenever
    the clip runs (same loop, no extra condition on the step, no `continue`/`break`/`return`
    between them), and no other `unscale_` is reachable. Then `unscale_` runs once per step, as
    the recipe does, and `step` skips its own unscaling. With several optimizers, or a clip that
    may run more often than the step (per micro-step of an accumulation loop), inserting it could
    call `unscale_` twice (`RuntimeError`), so the finding is reported without a fix. The
    Lightning case has no fix (the clip moves to another method).
    """

    code = "AMP120"
    name = "clip-before-unscale"
    severity = Severity.WARNING
    fix_safety = "safe"
    triggers = SCALER_TRIGGERS + ("clip_gradients",)

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    # clip\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    # clip\n"
            "    scaler.unscale_(optimizer)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
        Flag(  # scaler on self, alias import, FSDP-style wrapper clip inside a condition
            "from torch.cuda import amp as tamp\n"
            "class Trainer:\n"
            "    def __init__(self, model, opt):\n"
            "        self.scaler = tamp.GradScaler()\n"
            "        self.model, self.opt = model, opt\n"
            "    def train_step(self, batch):\n"
            "        loss = self.model(batch)\n"
            "        self.scaler.scale(loss).backward()\n"
            "        if self.max_norm:\n"
            "            self.model.clip_grad_norm_(self.max_norm)\n"
            "        self.scaler.step(self.opt)\n"
            "        self.scaler.update()\n",
            fixed="from torch.cuda import amp as tamp\n"
            "class Trainer:\n"
            "    def __init__(self, model, opt):\n"
            "        self.scaler = tamp.GradScaler()\n"
            "        self.model, self.opt = model, opt\n"
            "    def train_step(self, batch):\n"
            "        loss = self.model(batch)\n"
            "        self.scaler.scale(loss).backward()\n"
            "        if self.max_norm:\n"
            "            self.scaler.unscale_(self.opt)\n"
            "            self.model.clip_grad_norm_(self.max_norm)\n"
            "        self.scaler.step(self.opt)\n"
            "        self.scaler.update()\n",
        ),
        Flag(  # clip every micro-step, step every k: unscale_ there would run twice, no fix
            "from torch.nn.utils import clip_grad_value_\n"
            "def train(model, loader, opt, scaler, k):\n"
            "    for i, batch in enumerate(loader):\n"
            "        scaler.scale(model(batch) / k).backward()\n"
            "        clip_grad_value_(model.parameters(), 0.5)\n"
            "        if (i + 1) % k == 0:\n"
            "            scaler.step(opt)\n"
            "            scaler.update()\n",
        ),
        Flag(  # two optimizers stepped by the scaler: which to unscale is not ours to pick
            "import torch\n"
            "scaler = torch.cuda.amp.GradScaler()\n"
            "scaler.scale(loss).backward()\n"
            "torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
            "scaler.step(opt_a)\n"
            "scaler.step(opt_b)\n"
            "scaler.update()\n",
        ),
        Flag(  # the clip lives in a mixin's method of the file (composed through the call)
            "import torch\n"
            "class ClipMixin:\n"
            "    def maybe_clip(self):\n"
            "        if self.max_norm:\n"
            "            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)\n"
            "class Trainer(ClipMixin):\n"
            "    def __init__(self):\n"
            "        self.scaler = torch.amp.GradScaler()\n"
            "    def train_step(self, loss):\n"
            "        self.scaler.scale(loss).backward()\n"
            "        self.maybe_clip()\n"
            "        self.scaler.step(self.optimizer)\n"
            "        self.scaler.update()\n",
        ),
        Flag(  # tacotron2-style: the clip is a partial bound once
            "from functools import partial\n"
            "import torch\n"
            "def train(model, x, opt):\n"
            "    clip_grad = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n"
            "    clip_grad(model.parameters())\n"
            "    scaler.step(opt)\n"
            "    scaler.update()\n",
            fixed="from functools import partial\n"
            "import torch\n"
            "def train(model, x, opt):\n"
            "    clip_grad = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(opt)\n"
            "    clip_grad(model.parameters())\n"
            "    scaler.step(opt)\n"
            "    scaler.update()\n",
        ),
    ]
    clean = [
        # the partial bound in a branch (or twice) is unknown: never guessed
        "from functools import partial\n"
        "import torch\n"
        "def train(model, x, opt, cfg):\n"
        "    if cfg.clip:\n"
        "        clip_grad = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)\n"
        "    else:\n"
        "        clip_grad = print\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    scaler.scale(loss).backward()\n"
        "    clip_grad(model.parameters())\n"
        "    scaler.step(opt)\n"
        "    scaler.update()\n",
        # the partial after unscale_
        "from functools import partial\n"
        "import torch\n"
        "clip_grad = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)\n"
        "def train(model, loss, opt, scaler):\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(opt)\n"
        "    clip_grad(model.parameters())\n"
        "    scaler.step(opt)\n"
        "    scaler.update()\n",
        # the documented recipe
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "scaler.unscale_(optimizer)\n"
        "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # nanoGPT: accumulate, then unscale and clip only when clipping is on
        "import torch\n"
        "scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))\n"
        "while True:\n"
        "    for micro_step in range(gradient_accumulation_steps):\n"
        "        with ctx:\n"
        "            logits, loss = model(X, Y)\n"
        "        scaler.scale(loss).backward()\n"
        "    if grad_clip != 0.0:\n"
        "        scaler.unscale_(optimizer)\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # separate AMP and non-AMP branches
        "import torch\n"
        "def step(loss, model, opt, scaler, use_amp):\n"
        "    if use_amp:\n"
        "        scaler.scale(loss).backward()\n"
        "        scaler.unscale_(opt)\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        scaler.step(opt)\n"
        "        scaler.update()\n"
        "    else:\n"
        "        loss.backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        opt.step()\n",
        # timm's NativeScaler call API is not a GradScaler
        "from timm.utils import NativeScaler\n"
        "loss_scaler = NativeScaler()\n"
        "loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())\n",
        # a scaler created disabled scales nothing
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
        "scaler.scale(loss).backward()\n"
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # accelerate's clip_grad_norm_ unscales by itself
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "accelerator.clip_grad_norm_(model.parameters(), 1.0)\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # a GAN: the fp32 generator is clipped and stepped on its own, after the scaler's step
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for real in loader:\n"
        "    g_loss = gen_loss(G, D, real)\n"
        "    g_loss.backward()\n"
        "    torch.nn.utils.clip_grad_norm_(G.parameters(), 1.0)\n"
        "    opt_g.step()\n"
        "    scaler.scale(disc_loss(D, real)).backward()\n"
        "    scaler.step(opt_d)\n"
        "    scaler.update()\n",
        # the mixin's clipping helper unscales first (composed: no second unscale_ wanted)
        "import torch\n"
        "class ClipMixin:\n"
        "    def maybe_clip(self):\n"
        "        self.scaler.unscale_(self.optimizer)\n"
        "        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)\n"
        "class Trainer(ClipMixin):\n"
        "    def __init__(self):\n"
        "        self.scaler = torch.amp.GradScaler()\n"
        "    def train_step(self, loss):\n"
        "        self.scaler.scale(loss).backward()\n"
        "        self.maybe_clip()\n"
        "        self.scaler.step(self.optimizer)\n"
        "        self.scaler.update()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        for flow, clip in scalers.walk("clip", composed=True):
            step = self._hazard(scalers, flow, clip)
            if step is None:
                continue
            scales = [s for s in flow.of("scale", scaler=step.scaler)
                      if s.order < clip.order and not exclusive(s, clip)]
            if not spans(clip, step, *scales[-1:]):
                continue  # all through one call: the callee's own finding
            related = {"step_line": step.inner or step.node}
            where = ""
            if clip.remote is not None:  # in another file, perhaps through a callee of this one
                where = f" (`{clip.remote.text}` at {clip.remote.where}, through this call"
                if clip.origin is not None and clip.inner is not None:
                    where += " and the call at line {clip_line}"
                    related["clip_line"] = clip.inner
                where += ")"
            elif clip.origin is not None and clip.inner is not None:
                where = " (line {clip_line}, through this call)"
                related["clip_line"] = clip.inner
            step_at = "at line {step_line}"
            if step.remote is not None:
                step_at = f"at {step.remote.where}, through the call at line {{step_line}},"
            message = (
                f"gradient clipping{where} of scaled gradients: "
                f"`{{scaler}}.step` {step_at} "
                "follows with no `{scaler}.unscale_(...)` before the clip, so the threshold "
                "applies to gradients multiplied by the loss scale; call "
                "`{scaler}.unscale_(optimizer)` before clipping"
            ).replace("{scaler}", step.scaler or "scaler")
            yield self.report(
                clip.node, message, fix=self._fix(flow, clip, step), related=related,
                through=through_place(clip),
            )
        for site, region in manual_clips(ctx.facts):
            note, related = region_note(region)
            yield self.report(
                site.node,
                f"gradient clipping of scaled gradients in manual optimization under float16 "
                f"mixed precision {note}: Lightning unscales only inside `optimizer.step()` "
                "(lightning/pytorch/plugins/precision/amp.py:108; Lightning issue #18089), so "
                "the threshold applies to gradients multiplied by the loss scale; clip in "
                "`on_before_optimizer_step(self, optimizer)`, which Lightning calls after the "
                "unscale",
                related=related,
            )

    @staticmethod
    def _hazard(scalers, flow: Flow, clip: Event) -> Optional[Event]:
        step = scalers.step_after(flow, clip)
        if step is None:
            return None
        unscales = flow.of("unscale", scaler=step.scaler)
        if any(u.order < clip.order and not exclusive(u, clip) and not _spent(flow, u, clip, step)
               for u in unscales):
            return None
        scales = flow.of("scale", scaler=step.scaler)
        if scales:
            if not any(s.order < clip.order and not exclusive(s, clip) for s in scales):
                return None
        elif scalers.unscaled_anywhere(step.scaler):
            return None  # scaled and unscaled in another function of the file
        elif parameter_scaler(flow, step.scaler):
            return None  # the caller scales, and may unscale, before the call: its flow shows it
        return step

    def _fix(self, flow: Flow, clip: Event, step: Event):
        if clip.origin is not None or step.origin is not None:
            return None  # composed through a call: nothing to edit here
        steps = flow.of("step", scaler=step.scaler)
        if len({s.arg for s in steps}) != 1 or clip.stmt is None:
            return None
        if clip.loop != step.loop or not runs_whenever(step, clip):
            return None
        if jumps_between(flow, clip, step):
            return None
        optimizer = step.node.args[0].value if step.node.args else None  # type: ignore[attr-defined]
        if optimizer is None or step.receiver is None:
            return None
        call = method_call(step.receiver.deep_clone(), "unscale_", [cst.Arg(optimizer.deep_clone())])
        return self.fix(
            Applicability.SAFE, f"Insert `{step.scaler}.unscale_({step.arg})` before the clip",
            insert_before(clip.stmt, expr_line(call)),
        )


def _spent(flow: Flow, unscale: Event, clip: Event, step: Event) -> bool:
    """The unscale is of another optimizer than `step`'s, which steps between it and the clip
    (vits: `unscale_(optim_d)`, clip, `step(optim_d)`, then the generator's clip before
    `step(optim_g)`): it unscaled that optimizer's gradients only, not those the clip reads
    for `step`'s optimizer. An unscale of no named optimizer (a framework's) is never spent."""
    if unscale.arg is None or step.arg is None or unscale.arg == step.arg:
        return False
    return any(s.arg == unscale.arg and not exclusive(s, clip)
               for s in flow.between(unscale, clip, "step") if s.scaler == step.scaler)
