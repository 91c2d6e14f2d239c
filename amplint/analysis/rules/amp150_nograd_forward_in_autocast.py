"""AMP150 nograd-forward-in-autocast."""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.grad_forwards import (
    ForwardCall, RegionWalker, exclusive, frozen_modules, module_attrs, nograd_index, outer_grad,
)
from amplint.analysis.facts.names import resolve
from amplint.analysis.facts.autocast_calls import AUTOCAST_APIS, Region
from amplint.analysis.facts.branch_arms import exclusive_arms
from amplint.analysis.facts.syntax import literal_bool
from amplint.analysis.facts.tree import dotted_name
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import has_star_args, keyword, kwarg, region_note

CACHE_ENABLED = "torch.autocast(cache_enabled=)"  # a key of amplint.analysis.data.torch_versions


class NogradForwardInAutocast(Rule):
    """## What it does
    Finds a module that runs forward under `torch.no_grad()` (or `torch.inference_mode()`) and
    then again with gradients inside the same autocast region: a target or reference pass, a
    `generate` call, a warm-up pass, then the training forward, all under one `with
    torch.autocast(...)` (or in a function called from one). A call of a method decorated
    `@torch.no_grad()` that calls `self(...)` or `self.forward(...)` (nanoGPT's
    `model.generate(...)`) is a no-grad forward of its receiver, whatever the caller's grad
    mode: the method is found in this file, or through the project's class flow in another
    file (`model` holds the `GPT` of model.py), and the message names it. So is calling an
    object of another file that stores the module it is built with and runs it under no_grad in
    its `__call__` (`guesser = LabelGuesser(model)`, then `guesser(x)`), when the class flow
    ties the stored module to the name the region later trains. A call of a helper of the file
    that runs its parameter forward straight in its body (`self._forward(model, ...)` with
    `output = model(ids)`) is a forward of the argument in the caller's grad mode; with grad it
    is reported at the helper's forward.

    ## Why is this bad?
    Autocast caches the low-precision copy of every float32 weight it casts, for the rest of the
    region. Before torch 2.11 the cache also kept copies made under `no_grad`: those have no
    autograd history, so the later forward with gradients reuses them and its graph never
    reaches the weights. Their gradients are silently `None`, or, when the whole graph is lost,
    backward raises `RuntimeError: element 0 of tensors does not require grad and does not have
    a grad_fn`. This is pytorch/pytorch#112583 and #65766 (fixed by pytorch/pytorch#165068,
    for #158232, in torch 2.11). On newer torch the code is correct; `cache_enabled=False`
    costs a re-cast of the weights per use, so a project whose requirement on torch (or
    `target-torch`) starts at 2.11 or later is not told of it.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.bfloat16):
        with torch.no_grad():
            target = model(x_aug)
        out = model(x)
        loss = loss_fn(out, target)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        with torch.no_grad():
            target = model(x_aug)
        out = model(x)
        loss = loss_fn(out, target)
    ```

    ## Fix safety
    **Safe**: `cache_enabled=False` is added to the autocast call that opens the region (also
    when the region is a name bound to that call, or an autocast decorator). Without the cache
    every op casts its float32 weight again: the values are bit for bit the same, only the cast
    is repeated, and gradients reach the weights again. When the region comes from a framework
    (`accelerator.autocast()`) or a `partial`, the finding is reported without a fix; calling
    `torch.clear_autocast_cache()` before the grad forward is the other workaround.
    `cache_enabled` exists from torch 1.10: a project that targets an older torch
    (`target-torch`, or its requirement on torch) gets the finding without a fix.
    """

    code = "AMP150"
    name = "nograd-forward-in-autocast"
    severity = Severity.WARNING
    fix_safety = "safe"
    triggers = ("autocast", "optim_context", "auto_fp16")

    flag = [
        Flag(  # a target pass, then the training pass (the pytorch/pytorch#105211 report)
            "import torch\n"
            "import torch.nn.functional as F\n"
            "def train_step(model, x, y, opt):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        with torch.no_grad():\n"
            "            xhat = model(x)\n"
            "        yhat = model(xhat)\n"
            "        loss = F.mse_loss(yhat, y)\n"
            "    loss.backward()\n",
            fixed="import torch\n"
            "import torch.nn.functional as F\n"
            "def train_step(model, x, y, opt):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16, cache_enabled=False):\n"
            "        with torch.no_grad():\n"
            "            xhat = model(x)\n"
            "        yhat = model(xhat)\n"
            "        loss = F.mse_loss(yhat, y)\n"
            "    loss.backward()\n",
        ),
        Flag(  # RL fine-tuning: generate without grad, score with grad, region inherited
            "import torch\n"
            "class Trainer:\n"
            "    def step(self, prompts):\n"
            "        with torch.no_grad():\n"
            "            seqs = self.policy.generate(prompts, max_new_tokens=64)\n"
            "        logits = self.policy(seqs).logits\n"
            "        return logits\n"
            "    def train(self, batch):\n"
            "        with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n"
            "            logits = self.step(batch)\n",
            fixed="import torch\n"
            "class Trainer:\n"
            "    def step(self, prompts):\n"
            "        with torch.no_grad():\n"
            "            seqs = self.policy.generate(prompts, max_new_tokens=64)\n"
            "        logits = self.policy(seqs).logits\n"
            "        return logits\n"
            "    def train(self, batch):\n"
            "        with torch.cuda.amp.autocast(dtype=torch.bfloat16, cache_enabled=False):\n"
            "            logits = self.step(batch)\n",
        ),
        Flag(  # nanoGPT: a @no_grad generate that calls self(...), then the grad forward
            "import torch\n"
            "from torch import nn\n"
            "class GPT(nn.Module):\n"
            "    def forward(self, idx):\n"
            "        return self.lm_head(self.blocks(idx))\n"
            "    @torch.no_grad()\n"
            "    def generate(self, idx, n):\n"
            "        for _ in range(n):\n"
            "            logits = self(idx)\n"
            "            idx = torch.cat((idx, logits.argmax(-1)[:, -1:]), dim=1)\n"
            "        return idx\n"
            "model = GPT()\n"
            "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "    samples = model.generate(prompts, 64)\n"
            "    logits = model(samples)\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class GPT(nn.Module):\n"
            "    def forward(self, idx):\n"
            "        return self.lm_head(self.blocks(idx))\n"
            "    @torch.no_grad()\n"
            "    def generate(self, idx, n):\n"
            "        for _ in range(n):\n"
            "            logits = self(idx)\n"
            "            idx = torch.cat((idx, logits.argmax(-1)[:, -1:]), dim=1)\n"
            "        return idx\n"
            "model = GPT()\n"
            "with torch.autocast('cuda', dtype=torch.bfloat16, cache_enabled=False):\n"
            "    samples = model.generate(prompts, 64)\n"
            "    logits = model(samples)\n",
        ),
        Flag(  # a context bound to a name; an explicit cache_enabled=True
            "import torch\n"
            "amp_ctx = torch.autocast('cuda', dtype=torch.bfloat16, cache_enabled=True)\n"
            "with amp_ctx:\n"
            "    with torch.inference_mode():\n"
            "        model(warmup_batch)\n"
            "    loss = model(batch).mean()\n",
            fixed="import torch\n"
            "amp_ctx = torch.autocast('cuda', dtype=torch.bfloat16, cache_enabled=False)\n"
            "with amp_ctx:\n"
            "    with torch.inference_mode():\n"
            "        model(warmup_batch)\n"
            "    loss = model(batch).mean()\n",
        ),
        Flag(  # a framework region: reported, no fix
            "import torch\n"
            "with accelerator.autocast():\n"
            "    with torch.no_grad():\n"
            "        ref = model(**inputs).logits\n"
            "    logits = model(**inputs).logits\n",
        ),
        Flag(  # FixMatch: a @no_grad function runs its argument forward, then the grad forward
            "import torch\n"
            "@torch.no_grad()\n"
            "def pseudo_label(model, weak, threshold):\n"
            "    probs = torch.softmax(model(weak), dim=-1)\n"
            "    return probs.max(-1)\n"
            "with torch.autocast('cuda', dtype=torch.float16):\n"
            "    targets, mask = pseudo_label(model, weak, 0.95)\n"
            "    logits = model(strong)\n",
            fixed="import torch\n"
            "@torch.no_grad()\n"
            "def pseudo_label(model, weak, threshold):\n"
            "    probs = torch.softmax(model(weak), dim=-1)\n"
            "    return probs.max(-1)\n"
            "with torch.autocast('cuda', dtype=torch.float16, cache_enabled=False):\n"
            "    targets, mask = pseudo_label(model, weak, 0.95)\n"
            "    logits = model(strong)\n",
        ),
        Flag(  # the same helper as a method of the trainer, called through `self`
            "import torch\n"
            "class FixMatch:\n"
            "    @torch.no_grad()\n"
            "    def pseudo_label(self, model, weak):\n"
            "        return model(weak).argmax(-1)\n"
            "    def step(self, model, weak, strong):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            targets = self.pseudo_label(model, weak)\n"
            "            return model(strong), targets\n",
            fixed="import torch\n"
            "class FixMatch:\n"
            "    @torch.no_grad()\n"
            "    def pseudo_label(self, model, weak):\n"
            "        return model(weak).argmax(-1)\n"
            "    def step(self, model, weak, strong):\n"
            "        with torch.autocast('cuda', dtype=torch.float16, cache_enabled=False):\n"
            "            targets = self.pseudo_label(model, weak)\n"
            "            return model(strong), targets\n",
        ),
    ]
    clean = [
        # a @no_grad function that does not run its argument forward; one that runs another model
        "import torch\n"
        "@torch.no_grad()\n"
        "def log_stats(model, x):\n"
        "    return x.float().mean()\n"
        "@torch.no_grad()\n"
        "def ema_label(teacher, x):\n"
        "    return teacher(x).argmax(-1)\n"
        "with torch.autocast('cuda'):\n"
        "    log_stats(model, x)\n"
        "    labels = ema_label(ema_model, x)\n"
        "    out = model(x)\n",
        # `self(...)` in a function the no-grad method only builds: it runs when called, later
        "import torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * 2\n"
        "    @torch.no_grad()\n"
        "    def make_predictor(self):\n"
        "        def predict(x):\n"
        "            return self(x)\n"
        "        return predict\n"
        "model = Net()\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    predict = model.make_predictor()\n"
        "    out = model(torch.randn(2, 8))\n",
        # the documented recipe: no no_grad pass inside the region
        "import torch\n"
        "for x, y in loader:\n"
        "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "        loss = loss_fn(model(x), y)\n"
        "    scaler.scale(loss).backward()\n",
        # mean teacher / EMA: the no_grad pass is another module
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        target = ema_model(x_aug)\n"
        "    out = model(x)\n",
        # grad forward first, no_grad pass after it (validation inside the region)
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n"
        "    with torch.no_grad():\n"
        "        val = model(x_val)\n",
        # each pass in its own autocast region: the cache is dropped in between
        "import torch\n"
        "with torch.no_grad(), torch.autocast('cuda'):\n"
        "    target = model(x_aug)\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n",
        # already cache_enabled=False, or the cache cleared by hand
        "import torch\n"
        "with torch.autocast('cuda', cache_enabled=False):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    out = model(x)\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    torch.clear_autocast_cache()\n"
        "    out = model(x)\n",
        # mutually exclusive branches
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    if evaluating:\n"
        "        with torch.no_grad():\n"
        "            out = model(x)\n"
        "    else:\n"
        "        out = model(x)\n",
        # a frozen encoder (no weight needs grad): nothing to lose
        "import torch\n"
        "text_encoder.requires_grad_(False)\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        uncond = text_encoder(empty_ids)[0]\n"
        "    cond = text_encoder(ids)[0]\n",
        # a @no_grad method that does not run the model's forward (a metric on its buffers)
        "import torch\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "    @torch.no_grad()\n"
        "    def weight_norm(self):\n"
        "        return self.fc.weight.norm()\n"
        "net = Net()\n"
        "with torch.autocast('cuda'):\n"
        "    w = net.weight_norm()\n"
        "    out = net(x)\n",
        # autocast disabled; a plain function that is not a model
        "import torch\n"
        "with torch.autocast('cuda', enabled=False):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    out = model(x)\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        a = compute_stats(x)\n"
        "    b = compute_stats(y)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        if ctx.torch.has_fix(self.code):
            return
        facts = ctx.facts
        region_withs: Dict[int, Region] = {
            id(with_node): region for with_node, _frame, region in facts.regions.explicit_regions()
        }
        modules = module_attrs(facts)
        frozen = frozen_modules(facts)
        nograd = nograd_index(facts.entries)
        reported: Set[int] = set()  # a helper's forward reached from several regions: once
        for frame, body, region in self._scopes(facts):
            walker = RegionWalker(facts, frame, region_withs, modules, nograd)
            walker.block(body, outer_grad(frame, None), ())
            if walker.cleared:
                continue
            calls = [call for call in walker.calls if call.key not in frozen]
            yield from self._pairs(ctx, calls, region, reported, _function_of(frame))

    def _scopes(self, facts):
        """(frame, statements, region) for every body that runs under one active region."""
        for with_node, body_frame, region in facts.regions.explicit_regions():
            if region.active and isinstance(with_node.body, cst.IndentedBlock):
                yield body_frame, with_node.body.body, region
        for frame in facts.tree.frames:
            if frame.kind != "function":
                continue
            region = frame.region or frame.inherited
            if isinstance(region, Region) and region.active:
                node = frame.node
                assert isinstance(node, cst.FunctionDef)
                if isinstance(node.body, cst.IndentedBlock):
                    yield frame, node.body.body, region

    def _pairs(self, ctx, calls: List[ForwardCall], region: Region, done: Set[int],
               function: cst.CSTNode):
        if _cache_disabled(region):
            return
        first_nograd: Dict[Tuple[str, ...], ForwardCall] = {}
        arms: dict = {}
        reported: Set[Tuple[str, ...]] = set()
        for call in calls:
            if call.grad is False:
                first_nograd.setdefault(call.key, call)
                continue
            if call.grad is not True or call.key in reported or id(call.node) in done:
                continue
            earlier = first_nograd.get(call.key)
            if earlier is None or exclusive(earlier.path, call.path) or exclusive_arms(
                    function, earlier.site or earlier.node, call.site or call.node, arms):
                continue
            reported.add(call.key)
            done.add(id(call.node))
            note, related = region_note(region)
            related = dict(related, nograd_line=earlier.node)
            if call.site is not None:
                related["grad_call_line"] = call.site
            name = ".".join(call.key)
            through = f", through {earlier.via}" if earlier.via else ""
            helper = f" (through {call.via})" if call.via else ""
            message = (
                f"`{name}` runs under no_grad (line {{nograd_line}}{through}) and then with grad{helper} in "
                f"the same autocast region {note}: before torch 2.11 the autocast cache hands this "
                "forward the weight casts made without grad, so its gradients are lost; pass "
                "`cache_enabled=False` to the autocast"
            )
            fix = self._fix(region, ctx.facts)
            if fix is not None and not ctx.torch.allows(CACHE_ENABLED):
                fix = None  # the autocast of the target torch has no cache_enabled
                message += "; " + ctx.torch.why_not(CACHE_ENABLED, "`cache_enabled=`")
            yield self.report(call.node, message, fix=fix, related=related)

    def _fix(self, region: Region, facts):
        root = region.root
        call = _autocast_call(root, facts)
        if call is None or has_star_args(call):
            return None
        existing = keyword(call, "cache_enabled")
        false = cst.Name("False")
        if existing is not None:
            args = [a.with_changes(value=false) if a is existing else a for a in call.args]
            new = call.with_changes(args=args)
        else:
            args = list(call.args)
            if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = args[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
            new = call.with_changes(args=[*args, kwarg("cache_enabled", false)])
        return self.fix(
            Applicability.SAFE, "Pass `cache_enabled=False` to the autocast", {call: new}
        )


def _function_of(frame) -> cst.CSTNode:
    """The function (or module) whose statements hold the region's body."""
    while frame.kind not in ("function", "module") and frame.parent is not None:
        frame = frame.parent
    return frame.node


def _autocast_call(region: Region, facts=None) -> Optional[cst.Call]:
    """The autocast call the region was opened by, when it is a call of an autocast API (not
    a partial, an alias that may be something else, or a framework method)."""
    origin = region.origin
    if isinstance(origin, cst.Decorator):
        origin = origin.decorator
    if region.kind not in ("with", "decorator") or not isinstance(origin, cst.Call) or region.opener:
        return None  # a context-manager function's call is not the autocast
    dotted = dotted_name(origin.func)
    if not dotted:
        return None
    if facts is not None and resolve(dotted, facts.tree.module_frame) in AUTOCAST_APIS:
        return origin
    return origin if dotted[-1] == "autocast" and len(dotted) > 1 else None


def _cache_disabled(region: Region) -> bool:
    if region.root.cache_off:  # an opener's autocast (of another file) says so
        return True
    call = _autocast_call(region.root)
    arg = keyword(call, "cache_enabled") if call is not None else None
    return arg is not None and literal_bool(arg.value) is False
