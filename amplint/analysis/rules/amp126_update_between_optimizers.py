"""AMP126 update-between-optimizers."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.returned_values import known_length, loop_source
from amplint.analysis.facts.scaler_flow import key_text
from amplint.analysis.facts.scaler_paths import picked_per_iteration
from amplint.analysis.facts.scalers import Event, Flow, exclusive, runs_whenever, spans, through_place
from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.facts.tree import iter_nodes
from amplint.analysis.rules import Flag, Rule


class UpdateBetweenOptimizers(Rule):
    """## What it does
    Finds `scaler.update()` between the `scaler.step` calls of two optimizers whose gradients
    came from the same scaled backward, `scaler.update()` inside a loop that steps each optimizer
    of a list or tuple of at least two (a display of distinct names, or one a project function
    of another file returns), or each optimizer a display of two keys or more picks
    (`for key in ("enc", "dec"): scaler.step(optimizers[key])`, also through a method stepping
    `self.optimizers[key]` for the key the call passes, StyleTTS2's `MultiOptimizer.step(key)`), and two GradScalers that both scale losses before either steps
    (one scaler per optimizer, interleaved in one iteration). Steps and updates count through
    the helpers a call runs, in the file or another (`scaler_step(scaler, opt)` that steps and
    updates, called once per optimizer).

    ## Why is this bad?
    `update()` may change the scale (halve it after an inf, double it after `growth_interval`
    clean steps) and forgets the first optimizer's inf checks. The second optimizer's gradients
    were multiplied by the old scale but `step` unscales them with the new one, so its update is
    off by a factor of 2 (or 0.5) on those iterations, silently. The AMP examples: "If your
    network has multiple losses ... you should call `update` only once per iteration, after all
    optimizers used this iteration have been stepped", and "a single scaler should serve all".
    With two interleaved scalers, parameters reached by both losses accumulate gradients scaled
    by two different factors that neither scaler can undo. Not reported: a fresh
    `scaler.scale(...).backward()` after the update (a GAN that updates once per network, the
    scale is then consistent), and two scalers used one after the other.

    ## Example
    ```python
    scaler.scale(loss).backward()
    scaler.step(opt_encoder)
    scaler.update()
    scaler.step(opt_decoder)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.step(opt_encoder)
    scaler.step(opt_decoder)
    scaler.update()
    ```

    ## Fix safety
    **Suggestion** only: removing an `update()` (or a scaler) moves code the rest of the loop
    may depend on (logging `scaler.get_scale()`, checkpointing each scaler's state).
    """

    code = "AMP126"
    name = "update-between-optimizers"
    severity = Severity.WARNING
    fix_safety = "suggestion"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for batch in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = decoder(encoder(batch))\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(opt_encoder)\n"
            "    scaler.update()\n"
            "    scaler.step(opt_decoder)\n"
            "    scaler.update()\n",
        ),
        Flag(  # one scaler per optimizer, both losses scaled before either steps
            "import torch\n"
            "class MultiTask:\n"
            "    def __init__(self):\n"
            "        self.scaler_a = torch.amp.GradScaler('cuda')\n"
            "        self.scaler_b = torch.amp.GradScaler('cuda')\n"
            "    def step(self, loss_a, loss_b):\n"
            "        self.scaler_a.scale(loss_a).backward(retain_graph=True)\n"
            "        self.scaler_b.scale(loss_b).backward()\n"
            "        self.scaler_a.step(self.opt_a)\n"
            "        self.scaler_b.step(self.opt_b)\n"
            "        self.scaler_a.update()\n"
            "        self.scaler_b.update()\n",
        ),
        Flag(  # a loop over a list of two optimizers, the update inside it
            "import torch\n"
            "def train(model, x, opt_dense, opt_sparse):\n"
            "    optimizers = [opt_dense, opt_sparse]\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n"
            "    for optimizer in optimizers:\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n",
        ),
        Flag(  # a loop over two keys picking the optimizers, the update inside it
            "import torch\n"
            "def train(model, x, optimizers):\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    scaler.scale(model(x)).backward()\n"
            "    for key in ('encoder', 'decoder'):\n"
            "        scaler.step(optimizers[key])\n"
            "        scaler.update()\n",
        ),
        Flag(  # a helper that steps and updates, called once per optimizer after both backwards
            "import torch\n"
            "def scaler_step(scaler, optimizer):\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "def train(gen_loss, disc_loss, opt_g, opt_d):\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    scaler.scale(gen_loss).backward()\n"
            "    scaler.scale(disc_loss).backward()\n"
            "    scaler_step(scaler, opt_d)\n"
            "    scaler_step(scaler, opt_g)\n",
        ),
    ]
    clean = [
        # the helper's update behind its own flag, turned off for the first optimizer
        "import torch\n"
        "def scaler_step(scaler, optimizer, update=True):\n"
        "    scaler.step(optimizer)\n"
        "    if update:\n"
        "        scaler.update()\n"
        "def train(gen_loss, disc_loss, opt_g, opt_d):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    scaler.scale(gen_loss).backward()\n"
        "    scaler.scale(disc_loss).backward()\n"
        "    scaler_step(scaler, opt_d, update=False)\n"
        "    scaler_step(scaler, opt_g)\n",
        # the same loop, one update after it
        "import torch\n"
        "def train(model, x, opt_dense, opt_sparse):\n"
        "    optimizers = [opt_dense, opt_sparse]\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for optimizer in optimizers:\n"
        "        scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # a list of unknown length (a parameter: one optimizer is fine), never guessed
        "import torch\n"
        "def train(model, x, optimizers, scaler):\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for optimizer in optimizers:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the list may shrink before the loop
        "import torch\n"
        "def train(model, x, opt_a, opt_b, scaler, frozen):\n"
        "    optimizers = [opt_a, opt_b]\n"
        "    if frozen:\n"
        "        optimizers.pop()\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for optimizer in optimizers:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # each optimizer's own loss scaled inside the loop (the scale is consistent)
        "import torch\n"
        "def train(model, x, opt_a, opt_b, scaler):\n"
        "    for optimizer, head in [(opt_a, model.a), (opt_b, model.b)]:\n"
        "        scaler.scale(head(x)).backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        "import torch\n"
        "def train(model, x, opt_a, opt_b, scaler):\n"
        "    for optimizer in (opt_a, opt_b):\n"
        "        scaler.scale(model(x)).backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n",
        # the multiple-optimizers recipe: one update after all steps
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss0).backward(retain_graph=True)\n"
        "scaler.scale(loss1).backward()\n"
        "scaler.unscale_(optimizer0)\n"
        "scaler.step(optimizer0)\n"
        "scaler.step(optimizer1)\n"
        "scaler.update()\n",
        # a GAN with one scaler: each network's loss scaled after the previous update
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for real in loader:\n"
        "    with torch.autocast('cuda'):\n"
        "        d_loss = disc_loss(D, G, real)\n"
        "    scaler.scale(d_loss).backward()\n"
        "    scaler.step(opt_d)\n"
        "    scaler.update()\n"
        "    with torch.autocast('cuda'):\n"
        "        g_loss = gen_loss(D, G, real)\n"
        "    scaler.scale(g_loss).backward()\n"
        "    scaler.step(opt_g)\n"
        "    scaler.update()\n",
        # a GAN with one scaler per network, used one after the other
        "import torch\n"
        "scaler_d = torch.amp.GradScaler('cuda')\n"
        "scaler_g = torch.amp.GradScaler('cuda')\n"
        "for real in loader:\n"
        "    scaler_d.scale(disc_loss(D, G, real)).backward()\n"
        "    scaler_d.step(opt_d)\n"
        "    scaler_d.update()\n"
        "    scaler_g.scale(gen_loss(D, G, real)).backward()\n"
        "    scaler_g.step(opt_g)\n"
        "    scaler_g.update()\n",
        # the same optimizer in alternative arms
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "scaler.scale(loss).backward()\n"
        "if phase == 'warmup':\n"
        "    scaler.step(head_opt)\n"
        "else:\n"
        "    scaler.step(full_opt)\n"
        "scaler.update()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        for flow, scaler in scalers.stepping(composed=True):
            found = self._update_between(flow, scaler)
            if found is not None:
                first, update, second = found
                related = {**_lines(first, "first"), **_lines(second, "second"),
                           **_lines(update, "update")}
                yield self.report(
                    update.node,
                    f"`{scaler}.update()`{_through(update, 'update', True)} between the steps of "
                    f"`{first.arg}` ({_at(first, 'first')}) and `{second.arg}` ({_at(second, 'second')}): "
                    "the second is unscaled with a scale its gradients were not scaled by; update "
                    "once, after the last step",
                    related=related, through=through_place(update),
                )
        for flow, scaler in scalers.stepping(composed=True):
            for step, update, loop, count in self._loop_updates(ctx, flow, scaler):
                source = loop_source(loop.node.iter, flow.frame)
                yield self.report(
                    update.node,
                    f"`{scaler}.update()`{_through(update, 'update', True)} inside the loop that "
                    f"steps each of the {count} optimizers of `{_text(scalers, loop.node.iter)}`{source} "
                    f"(`{scaler}.step` at {_at(step, 'step')}): from the second one on, an "
                    "optimizer is unscaled with a scale its gradients were not scaled by; update "
                    "once, after the loop",
                    related={**_lines(step, "step"), **_lines(update, "update")},
                    through=through_place(update),
                )
        for flow in scalers.flows:
            yield from self._interleaved(scalers, flow)

    @staticmethod
    def _loop_updates(ctx, flow: Flow, scaler):
        """`for opt in opts: scaler.step(opt); scaler.update()` over a container of at least two
        optimizers written differently (facts/returned_values.py `known_length`: a display, a
        local bound once to one, or a project function's returned display), or over two keys
        or more that pick them (`for key in ("enc", "dec"): scaler.step(opts[key])`, or a call
        passing the key to a method stepping `self.optimizers[key]`: scaler_paths
        `picked_per_iteration`), no scale, jump or
        condition around the step and update inside the loop. The step and the update may both
        come through one call in the loop (`for opt in (opt_g, opt_d): step_and_update(scaler,
        opt)`), never through a loop of the callee's own."""
        for step in flow.of("step", scaler=scaler):
            loop = step.loop
            if loop is None or not isinstance(loop.node, cst.For):
                continue
            if step.origin is not None and not _holds(loop.node, step.origin):
                continue  # the helper's own loop: its own finding
            if not picked_per_iteration(loop.node, step) or step.conditional(loop):
                continue
            inside = [e for e in flow.events if e.inside(loop) and e is not step]
            if any(e.kind in ("break", "continue", "return", "raise") for e in inside):
                continue
            if any(e.kind == "scale" and e.scaler == scaler for e in inside):
                continue
            updates = [u for u in inside if u.kind == "update" and u.scaler == scaler
                       and u.order > step.order and u.loop == loop and not u.conditional(loop)
                       and (u.origin is None or u.origin is step.origin)]
            if not updates:
                continue
            count = known_length(loop.node.iter, flow.frame, ctx.facts.tree)
            if count >= 2:
                yield step, updates[0], loop, count

    @staticmethod
    def _update_between(flow: Flow, scaler) -> Optional[Tuple[Event, Event, Event]]:
        """The first (step, update, step) of two optimizers with no scale between the update
        and the second step. Events composed through calls of helpers (scaler_protocol.py:
        `scaler_step(scaler, opt)` that steps and updates, called once per optimizer) count when
        the three do not all come through one call (that one is the helper's own finding), and
        an update that comes through a call only where it runs whenever one of the steps does
        (never one behind a test of the helper's own: `if update_scaler:`)."""
        steps = flow.of("step", scaler=scaler)
        for i, first in enumerate(steps):
            for second in steps[i + 1:]:
                if second.arg == first.arg or exclusive(first, second):
                    continue
                if first.loop != second.loop:
                    continue
                updates = [
                    u for u in flow.between(first, second, "update")
                    if u.scaler == scaler and not exclusive(u, first) and not exclusive(u, second)
                    and (u.origin is None or runs_whenever(u, first) or runs_whenever(u, second))
                ]
                if not updates or not spans(first, updates[0], second):
                    continue
                rescaled = [
                    s for s in flow.between(updates[0], second, "scale")
                    if s.scaler == scaler and not exclusive(s, second)
                ]
                if not rescaled:
                    return first, updates[0], second
        return None

    def _interleaved(self, scalers, flow: Flow) -> Iterable[Diagnostic]:
        stepping = [s for s in flow.stepping_scalers if scalers.live(s)]
        if len(stepping) < 2:
            return
        steps = flow.of("step")
        first_step = steps[0]
        scaled_before = []
        for scale in flow.of("scale"):
            if scale.order > first_step.order or not scale.backward:
                continue
            if scale.scaler in stepping and scale.loop == first_step.loop:
                if not exclusive(scale, first_step) and scale.scaler not in [
                    s.scaler for s in scaled_before
                ]:
                    scaled_before.append(scale)
        if len(scaled_before) >= 2:
            a, b = scaled_before[0], scaled_before[1]
            yield self.report(
                b.node,
                f"a second GradScaler: `{a.scaler}` (line {{first_line}}) and `{b.scaler}` both "
                "scale backward passes before either steps; gradients of shared parameters mix "
                "two scales. Use one scaler for all losses and optimizers, one `update()`",
                related={"first_line": a.node},
            )


def _through(event: Event, what: str, here: bool = False) -> str:
    """" (line 12, through this call)" / " (utils.py:47, through this call)" for an event
    composed through a call (`here`: the call the finding is reported at)."""
    call = "this call" if here else f"the call at line {{{what}_call}}"
    if event.remote is not None:
        return f" ({event.remote.where}, through {call})"
    if event.origin is None or event.inner is None:
        return ""
    return f" (line {{{what}_inner}}, through {call})"


def _at(event: Event, what: str) -> str:
    """Where a step is: "line 12", or where in the callee and through which call."""
    return _through(event, what).strip()[1:-1] or f"line {{{what}_line}}"


def _text(scalers, expr: cst.BaseExpression) -> str:
    return key_text(expr) or " ".join(scalers.module.code_for_node(expr).split())


def _lines(event: Event, what: str):
    if event.remote is not None:
        return {f"{what}_call": event.origin}
    if event.origin is None or event.inner is None:
        return {f"{what}_line": event.node}
    return {f"{what}_inner": event.inner, f"{what}_call": event.origin}


def _holds(loop: cst.CSTNode, call: cst.CSTNode) -> bool:
    """The call is written inside the loop statement (the caller's loop, not the callee's)."""
    return any(node is call for node in iter_nodes(loop))
