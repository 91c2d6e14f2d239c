"""AMP104 backward-in-autocast."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.data.scaler_vocab import METHODS as VERB_METHODS
from amplint.analysis.facts.backward_methods import EntryBackwardMethod, EntryBackwardSite
from amplint.analysis.facts.framework_verbs import imported, verb_of
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import CallSite, dotted_name, scope_key
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._post_forward import post_forward
from amplint.analysis.rules._util import region_note

BACKWARD_FUNCTIONS = ("torch.autograd.backward", "torch.autograd.grad")


class BackwardInAutocast(Rule):
    """## What it does
    Finds `loss.backward()`, `scaler.scale(loss).backward()`, `torch.autograd.backward/grad`
    and `accelerator.backward(loss)` inside an enabled (or maybe enabled) autocast region.

    Lightning's `self.manual_backward(loss)` counts when the code puts it inside an autocast
    region of its own (`with torch.autocast(...)` in `training_step`). Where Lightning itself
    runs `training_step` under autocast (`precision="16-mixed"` with manual optimization), the
    backward inside that region is Lightning's protocol, which the user cannot move, and is not
    reported. Nor is the backward inside a backward API's own body (a `manual_backward` or
    `backward` method, such as Lightning's, reached by a region only through its callers): the
    calls of that API are what is reported, unless the method is one of the file's own whose
    every backward runs under an autocast it disables itself.

    A framework call that runs backward counts too (amplint.analysis.data.scaler_vocab): mmengine's
    `optim_wrapper.update_params(loss)` (backward, step, zero_grad) inside
    `with optim_wrapper.optim_context(model):`, which is `AmpOptimWrapper`'s autocast region.

    A backward under `with pytest.raises(...)` / `self.assertRaises(...)` is a test that it
    fails, and is not reported.

    ## Why is this bad?
    The PyTorch AMP docs: "Backward passes under autocast are not recommended. Backward ops run
    in the same type that autocast used for corresponding forward ops." Running backward inside
    the region also runs the backward of custom autograd Functions under autocast, where their
    `custom_bwd` expectations break, and keeps the autocast weight cache alive across backward.
    Backward after the `with` block, or inside `autocast(enabled=False)`, is fine.

    ## Example
    ```python
    with torch.autocast("cuda"):
        loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    ```

    ## Fix safety
    **Safe**, when it applies: the first statement of the `with` body that runs backward, and
    every statement after it, move out of the block, provided all of them are post-forward work
    (backward, optimizer/scaler/scheduler calls, `zero_grad`, clipping, logging, `.item()`
    bookkeeping). With autocast disabled (an fp32 run) moving them changes nothing. A
    multi-item `with` is split first when the autocast item is the last one. In other cases
    (more forward work after the backward, a decorated function, a region inherited through a
    call) the finding is reported without a fix.
    """

    code = "AMP104"
    name = "backward-in-autocast"
    severity = Severity.WARNING
    fix_safety = "safe"
    triggers = ("autocast", "optim_context", "auto_fp16")

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        output = model(x)\n"
            "        loss = loss_fn(output, y)\n"
            "        # backward, then the optimizer\n"
            "        scaler.scale(loss).backward()\n"
            "        scaler.step(optimizer)\n"
            "        scaler.update()\n"
            "    print(loss.item())\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        output = model(x)\n"
            "        loss = loss_fn(output, y)\n"
            "    # backward, then the optimizer\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    print(loss.item())\n",
        ),
        Flag(  # multi-item with: split it, keep the other context around both parts
            "import torch\n"
            "def step(model, x, opt):\n"
            "    with torch.enable_grad(), torch.autocast('cuda'):\n"
            "        loss = model(x).mean()\n"
            "        loss.backward()\n"
            "        opt.step()\n",
            fixed="import torch\n"
            "def step(model, x, opt):\n"
            "    with torch.enable_grad():\n"
            "        with torch.autocast('cuda'):\n"
            "            loss = model(x).mean()\n"
            "        loss.backward()\n"
            "        opt.step()\n",
        ),
        Flag(  # forward work after backward: reported without a fix
            "import torch\n"
            "with torch.autocast('cuda'):\n"
            "    loss = model(x).mean()\n"
            "    loss.backward()\n"
            "    extra = model(z)\n",
        ),
        Flag(  # accelerate and autograd.grad, under a with alias
            "import torch\n"
            "from torch import autograd\n"
            "ctx = torch.autocast('cuda', enabled=args.amp)\n"
            "with ctx:\n"
            "    loss = model(x)\n"
            "    grads = autograd.grad(loss, params)\n"
            "    accelerator.backward(loss)\n",
            fixed="import torch\n"
            "from torch import autograd\n"
            "ctx = torch.autocast('cuda', enabled=args.amp)\n"
            "with ctx:\n"
            "    loss = model(x)\n"
            "grads = autograd.grad(loss, params)\n"
            "accelerator.backward(loss)\n",
            count=2,
        ),
        Flag(  # mmengine: update_params (backward + step) inside optim_context (autocast)
            "from mmengine.model import BaseModel\n"
            "class Detector(BaseModel):\n"
            "    def train_step(self, data, optim_wrapper):\n"
            "        with optim_wrapper.optim_context(self):\n"
            "            losses = self._run_forward(data, mode='loss')\n"
            "            parsed_losses, log_vars = self.parse_losses(losses)\n"
            "            optim_wrapper.update_params(parsed_losses)\n"
            "        return log_vars\n",
        ),
        Flag(  # Lightning manual optimization with its own autocast region
            "import torch\n"
            "class Lit(LightningModule):\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        opt = self.optimizers()\n"
            "        with torch.autocast('cuda'):\n"
            "            loss = self.compute_loss(batch)\n"
            "            self.manual_backward(loss)\n"
            "            opt.step()\n",
            fixed="import torch\n"
            "class Lit(LightningModule):\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        opt = self.optimizers()\n"
            "        with torch.autocast('cuda'):\n"
            "            loss = self.compute_loss(batch)\n"
            "        self.manual_backward(loss)\n"
            "        opt.step()\n",
        ),
        Flag(  # in a test, but not under pytest.raises: that backward runs its ops
            "import pytest\n"
            "import torch\n"
            "def test_backward(model, x):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        loss = model(x).sum()\n"
            "        with pytest.raises(ValueError):\n"
            "            check(loss)\n"
            "        loss.backward()\n",
            fixed="import pytest\n"
            "import torch\n"
            "def test_backward(model, x):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        loss = model(x).sum()\n"
            "        with pytest.raises(ValueError):\n"
            "            check(loss)\n"
            "    loss.backward()\n",
        ),
        Flag(  # no edit: moving `model(x).sum().backward()` would run that forward in fp32
            "import torch\n"
            "def step(model, x):\n"
            "    with torch.autocast('cuda'):\n"
            "        out = model(x)\n"
            "        model(x).sum().backward()\n",
        ),
        Flag(  # a @contextmanager function that yields under autocast (OLMo): no edit of its `with`
            "import contextlib\n"
            "import torch\n"
            "@contextlib.contextmanager\n"
            "def maybe_autocast(dtype):\n"
            "    if dtype == torch.float32:\n"
            "        yield\n"
            "    else:\n"
            "        with torch.autocast('cuda', dtype=dtype):\n"
            "            yield\n"
            "def train_batch(model, batch, dtype):\n"
            "    with maybe_autocast(dtype):\n"
            "        loss = model(batch).mean()\n"
            "        loss.backward()\n",
        ),
        Flag(  # a method that returns the autocast context (Lightning's autocast_context_manager)
            "import torch\n"
            "class Trainer:\n"
            "    def autocast_ctx(self):\n"
            "        return torch.autocast('cuda', dtype=torch.float16)\n"
            "    def step(self, model, batch):\n"
            "        with self.autocast_ctx():\n"
            "            loss = model(batch).mean()\n"
            "            loss.backward()\n",
        ),
    ]
    clean = [
        # functions returning a null context, a disabled autocast, or nothing known
        "from contextlib import nullcontext\n"
        "import torch\n"
        "def get_ctx(device):\n"
        "    return nullcontext()\n"
        "def off():\n"
        "    return torch.autocast('cuda', enabled=False)\n"
        "def step(model, batch):\n"
        "    with get_ctx('cuda'):\n"
        "        model(batch).mean().backward()\n"
        "    with off():\n"
        "        model(batch).mean().backward()\n",
        # the same context manager with autocast disabled, and one without autocast
        "from contextlib import contextmanager\n"
        "import torch\n"
        "@contextmanager\n"
        "def maybe_autocast(dtype):\n"
        "    with torch.autocast('cuda', dtype=dtype, enabled=False):\n"
        "        yield\n"
        "@contextmanager\n"
        "def timed(name):\n"
        "    with torch.autocast('cuda'):\n"
        "        pass\n"
        "    yield\n"
        "def train_batch(model, batch, dtype):\n"
        "    with maybe_autocast(dtype):\n"
        "        loss = model(batch).mean()\n"
        "        loss.backward()\n"
        "    with timed('step'):\n"
        "        model(batch).mean().backward()\n",
        # Lightning manual optimization without mixed precision: no region at all
        "import torch\n"
        "class Lit(LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        opt = self.optimizers()\n"
        "        loss = self.compute_loss(batch)\n"
        "        self.manual_backward(loss)\n"
        "        opt.step()\n",
        # mmengine's BaseModel.train_step: update_params after the optim_context block
        "from mmengine.model import BaseModel\n"
        "class Detector(BaseModel):\n"
        "    def train_step(self, data, optim_wrapper):\n"
        "        with optim_wrapper.optim_context(self):\n"
        "            losses = self._run_forward(data, mode='loss')\n"
        "        parsed_losses, log_vars = self.parse_losses(losses)\n"
        "        optim_wrapper.update_params(parsed_losses)\n"
        "        return log_vars\n",
        # an update_params of something that is not an optimizer wrapper
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n"
        "    ema.update_params(model)\n",
        # the documented recipe
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        loss = loss_fn(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # gradient penalty: autograd.grad outside, the penalty forward inside
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    loss = loss_fn(model(x), y)\n"
        "grads = torch.autograd.grad(scaler.scale(loss), model.parameters(), create_graph=True)\n"
        "with torch.autocast('cuda'):\n"
        "    loss = loss + sum(g.pow(2).sum() for g in grads)\n"
        "scaler.scale(loss).backward()\n",
        # backward inside an fp32 island
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        out.float().sum().backward()\n",
        # nanoGPT: `ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(...)`
        "import torch\n"
        "from contextlib import nullcontext\n"
        "ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)\n"
        "for micro_step in range(gradient_accumulation_steps):\n"
        "    with ctx:\n"
        "        logits, loss = model(X, Y)\n"
        "        loss = loss / gradient_accumulation_steps\n"
        "    scaler.scale(loss).backward()\n",
        # a test that backward raises under autocast: the error is the point
        "import pytest\n"
        "import torch\n"
        "def test_backward_raises(model, x):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        loss = model(x).sum()\n"
        "        with pytest.raises(RuntimeError):\n"
        "            loss.backward()\n",
        # ParlAI-style agent: `self.backward(loss)` calls a method of the class whose backward
        # runs with autocast disabled
        "import torch\n"
        "class Agent:\n"
        "    def backward(self, loss):\n"
        "        with torch.autocast('cuda', enabled=False):\n"
        "            self.scaler.scale(loss).backward()\n"
        "    def train_step(self, batch):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            loss = self.model(batch).sum()\n"
        "            self.backward(loss)\n",
        # a method named backward of something unrelated, outside any region
        "import torch\nlayer.backward(grad)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        found = []
        frameworks = None
        for qualified, site in facts.qualified_calls:
            if not self._is_backward(qualified, site):
                if qualified is not None or not isinstance(site.node.func, cst.Attribute) or (
                    site.node.func.attr.value not in VERB_METHODS
                ):
                    continue
                if frameworks is None:
                    frameworks = imported(facts.tree)
                if verb_of(site.node, frameworks, ("backward",)) is None:
                    continue  # not a framework call that runs backward (mmengine update_params)
            region = facts.active_region(site.frame)
            if region is not None and not _expects_error(site) and not _framework_owned(site, region) \
                    and not self._callee_protects(facts, site):
                found.append((site, region))
        # the statements of each with body that run backward: the fix starts at the first
        starts = {}
        for site, _ in found:
            if site.frame.kind == "with" and site.top_stmt is not None:
                starts.setdefault(id(site.frame.node), []).append(site.top_stmt)
        sites = _inherited_sites(facts) if found else {}
        for site, region in found:
            note, related = region_note(region)
            entry = sites.get(_receiver_method(site))
            if entry is not None:  # the backward runs in a method of another file: name it
                # (the call stays the finding, as for a backward wrapper of the file's own)
                shown = entry.where.replace("{", "{{").replace("}", "}}")
                note = f"(at {shown}, through this call; {note[1:]}"
            message = (
                f"backward inside autocast {note}: the AMP docs ask for backward after the "
                "`with` block (backward ops would run under autocast)"
            )
            fix = self._fix(site, region, starts.get(id(site.frame.node), []))
            yield self.report(site.node, message, fix=fix, related=related)

    @staticmethod
    def _is_backward(qualified: Optional[str], site: CallSite) -> bool:
        if qualified in BACKWARD_FUNCTIONS:
            return True
        func = site.node.func
        return (
            qualified is None
            and isinstance(func, cst.Attribute)
            and func.attr.value in ("backward", "manual_backward")
        )

    def _callee_protects(self, facts, site: CallSite) -> bool:
        """`self.backward(loss)` calling a method of this file whose every backward runs under
        an autocast of its own that is disabled (ParlAI-style `TorchAgent.backward` with
        `with torch.autocast("cuda", enabled=False):`): no backward runs under the caller's
        region. A method without any backward call of its own is not taken to protect.
        Inherited from a class of another file, the project pass answers the same question
        (project/backward_entries.py, EntryBackwardMethod)."""
        if _receiver_method(site) in _inherited_protectors(facts):
            return True
        callees = facts.callgraph.callees(site) if isinstance(site.node.func, cst.Attribute) else []
        if not callees:
            return False
        for callee in callees:
            inner = [s for q, s in facts.qualified_calls
                     if s.frame.function is callee and s is not site and self._is_backward(q, s)]
            if not inner:
                return False
            for inner_site in inner:
                region = facts.region_of(inner_site.frame)
                if region is None or region.kind != "with" or region.active:
                    return False
        return True

    def _fix(self, site: CallSite, region, backward_stmts):
        with_node = region.with_node
        # a context-manager function may do more than autocast on exit: its `with` is left as is
        if region.kind != "with" or with_node is None or region.opener is not None:
            return None
        # the call must sit directly in this with's body, not in a nested with
        if site.frame.node is not with_node or site.top_stmt is None:
            return None
        body = list(with_node.body.body) if isinstance(with_node.body, cst.IndentedBlock) else None
        if not body:
            return None
        index = next(
            (i for i, stmt in enumerate(body) if any(stmt is b for b in backward_stmts)), None
        )
        if not index:  # None, or 0: nothing would be left in the with
            return None
        moved = body[index:]
        if not all(post_forward(stmt) for stmt in moved):
            return None
        items = list(with_node.items)
        autocast_items = [i for i, item in enumerate(items) if _is_region_item(item, region)]
        if autocast_items != [len(items) - 1]:
            if len(items) != 1:
                return None
        kept = with_node.with_changes(body=with_node.body.with_changes(body=body[:index]))
        if len(items) == 1:
            replacement = cst.FlattenSentinel([kept, *moved])
        else:
            inner = kept.with_changes(
                items=[items[-1]], leading_lines=(),
                body=cst.IndentedBlock(body=body[:index]),
            )
            others = list(items[:-1])
            others[-1] = others[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            replacement = with_node.with_changes(
                items=others, body=with_node.body.with_changes(body=[inner, *moved])
            )
        return self.fix(
            Applicability.SAFE, "Move the backward and what follows it out of the autocast block",
            {with_node: replacement},
        )


def _inherited_protectors(facts):
    return {(e.scope, e.receiver, e.method) for e in facts.entries if isinstance(e, EntryBackwardMethod)}


def _inherited_sites(facts):
    """(scope, receiver, method) -> the EntryBackwardSite of a `self.<method>(...)` inherited
    from, or an `x.<method>(...)` of an instance of, a class of another file."""
    return {(e.scope, e.receiver, e.method): e for e in facts.entries if isinstance(e, EntryBackwardSite)}


def _receiver_method(site: CallSite):
    """(scope, receiver's dotted name, method) of a `self.<method>(...)` / `x.y.<method>(...)`
    call; None for any other call."""
    func = site.node.func
    if isinstance(func, cst.Attribute):
        receiver = dotted_name(func.value)
        if receiver:
            return scope_key(site.frame), tuple(receiver), func.attr.value
    return None


_RAISES = ("pytest.raises",)
_RAISES_METHODS = ("assertRaises", "assertRaisesRegex")


# Methods that are themselves a backward API: their callers' calls are the findings.
BACKWARD_WRAPPERS = ("backward", "manual_backward")


def _framework_owned(site: CallSite, region) -> bool:
    """The framework runs this backward inside its own autocast, where the user cannot move it:
    Lightning's `self.manual_backward(loss)` in a `training_step` that Lightning runs under
    autocast (a region implied by the project, not written around the call), or the backward
    inside a backward API's own body (`LightningModule.manual_backward` calling the strategy's
    `backward`) that a region reaches only through its callers, whose calls are reported."""
    if region.kind not in ("project", "call"):
        return False
    func = site.node.func
    if (region.kind == "project" and isinstance(func, cst.Attribute)
            and func.attr.value == "manual_backward"):
        return True
    function = site.frame.function
    return function is not None and function.name in BACKWARD_WRAPPERS


def _expects_error(site: CallSite) -> bool:
    """The call sits in `with pytest.raises(...)` / `with self.assertRaises(...)` in its own
    function: a test that backward fails there, not a backward that runs its ops."""
    frame = site.frame
    while frame is not None and frame.kind == "with":
        for item in frame.node.items:  # type: ignore[attr-defined]
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            if resolve_expr(call.func, frame.parent) in _RAISES:
                return True
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _RAISES_METHODS:
                return True
        frame = frame.parent
    return False


def _is_region_item(item: cst.WithItem, region) -> bool:
    origin = region.origin
    return item.item is origin or (isinstance(item.item, cst.Call) and item.item is origin)
