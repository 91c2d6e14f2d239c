"""AMP121 scaler-update-missing."""

from __future__ import annotations

from typing import Iterable, List

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.scalers import Event, Flow, exclusive, expr_line, insert_after, jumps_between
from amplint.analysis.facts.scaler_flow import first_arg
from amplint.analysis.facts.scaler_paths import caller_decides, steps_each_optimizer
from amplint.analysis.facts.scaler_remote import OPTIMIZER_LOOP
from amplint.analysis.facts.scalers import SCALER_TRIGGERS, passed_optimizer, spans, through_place
from amplint.analysis.facts.loop_bindings import varies_per_iteration
from amplint.analysis.facts.syntax import params
from amplint.analysis.facts.tree import iter_nodes
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import method_call


class ScalerUpdateMissing(Rule):
    """## What it does
    Finds `scaler.step(optimizer)` with no `scaler.update()` in the same iteration: no update at
    all, an update only after the training loop (once per epoch), or an update that a
    `continue`/`break`/`return` after the step can skip. A helper class's `self.scaler.step(...)` is
    not reported where the caller handed that scaler to its constructor and updates it itself
    (`acc = GradAccumulator(opt, 2, scaler)`, `acc.maybe_step(i)`, `scaler.update()`).

    ## Why is this bad?
    `step` marks the optimizer as stepped until `update()` resets the scaler's per-iteration
    state, so the next iteration's `step` raises
    `RuntimeError: step() has already been called since the last update().` Without `update()`
    the loss scale also never adapts. Gradient accumulation (`step` and `update` together inside
    `if (i + 1) % k == 0:`), several optimizers stepped before one `update()`, and an `update`
    in another method of the same class or in a lambda (a callback handed to a registry,
    `add_event_handler(event, lambda engine: scaler.update())`, runs when the registry calls
    it) are fine and not reported (also when the optimizers
    are stepped in a loop over them, `for opt in optimizers: scaler.step(opt)`, and when a base
    class or mixin of another file steps `self.scaler` that the calling class updates), unless a
    function of the file shows the order: `fit()` stepping through `train_step()` in its batch
    loop and updating through `on_epoch_end()` after it is reported at the `train_step()` call
    (calls are composed within a file and, through the project pass, into functions and base-class
    or mixin methods of other files; a framework's callbacks are not). A helper that steps, once
    per call and outside any loop of its own, a scaler its caller passes in
    (`def optimizer_step(optimizer, scaler=None)`) is not reported there: the update is the
    caller's, and a caller the analysis composes is reported at its call when it never updates.
    The same holds for a helper that steps each of its optimizers once, in a loop over them
    (nerfstudio's `optimizer_scaler_step_all(grad_scaler)`), its caller in this file or another,
    and for a method stepping the optimizer a key picks, called for each of a display of keys
    and updated once after that loop (StyleTTS2's `MultiOptimizer.step(key)`, its caller
    updating `optimizer.scaler`).

    ## Example
    ```python
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    ```

    ## Fix safety
    **Safe**, when the file has no `update()` of that scaler at all and its last `step` in the
    loop (or function) is unconditional: `scaler.update()` is inserted right after that step, so
    it runs exactly once per iteration, after every `step`, as the recipe does. A conditional
    step, an update placed after the loop, or one skipped by a `continue` is reported without a
    fix: where the update belongs depends on the code around it (moving it could make `update()`
    run without a step, which raises `No inf checks were recorded prior to update.`).
    """

    code = "AMP121"
    name = "scaler-update-missing"
    severity = Severity.ERROR
    fix_safety = "safe"
    triggers = SCALER_TRIGGERS

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda'):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
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
        ),
        Flag(  # update once per epoch, after the loop
            "import torch\n"
            "def train_one_epoch(model, loader, optimizer, scaler):\n"
            "    for x, y in loader:\n"
            "        loss = model(x, y)\n"
            "        scaler.scale(loss).backward()\n"
            "        scaler.step(optimizer)\n"
            "        optimizer.zero_grad()\n"
            "    scaler.update()\n",
        ),
        Flag(  # an early continue between step and update
            "import torch\n"
            "scaler = torch.cuda.amp.GradScaler()\n"
            "for step, batch in enumerate(loader):\n"
            "    scaler.scale(model(batch)).backward()\n"
            "    scaler.step(opt)\n"
            "    if step % log_every:\n"
            "        continue\n"
            "    scaler.update()\n"
            "    log(step)\n",
        ),
        Flag(  # a self.scaler in a method, two optimizers: update after the last step
            "import torch\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = torch.amp.GradScaler()\n"
            "    def optimizer_step(self):\n"
            "        self.scaler.step(self.opt_enc)\n"
            "        self.scaler.step(self.opt_dec)  # both\n"
            "        self.opt_enc.zero_grad()\n",
            fixed="import torch\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = torch.amp.GradScaler()\n"
            "    def optimizer_step(self):\n"
            "        self.scaler.step(self.opt_enc)\n"
            "        self.scaler.step(self.opt_dec)  # both\n"
            "        self.scaler.update()\n"
            "        self.opt_enc.zero_grad()\n",
        ),
        Flag(  # fit() steps through train_step() per batch, updates through a hook per epoch
            "import torch\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = torch.amp.GradScaler('cuda')\n"
            "    def train_step(self, batch):\n"
            "        self.scaler.scale(self.model(batch)).backward()\n"
            "        self.scaler.step(self.optimizer)\n"
            "    def on_epoch_end(self):\n"
            "        self.scaler.update()\n"
            "    def fit(self, loader, epochs):\n"
            "        for epoch in range(epochs):\n"
            "            for batch in loader:\n"
            "                self.train_step(batch)\n"
            "            self.on_epoch_end()\n",
        ),
        Flag(  # the caller's scaler, stepped in a loop of the function itself
            "import torch\n"
            "def train(model, loader, opt, scaler):\n"
            "    for x in loader:\n"
            "        scaler.scale(model(x)).backward()\n"
            "        scaler.step(opt)\n",
            fixed="import torch\n"
            "def train(model, loader, opt, scaler):\n"
            "    for x in loader:\n"
            "        scaler.scale(model(x)).backward()\n"
            "        scaler.step(opt)\n"
            "        scaler.update()\n",
        ),
        Flag(  # a step helper passed the scaler, and a caller that never updates it
            "import torch\n"
            "def optimizer_step(optimizer, scaler):\n"
            "    scaler.step(optimizer)\n"
            "def fit(model, loader, opt):\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    for x in loader:\n"
            "        scaler.scale(model(x)).backward()\n"
            "        optimizer_step(opt, scaler)\n",
        ),
        Flag(  # each optimizer of the list stepped once per batch, the update only after the epoch
            "import torch\n"
            "def fit(model, loader, optimizers, scaler):\n"
            "    for x in loader:\n"
            "        scaler.scale(model(x)).backward()\n"
            "        for optimizer in optimizers:\n"
            "            scaler.step(optimizer)\n"
            "    scaler.update()\n",
        ),
    ]
    clean = [
        # several optimizers stepped in a loop over them, then one update (DLRM-style lists)
        "import torch\n"
        "def step_all(model, x, optimizers, scaler):\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for optimizer in optimizers:\n"
        "        scaler.step(optimizer)\n"
        "    scaler.update()\n",
        "import torch\n"
        "def step_all(model, x, optimizers, scaler):\n"
        "    scaler.scale(model(x)).backward()\n"
        "    for i in range(len(optimizers)):\n"
        "        scaler.step(optimizers[i])\n"
        "    scaler.update()\n",
        # Swin's step helper: one step per call of the scaler its caller passes; the caller
        # (here, or in another file) updates after the call
        "import torch\n"
        "def optimizer_step(optimizer, scaler=None):\n"
        "    if scaler is not None:\n"
        "        scaler.step(optimizer)\n"
        "    else:\n"
        "        optimizer.step()\n"
        "    optimizer.zero_grad()\n",
        # gradient accumulation: step and update together every k micro-batches
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for i, (x, y) in enumerate(loader):\n"
        "    with torch.autocast('cuda'):\n"
        "        loss = loss_fn(model(x), y) / iters_to_accumulate\n"
        "    scaler.scale(loss).backward()\n"
        "    if (i + 1) % iters_to_accumulate == 0:\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n"
        "        optimizer.zero_grad()\n",
        # several optimizers, one update (the multiple-models recipe)
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x in loader:\n"
        "    scaler.scale(loss0).backward(retain_graph=True)\n"
        "    scaler.scale(loss1).backward()\n"
        "    scaler.unscale_(optimizer0)\n"
        "    scaler.step(optimizer0)\n"
        "    scaler.step(optimizer1)\n"
        "    scaler.update()\n",
        # an early continue before the step skips the whole step/update pair
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for batch in loader:\n"
        "    loss = model(batch)\n"
        "    if not torch.isfinite(loss):\n"
        "        continue\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(opt)\n"
        "    scaler.update()\n",
        # the update lives in another method of the class (Lightning-style hooks)
        "import torch\n"
        "class Plugin:\n"
        "    def __init__(self):\n"
        "        self.scaler = torch.amp.GradScaler('cuda')\n"
        "    def optimizer_step(self, optimizer):\n"
        "        return self.scaler.step(optimizer)\n"
        "    def on_step_end(self):\n"
        "        self.scaler.update()\n",
        # an lr scheduler's step is not a scaler's
        "import torch\n"
        "for x in loader:\n"
        "    loss = model(x)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    lr_scheduler.step(epoch)\n",
        # a method stepping the optimizer its key picks, called per key, one update after
        "import torch\n"
        "class MultiOptimizer:\n"
        "    def __init__(self, optimizers, scaler):\n"
        "        self.optimizers = optimizers\n"
        "        self.scaler = scaler\n"
        "    def step(self, key):\n"
        "        self.scaler.step(self.optimizers[key])\n"
        "def train(model, loader, optimizers):\n"
        "    optimizer = MultiOptimizer(optimizers, torch.amp.GradScaler('cuda'))\n"
        "    for x in loader:\n"
        "        optimizer.scaler.scale(model(x)).backward()\n"
        "        for key in ('encoder', 'decoder'):\n"
        "            optimizer.step(key)\n"
        "        optimizer.scaler.update()\n",
        # the same trainer with its hook run after every batch
        "import torch\n"
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.scaler = torch.amp.GradScaler('cuda')\n"
        "    def train_step(self, batch):\n"
        "        self.scaler.scale(self.model(batch)).backward()\n"
        "        self.scaler.step(self.optimizer)\n"
        "    def on_step_end(self):\n"
        "        self.scaler.update()\n"
        "    def fit(self, loader, epochs):\n"
        "        for epoch in range(epochs):\n"
        "            for batch in loader:\n"
        "                self.train_step(batch)\n"
        "                self.on_step_end()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        scalers = ctx.facts.scalers
        for flow, scaler in scalers.stepping(composed=True):
            yield from self._check_scaler(scalers, flow, scaler)

    def _check_scaler(self, scalers, flow: Flow, scaler: str) -> Iterable[Diagnostic]:
        steps = flow.of("step", scaler=scaler)
        updates = flow.of("update", scaler=scaler)
        if not updates:
            if scalers.updated_anywhere(scaler) or scalers.updated_by_callers(flow, scaler):
                return  # updated in another function: the order is not ours to see
            if not spans(*steps) and not _passed_to(steps, scaler):
                return  # all through one call, which reports for itself
            if _callers_scaler(flow, scaler, steps):
                return  # one step per call: its callers update it (their flows show whether)
            last = steps[-1]
            yield self.report(
                last.node,
                f"`{scaler}.step(...)`{_through(last, 'step')} without `{scaler}.update()`: the "
                "next step raises 'RuntimeError: step() has already been called since the last "
                f"update().'; call `{scaler}.update()` once per iteration after the last step",
                fix=self._fix(steps),
                related=_lines(last, "step"),
                through=through_place(last),
            )
            return
        reported = set()
        for step in steps:
            loop = step.loop
            ours = [u for u in updates if not exclusive(u, step)]
            if loop is not None and ours and not any(u.inside(loop) for u in ours):
                loop = _repeating_loop(step, ours)
                if loop is None:
                    continue  # each iteration steps another optimizer: several, one update
                key = ("outside", id(loop.node))
                # the call that steps also updates after its own loop: that order is the callee's,
                # judged where it is written (speechbrain's `self.fit(...)` called three times)
                outside = next((u for u in ours if not spans(step, u)), ours[0])
                if key not in reported and spans(step, outside):
                    reported.add(key)
                    yield self.report(
                        step.node,
                        f"`{scaler}.step(...)`{_through(step, 'step')} runs every iteration but "
                        f"`{scaler}.update()`"
                        f"{_through(outside, 'update') or ' (line {update_line})'} "
                        "only after the loop: the second step raises "
                        "'RuntimeError: step() has already been called since the last "
                        "update().'; move the update into the loop, after the step",
                        related={"update_line": outside.node, **_lines(step, "step"),
                                 **_lines(outside, "update")},
                    )
                continue
            after = [u for u in ours if u.order > step.order and u.inside(loop)]
            if not after:
                continue
            jumps = [j for j in jumps_between(flow, step, after[0]) if not caller_decides(flow, j)]
            if jumps and spans(step, after[0]) and ("jump", id(jumps[0].node)) not in reported:
                reported.add(("jump", id(jumps[0].node)))
                yield self.report(
                    step.node,
                    f"the `{jumps[0].kind}` at line {{jump_line}} skips `{scaler}.update()` "
                    "(line {update_line}) after this step: the next step raises "
                    "'RuntimeError: step() has already been called since the last update().'; "
                    "update right after the step",
                    related={"jump_line": jumps[0].node, "update_line": after[0].node},
                )

    def _fix(self, steps: List[Event]):
        last = steps[-1]
        loop = last.loop
        if any(s.loop != loop for s in steps) or last.conditional(loop) or last.stmt is None:
            return None
        if loop is None and last.conditional():
            return None
        if last.receiver is None or last.origin is not None:
            return None
        call = method_call(last.receiver.deep_clone(), "update")
        return self.fix(
            Applicability.SAFE, f"Insert `{last.scaler}.update()` after the last step",
            insert_after(last.stmt, expr_line(call)),
        )


def _repeating_loop(step: Event, updates: List[Event]):
    """The innermost loop around `step`, without an update of the scaler inside, whose iterations
    step the same optimizer again (None: every such loop may step another optimizer each time,
    `for optimizer in optimizers: scaler.step(optimizer)`, which GradScaler allows before one
    `update()`). A step composed through a call is taken to repeat in the caller's loops: its
    optimizer is the callee's, unless the call passes it: a caller's loop handing the callee another
    optimizer each time (`for name, module, opt in self.phases: self.run_phase(module, opt)`) is
    read as inline code. A loop of this file's callee around its own step call is read as in the
    callee (composer's `_train_batch` steps each of `self.state.optimizers` once)."""
    own = step.node
    if step.origin is not None:
        own = step.inner if step.remote is None and isinstance(step.inner, cst.Call) else None
    optimizer = first_arg(own, "optimizer") if isinstance(own, cst.Call) else None
    passed = passed_optimizer(step)
    inner = None
    for loop in reversed(step.loops):
        if step.remote is not None and getattr(loop.node, "value", None) == OPTIMIZER_LOOP:
            inner = loop.node
            continue  # the callee's loop stepping another optimizer each time
        if _around_own_step(loop, step, own):
            stepped = optimizer
        elif passed is not None and _around_call(loop, step.origin):
            stepped = passed  # the caller's loop passes the callee its optimizer
        else:
            stepped = None
        if not any(u.inside(loop) for u in updates) and (
                stepped is None or not varies_per_iteration(loop.node, stepped, inner)):
            return loop
        inner = loop.node
    return None


def _around_call(loop, call) -> bool:
    return any(node is call for node in iter_nodes(loop.node))


def _around_own_step(loop, step: Event, own) -> bool:
    """`loop` is one of the function whose statement steps the scaler (not a caller's loop around
    the call the step was composed through)."""
    if step.origin is None:
        return True
    if own is None:
        return False
    nodes = [node for node in iter_nodes(loop.node) if node is own or node is step.origin]
    return any(node is own for node in nodes) and not any(node is step.origin for node in nodes)


def _callers_scaler(flow: Flow, scaler: str, steps: List[Event]) -> bool:
    """The scaler is a parameter of the function stepping it, and no step is in a loop of that
    function that may step the same optimizer again: each call steps each optimizer once, and
    `update()` belongs to the caller, after the call (Swin's `optimizer_step(optimizer, ...,
    scaler=None)` helper; nerfstudio's `optimizer_scaler_step_all(grad_scaler)`, stepping each of
    its optimizers in `for group, optimizer in self.optimizers.items()`). Where a caller is
    composed (in its file, or through the project pass) its own flow holds the step and is
    checked there; where none is, a report here would be a guess about code amplint has not
    seen."""
    name = str(scaler)  # a ScalerRef equals only a ScalerRef
    if "." in name or not any(p.name.value == name for p in params(flow.node)):
        return False
    return all(step.origin is None and isinstance(step.node, cst.Call)
               and all(steps_each_optimizer(loop.node, step.node) for loop in step.loops)
               for step in steps)


def _passed_to(steps: List[Event], scaler: str) -> bool:
    """The steps come through one call that is passed the caller's scaler and steps it outside
    any loop of its own: the callee leaves the update to its caller (`_callers_scaler`), so the
    caller's flow is where a missing update shows."""
    call = steps[0].origin
    if not isinstance(call, cst.Call) or not any(
            isinstance(a.value, cst.Name) and a.value.value == str(scaler) for a in call.args):
        return False
    # the loops around the call are the caller's; any other loop of a step is the callee's
    around = {id(loop.node) for loop in steps[0].loops
              if any(node is call for node in iter_nodes(loop.node))}
    return all(id(loop.node) in around for step in steps for loop in step.loops)


def _through(event: Event, what: str) -> str:
    """" (in `train_step`, line 12, through this call)" for a composed event."""
    if event.remote is not None:
        return f" ({event.remote.where}, through the call at line {{{what}_call}})"
    if event.origin is None or event.inner is None:
        return ""
    return f" (line {{{what}_inner}}, through the call at line {{{what}_call}})"


def _lines(event: Event, what: str):
    if event.remote is not None:
        return {f"{what}_call": event.origin}
    if event.origin is None or event.inner is None:
        return {}
    return {f"{what}_inner": event.inner, f"{what}_call": event.origin}
