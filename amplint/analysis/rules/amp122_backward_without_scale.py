"""AMP122 backward-without-scale."""

from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.scalers import Event, Flow, arms, deciding_test, exclusive
from amplint.analysis.facts.scalers import SCALER_TRIGGERS, cleared_between, spans, through_place
from amplint.analysis.facts.scaler_flags import other_flag, scaler_flag
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules.amp120_clip_before_unscale import ClipBeforeUnscale
from amplint.analysis.rules._util import method_call

_AMP_GATE = re.compile(r"scaler|amp|fp16|half|float16|mixed|precision", re.I)


class BackwardWithoutScale(Rule):
    """## What it does
    Finds an unscaled `loss.backward()` (or `torch.autograd.backward(loss)`) in a function where
    a GradScaler then steps the optimizer with `scaler.step(optimizer)`.

    ## Why is this bad?
    `scaler.step` expects gradients multiplied by the loss scale. On the first iteration, before
    any `scaler.scale(...)` call, it raises
    `AssertionError: Attempted step but _scale is None.  This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.`
    Once the scaler has a scale, `step` divides the unscaled gradients by it (65536 at the
    start): the update all but vanishes, silently, and fp16 gradients underflow without the
    scale. Not reported: a separate non-AMP branch (`if use_amp: scaler.scale(loss).backward()
    else: loss.backward()`), a `backward` whose gradients a plain `optimizer.step()` consumes
    before the scaler's step (a GAN's fp32 half), one whose gradients the stepped optimizer's
    `zero_grad()` clears first (a dry run for OOM before training), and a scaler created with
    `enabled=False`.

    The non-AMP branch is one only when it may be the scaler's own switch. A scaler created
    with `enabled=args.amp` in an arm chosen by another flag of the same object (`if args.fp16:
    scaler.scale(loss).backward() else: loss.backward()`) is on while the plain arm runs
    (`--amp` without `--fp16`): that is reported, also when the scaler and the object reach
    the function as parameters from another file (`train(args, ..., scaler)`: the project pass
    delivers the caller's flag). Flags stored anywhere (`args.fp16 = args.amp`,
    `setattr(args, ...)`) are not told apart.

    ## Example
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
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
    ```

    ## Fix safety
    **Safe**, when one scaler steps in the function, the backward is a `.backward(...)` method
    call that runs under the same conditions as the step (not in a branch of its own, so never in
    a non-AMP branch), no condition on the step tests AMP or the scaler, and the scaler cannot be
    `None` there: `loss.backward(...)` becomes `scaler.scale(loss).backward(...)`. A gradient
    clip between the backward and the step is unscaled in the same fix
    (`scaler.unscale_(optimizer)` inserted before it, as AMP120's fix does); where AMP120 could
    not insert it safely, there is no fix. A disabled
    scaler's `scale` returns the loss unchanged, so fp32 runs are unaffected. Otherwise the
    finding is reported without a fix.
    """

    code = "AMP122"
    name = "backward-without-scale"
    severity = Severity.ERROR
    fix_safety = "safe"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(  # a clip follows: the same fix unscales before it
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x).mean()\n"
            "    loss.backward()\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x).mean()\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    loss.backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
        Flag(  # a scaler parameter, accumulation with an early continue, a divided loss
            "def train(model, loader, optimizer, scaler, accum):\n"
            "    for i, batch in enumerate(loader):\n"
            "        loss = model(**batch).loss\n"
            "        (loss / accum).backward(retain_graph=False)\n"
            "        if (i + 1) % accum != 0:\n"
            "            continue\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
            fixed="def train(model, loader, optimizer, scaler, accum):\n"
            "    for i, batch in enumerate(loader):\n"
            "        loss = model(**batch).loss\n"
            "        scaler.scale(loss / accum).backward(retain_graph=False)\n"
            "        if (i + 1) % accum != 0:\n"
            "            continue\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
        Flag(  # the step only when a scaler exists: the fix would call scale on None
            "import torch\n"
            "def step(loss, optimizer, scaler=None):\n"
            "    loss.backward()\n"
            "    if scaler is not None:\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n"
            "    else:\n"
            "        optimizer.step()\n",
        ),
        Flag(  # the scaler is on with --amp, the plain arm runs without --fp16: two flags
            "import torch\n"
            "def train(args, model, loader, optimizer):\n"
            "    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
            "    for x, y in loader:\n"
            "        with torch.autocast('cuda', enabled=args.amp):\n"
            "            loss = model(x, y)\n"
            "        if args.fp16:\n"
            "            scaler.scale(loss).backward()\n"
            "        else:\n"
            "            loss.backward()\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
        Flag(  # an auxiliary loss left unscaled next to a scaled one
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "scaler.scale(main_loss).backward(retain_graph=True)\n"
            "torch.autograd.backward(aux_loss)\n"
            "scaler.step(opt)\n"
            "scaler.update()\n",
        ),
    ]
    clean = [
        # the second flag is set from the first through another name for the same object
        "import torch\n"
        "def normalize(opts):\n"
        "    opts.fp16 = opts.fp16 or opts.amp\n"
        "def train(args, model, loader, optimizer):\n"
        "    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
        "    for x, y in loader:\n"
        "        with torch.autocast('cuda', enabled=args.amp):\n"
        "            loss = model(x, y)\n"
        "        if args.fp16:\n"
        "            scaler.scale(loss).backward()\n"
        "        else:\n"
        "            loss.backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the second flag is a property computed from the first
        "import torch\nfrom dataclasses import dataclass\n"
        "@dataclass\n"
        "class Config:\n"
        "    amp: bool = False\n"
        "    @property\n"
        "    def fp16(self):\n"
        "        return self.amp\n"
        "def train(cfg, model, loader, optimizer):\n"
        "    scaler = torch.amp.GradScaler('cuda', enabled=cfg.amp)\n"
        "    for x, y in loader:\n"
        "        with torch.autocast('cuda', enabled=cfg.amp):\n"
        "            loss = model(x, y)\n"
        "        if cfg.fp16:\n"
        "            scaler.scale(loss).backward()\n"
        "        else:\n"
        "            loss.backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the documented recipe
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    with torch.autocast('cuda'):\n"
        "        loss = loss_fn(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # separate AMP and non-AMP branches, tested twice
        "import torch\n"
        "def train_step(model, batch, optimizer, scaler=None):\n"
        "    loss = model(batch)\n"
        "    if scaler is not None:\n"
        "        scaler.scale(loss).backward()\n"
        "    else:\n"
        "        loss.backward()\n"
        "    if scaler is None:\n"
        "        optimizer.step()\n"
        "    else:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the arm is chosen by the scaler's own flag
        "import torch\n"
        "def train(args, model, loader, optimizer):\n"
        "    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
        "    for x, y in loader:\n"
        "        if args.amp:\n"
        "            scaler.scale(model(x, y)).backward()\n"
        "        else:\n"
        "            model(x, y).backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # two flags, but one is set from the other: one value
        "import torch\n"
        "def train(args, model, loader, optimizer):\n"
        "    args.fp16 = args.amp\n"
        "    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
        "    for x, y in loader:\n"
        "        if args.fp16:\n"
        "            scaler.scale(model(x, y)).backward()\n"
        "        else:\n"
        "            model(x, y).backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the loss scaled into a name first; gradient penalty through autograd.grad
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "grads = torch.autograd.grad(scaler.scale(loss), model.parameters(), create_graph=True)\n"
        "scaled = scaler.scale(loss + penalty(grads))\n"
        "scaled.backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # a GAN: the fp32 generator's backward is consumed by its own optimizer first
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for real in loader:\n"
        "    g_loss = gen_loss(G, D, real)\n"
        "    g_loss.backward()\n"
        "    opt_g.step()\n"
        "    scaler.scale(disc_loss(D, real)).backward()\n"
        "    scaler.step(opt_d)\n"
        "    scaler.update()\n",
        # a dry run for OOM: its plain backward's gradients are cleared before training
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "model(batch).sum().backward()\n"
        "optimizer.zero_grad()\n"
        "for x in loader:\n"
        "    scaler.scale(model(x).sum()).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # accelerate / deepspeed backward take the loss as an argument
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "accelerator.backward(loss)\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # a disabled scaler passes plain gradients through
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
        "loss.backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n",
        # a helper with a scaler of its own, called twice: each call has a fresh scaler, so
        # the first call's trailing plain backward does not feed the second call's step
        "import torch\n"
        "def run(model, loader, opt, use_amp):\n"
        "    scaler = torch.amp.GradScaler(enabled=use_amp)\n"
        "    for x in loader:\n"
        "        scaler.scale(model(x)).backward()\n"
        "        scaler.step(opt)\n"
        "        scaler.update()\n"
        "    model(x).sum().backward()\n"
        "def compare(model, loader, opt):\n"
        "    run(model, loader, opt, True)\n"
        "    run(model, loader, opt, False)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        for flow, backward in scalers.walk("backward", composed=True):
            found = self._hazard(scalers, flow, backward)
            if found is None or not spans(backward, found[0]):
                continue
            step, why = found
            scaler = step.scaler
            related = {"step_line": step.node}
            where = ""
            if backward.remote is not None:  # the backward of another file's callee: name it
                where = f" (at {backward.remote.where}, through this call)"
            elif backward.origin is not None and backward.inner is not None:
                where = " (line {backward_line}, through this call)"
                related["backward_line"] = backward.inner
            step_at = "at line {step_line}"
            if step.remote is not None:
                step_at = f"at {step.remote.where}, through the call at line {{step_line}},"
            elif step.inner is not None:
                step_at = "at line {step_inner}, through the call at line {step_line},"
                related["step_inner"] = step.inner
            # an `unscale_` of the scaler on the way to the step raises first
            first = "unscale_" if any(
                u.scaler == scaler and not exclusive(u, backward) and not exclusive(u, step)
                for u in flow.between(backward, step, "unscale")) else "step"
            message = (
                f"backward of an unscaled loss{where}, but `{scaler}.step` {step_at} "
                f"steps the optimizer{why}: the first {first} raises 'AssertionError: Attempted "
                f"{first} but _scale is None.', later ones divide these gradients by the loss "
                f"scale; use `{scaler}.scale(loss).backward()`"
            )
            yield self.report(
                backward.node, message, fix=self._fix(scalers, flow, backward, step),
                related=related, through=through_place(backward),
            )

    @staticmethod
    def _hazard(scalers, flow: Flow, backward: Event) -> Optional[Tuple[Event, str]]:
        step = scalers.step_after(flow, backward)
        if step is None or _all_cleared(flow, backward):
            return None
        # a scaled backward in the other arm: this is the non-AMP branch, unless that arm is
        # chosen by another flag than the one the scaler is enabled by (scaler_flags.py)
        others = [s for s in flow.of("scale", scaler=step.scaler) if exclusive(s, backward)]
        if not others:
            return step, ""
        flag = scaler_flag(scalers, step.scaler)
        tests = {deciding_test(s, backward) for s in others} if flag is not None else {None}
        if None in tests or len(tests) != 1:
            return None
        tested = other_flag(scalers, flag, tests.pop(), flow.frame)
        if tested is None:
            return None
        source = f" passed by the call at {flag.cite}" if flag.cite else ""
        return step, (
            f" (the scaler{source} is enabled by `{flag.text}`, but this arm is chosen by "
            f"`{tested}`, another flag of the same object: with `{flag.text}` on, it runs with "
            "the scaler enabled)"
        )

    def _fix(self, scalers, flow: Flow, backward: Event, step: Event):
        if backward.origin is not None or step.origin is not None:
            return None  # composed through a call: nothing to edit here
        if len(flow.stepping_scalers) != 1 or step.receiver is None:
            return None
        call = backward.node
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return None
        if call.func.attr.value != "backward" or backward.arg is None:
            return None  # `torch.autograd.backward(loss)`: reported, not rewritten
        info = scalers.info(step.scaler)
        if info is None or info.maybe_none:
            return None
        if arms(backward) != arms(step) - self._plain_arms(step, backward):
            return None
        receiver = call.func.value
        if receiver.lpar:  # `(loss / k).backward()` -> `scaler.scale(loss / k).backward()`
            receiver = receiver.with_changes(lpar=[], rpar=[])
        scaled = method_call(step.receiver.deep_clone(), "scale", [cst.Arg(receiver)])
        new = call.with_changes(func=call.func.with_changes(value=scaled))
        edits = {call: new}
        # A clip between this backward and the step would then clip scaled gradients (AMP120):
        # the same fix unscales before it, so one fix round does the whole change.
        for clip in flow.of("clip"):
            if not backward.order < clip.order < step.order or exclusive(clip, backward):
                continue
            if any(backward.order < u.order < clip.order and not exclusive(u, clip)
                   for u in flow.of("unscale", scaler=step.scaler)):
                continue
            unscale = ClipBeforeUnscale()._fix(flow, clip, step)
            if unscale is None:
                return None  # the clip would need an unscale_ that cannot be inserted safely
            edits.update(unscale.edits)
        message = f"Scale the loss: `{step.scaler}.scale(...).backward()`"
        if len(edits) > 1:
            message += f", and `{step.scaler}.unscale_(...)` before the clip"
        return self.fix(Applicability.SAFE, message, edits)

    @staticmethod
    def _plain_arms(step: Event, backward: Event):
        """The arms around the step but not the backward whose condition is not about AMP
        (`if (i + 1) % k == 0:`): the backward may run more often than the step there."""
        extra = set()
        for branch in step.branches():
            if branch in backward.branches():
                continue
            text = branch.cond or ""
            if branch.cond is not None and not _AMP_GATE.search(text) and step.scaler not in text:
                extra.add(("cond", branch.cond, branch.positive))
        return extra


def _all_cleared(flow: Flow, backward: Event) -> bool:
    """Every `scaler.step` that may follow the backward on its pass steps an optimizer whose
    `zero_grad()` clears these gradients first (scaler_paths.cleared_between)."""
    steps = [s for s in flow.of("step") if s.order > backward.order and not exclusive(s, backward)]
    return all(cleared_between(flow, backward, step, step.arg) for step in steps)
