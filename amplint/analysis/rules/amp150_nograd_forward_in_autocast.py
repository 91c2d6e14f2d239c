"""AMP150 nograd-forward-in-autocast."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.context_functions import bound_locally, overrides
from amplint.analysis.facts.names import relative_ref, resolve, resolve_expr
from amplint.analysis.facts.nograd_methods import (
    NO_GRAD, EntryNoGradArgs, EntryNoGradCall, EntryNoGradFunction, EntryNoGradHeld, grad_params, nograd_forward,
    nograd_params,
)
from amplint.analysis.facts.regions import AUTOCAST_APIS, Region, literal_bool
from amplint.analysis.facts.syntax import calls_in
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, scope_key
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import has_star_args, keyword, kwarg, region_note

SET_GRAD = ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
            "torch.autograd.grad_mode.set_grad_enabled")
ENABLE_GRAD = ("torch.enable_grad", "torch.autograd.enable_grad",
               "torch.autograd.grad_mode.enable_grad")
CLEAR_CACHE = ("torch.clear_autocast_cache", "torch._C._clear_autocast_cache")
# A method call on a model that runs (part of) its forward: `model.generate(...)` under no_grad,
# then `model(...)` with grad, share the same weights.
FORWARD_METHODS = {"forward", "generate", "module"}
_MODEL_NAME = re.compile(
    r"(model|net|module|encoder|decoder|backbone|policy|actor|critic|unet|transformer|"
    r"classifier|generator|discriminator|student|learner|\blm\b|llm)",
    re.I,
)
_BUILTINS = {"print", "len", "range", "isinstance", "super", "getattr", "setattr", "hasattr",
             "list", "tuple", "dict", "set", "zip", "enumerate", "map", "filter", "sum", "min",
             "max", "float", "int", "str", "bool", "type", "sorted", "any", "all", "iter", "next"}


@dataclass
class _Call:
    node: cst.Call
    key: Tuple[str, ...]
    grad: Optional[bool]  # False under no_grad, True with grad, None when unknown
    order: int
    path: Tuple[Tuple[int, int], ...]  # (id of If/Try, branch) on the way down
    # what runs it forward without grad: "`GPT.generate` (defined at model.py:101), a `@torch.no_grad()` method"
    via: str = ""
    site: Optional[cst.Call] = None  # a helper's forward: the call of the helper in the region


_METHOD = ", a `@torch.no_grad()` method"
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
        modules = _module_attrs(facts)
        frozen = _frozen(facts)
        nograd = {(e.scope, e.receiver, e.method): f"`{e.cls}.{e.method}` (defined at {e.where}){_METHOD}"
                  for e in facts.entries if isinstance(e, EntryNoGradCall)}
        nograd.update({e.ref: (e.params, f"(defined at {e.where})")
                       for e in facts.entries if isinstance(e, EntryNoGradFunction)})
        nograd.update({("args", e.scope, e.receiver, e.method): (e.params, f"(`{e.cls}.{e.method}`, defined at {e.where})")
                       for e in facts.entries if isinstance(e, EntryNoGradArgs)})
        for e in facts.entries:  # `guesser(x)`: a no-grad forward of the module it was built with
            if isinstance(e, EntryNoGradHeld):
                nograd.setdefault(("held", e.scope, e.receiver), []).append(
                    (e.held, f"`{'.'.join(e.receiver)}` (`{e.cls}.{e.method}`, defined at {e.where}, "
                             f"runs the `{'.'.join(e.held)}` it was built with under no_grad)"))
        reported: Set[int] = set()  # a helper's forward reached from several regions: once
        for frame, body, region in self._scopes(facts):
            walker = _Walker(facts, frame, region_withs, modules, nograd)
            walker.block(body, _outer_grad(frame, None), ())
            if walker.cleared:
                continue
            calls = [call for call in walker.calls if call.key not in frozen]
            yield from self._pairs(ctx, calls, region, reported)

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

    def _pairs(self, ctx, calls: List[_Call], region: Region, done: Set[int]):
        if _cache_disabled(region):
            return
        first_nograd: Dict[Tuple[str, ...], _Call] = {}
        reported: Set[Tuple[str, ...]] = set()
        for call in calls:
            if call.grad is False:
                first_nograd.setdefault(call.key, call)
                continue
            if call.grad is not True or call.key in reported or id(call.node) in done:
                continue
            earlier = first_nograd.get(call.key)
            if earlier is None or _exclusive(earlier.path, call.path):
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


def _exclusive(a: Sequence[Tuple[int, int]], b: Sequence[Tuple[int, int]]) -> bool:
    """Two code paths that cannot both run: different branches of one if/try."""
    branches = dict(a)
    return any(node in branches and branches[node] != branch for node, branch in b)


def _frozen(facts) -> Set[Tuple[str, ...]]:
    """Modules the file freezes (`text_encoder.requires_grad_(False)`): their weights need no
    gradient, and autocast does not cache casts of weights that do not require grad."""
    found: Set[Tuple[str, ...]] = set()
    for site in facts.tree.calls:
        func = site.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "requires_grad_"
            and site.node.args
            and literal_bool(site.node.args[0].value) is False
        ):
            dotted = dotted_name(func.value)
            if dotted:
                found.add(dotted)
    return found


def _module_attrs(facts) -> Set[Tuple[str, str]]:
    """(class, attr) for `self.attr = SomeClass(...)` / `nn.Linear(...)`: module-like attrs."""
    found: Set[Tuple[str, str]] = set()
    for site in facts.tree.assigns:
        value = site.value
        if not isinstance(value, cst.Call):
            continue
        name = dotted_name(value.func)
        if not name or not name[-1][:1].isupper():
            continue
        for target in site.targets:
            owner = facts.callgraph.self_attr_owner(target, site.frame)
            if owner is not None:
                found.add(owner)
    return found


def grad_mode(exprs, grad: Optional[bool], frame: Frame) -> Optional[bool]:
    """The grad mode after entering these context managers (or decorators): False under
    `no_grad`/`inference_mode`, True under `enable_grad`, None for `set_grad_enabled(flag)`."""
    for expr in exprs:
        call = expr if isinstance(expr, cst.Call) else None
        qualified = resolve_expr(call.func if call is not None else expr, frame)
        if qualified in NO_GRAD:
            grad = False
        elif qualified in ENABLE_GRAD:
            grad = True
        elif qualified in SET_GRAD and call is not None and call.args:
            grad = literal_bool(call.args[0].value)
    return grad


def _outer_grad(frame: Frame, with_node: Optional[cst.With]) -> Optional[bool]:
    """The grad mode a region body starts in: False inside an enclosing `no_grad` (a with item
    next to the autocast one, an outer with, or a `@torch.no_grad()` decorator)."""
    chain = []
    current: Optional[Frame] = frame
    while current is not None:
        node = current.node
        if current.kind == "with" and isinstance(node, cst.With):
            chain.append([item.item for item in node.items])
        elif current.kind == "function" and isinstance(node, cst.FunctionDef):
            chain.append([dec.decorator for dec in node.decorators])
            break
        else:
            break
        current = current.parent
    grad: Optional[bool] = True
    for exprs in reversed(chain):
        grad = grad_mode(exprs, grad, frame.parent or frame)
    return grad


class _Walker:
    """Walks one region body in order; records calls of module-like objects with their grad
    mode, the if/try branches they sit in, and whether the autocast cache is cleared."""

    def __init__(self, facts, frame: Frame, region_withs, modules, nograd=None) -> None:
        self.facts = facts
        self.nograd = nograd or {}  # (scope, receiver, method) -> the method, from the project pass
        self.frame = frame
        self.region_withs = region_withs
        self.modules = modules
        self.calls: List[_Call] = []
        self.cleared = False
        self.order = 0

    def block(self, stmts, grad: Optional[bool], path) -> None:
        for stmt in stmts:
            self.stmt(stmt, grad, path)

    def suite(self, suite: cst.BaseSuite, grad, path) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.block(suite.body, grad, path)
        elif isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.expr_calls(small, grad, path)

    def stmt(self, stmt, grad, path) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.expr_calls(small, grad, path)
        elif isinstance(stmt, cst.If):
            self.expr_calls(stmt.test, grad, path)
            self.suite(stmt.body, grad, path + ((id(stmt), 0),))
            if isinstance(stmt.orelse, cst.If):
                self.stmt(stmt.orelse, grad, path + ((id(stmt), 1),))
            elif stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path + ((id(stmt), 1),))
        elif isinstance(stmt, (cst.For, cst.While)):
            self.expr_calls(stmt.iter if isinstance(stmt, cst.For) else stmt.test, grad, path)
            self.suite(stmt.body, grad, path)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path)
        elif isinstance(stmt, cst.Try):
            self.suite(stmt.body, grad, path + ((id(stmt), 0),))
            for i, handler in enumerate(stmt.handlers):
                self.suite(handler.body, grad, path + ((id(stmt), i + 1),))
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path + ((id(stmt), 0),))
            if stmt.finalbody is not None:
                self.suite(stmt.finalbody.body, grad, path)
        elif isinstance(stmt, cst.With):
            if id(stmt) in self.region_withs:
                return  # a nested autocast region is a scope of its own
            for item in stmt.items:
                self.expr_calls(item.item, grad, path)
            self.suite(stmt.body, self._grad_mode(stmt, grad), path)
        # function and class definitions run later: not part of this pass

    def _grad_mode(self, node: cst.With, grad: Optional[bool]) -> Optional[bool]:
        return grad_mode([item.item for item in node.items], grad, self.frame)

    def expr_calls(self, node: cst.CSTNode, grad, path) -> None:
        for call in calls_in(node):
            self.order += 1
            dotted = dotted_name(call.func)
            if dotted and resolve(dotted, self.frame) in CLEAR_CACHE:
                self.cleared = True
                continue
            for key, via in self._nograd_arguments(call, dotted):
                self.calls.append(_Call(call, key, False, self.order, path, via))
            for key, node, via in self._forwarded_arguments(call, dotted) if grad is not None else ():
                # `self._forward(model, ...)`: a helper of this file runs its `model` forward in
                # the caller's grad mode; with grad it is reported at the helper's forward
                if grad:
                    self.calls.append(_Call(node, key, True, self.order, path, via, call))
                else:  # the helper's own call is the no-grad forward to cite
                    self.calls.append(_Call(call, key, False, self.order, path,
                                            via.replace(" at line {grad_call_line}", "")))
            for key, via in (self.nograd.get(("held", scope_key(self.frame), tuple(dotted))) or ()) if dotted else ():
                self.calls.append(_Call(call, key, False, self.order, path, via))
            via = self._nograd_method(call, dotted)
            if via is not None:  # `model.generate(...)`: a @no_grad method calling self(...)
                self.calls.append(_Call(call, dotted[:-1], False, self.order, path, via))
                continue
            key = self._module_key(call)
            if key is not None:
                self.calls.append(_Call(call, key, grad, self.order, path))

    def _nograd_method(self, call: cst.Call, dotted) -> Optional[str]:
        """`receiver.m(...)` where `m` is a method decorated no_grad that calls `self(...)`: of a
        class of this file the receiver is an instance of, or as the project pass found it."""
        if not dotted or len(dotted) < 2 or dotted[-1] == "forward":
            return None
        if self.nograd:
            found = self.nograd.get((scope_key(self.frame), tuple(dotted[:-1]), dotted[-1]))
            if found is not None:
                return found
        func = call.func
        assert isinstance(func, cst.Attribute)
        graph = self.facts.callgraph
        cls = graph.class_of_instance(func.value, self.frame)
        if cls is not None and nograd_forward(graph.method(cls, dotted[-1])):
            return f"`{cls}.{dotted[-1]}`{_METHOD}"
        return None

    def _nograd_arguments(self, call: cst.Call, dotted):
        """(receiver key, how) for the arguments `f(model, ...)` runs forward without grad: `f`
        calls that parameter under no_grad, a function of this file or, as the project pass
        found, of another (`@torch.no_grad() def pseudo_label(model, ...)` in utils/ssl.py)."""
        if not dotted:
            return []
        params, where = (), ""
        if len(dotted) > 1 or not bound_locally(self.frame, dotted[0]):
            for callee in self.facts.callgraph.callees(CallSite(call, self.frame, None, None, None)):
                params = nograd_params(callee)
                if params and any(nograd_params(other) != params
                                  for other in overrides(self.facts.regions, call, self.frame, callee)):
                    params = ()  # a subclass of this file overrides it: which one runs is not known
        if not params and self.nograd and len(dotted) > 1:
            found = self.nograd.get(("args", scope_key(self.frame), tuple(dotted[:-1]), dotted[-1]))
            if found is not None:
                params, where = found
        if not params and self.nograd:
            found = self.nograd.get(resolve(dotted, self.frame) or relative_ref(dotted, self.frame) or "")
            if isinstance(found, tuple):
                params, where = found
        out = []
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return []
        for index, name in params:
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and 0 <= index < len(positional):
                arg = positional[index]
            key = dotted_name(arg.value) if arg is not None else None
            if key:
                where_text = f" {where}" if where else ""
                out.append((tuple(key), f"`{'.'.join(dotted)}`{where_text}, which runs its `{name}` under no_grad"))
        return out

    def _forwarded_arguments(self, call: cst.Call, dotted):
        """(receiver key, the helper's forward, how) for the arguments a function of this file
        called here runs forward in the caller's grad mode (nograd_methods.grad_params): every
        function the call may run (a subclass of this file overriding a method included) does
        it alike."""
        if not dotted or any(a.star for a in call.args) or (len(dotted) == 1 and bound_locally(self.frame, dotted[0])):
            return []
        callees = self.facts.callgraph.callees(CallSite(call, self.frame, None, None, None))
        if len(callees) != 1 or callees[0] is self.frame.function:
            return []
        callee = callees[0]
        params = grad_params(callee)
        others = overrides(self.facts.regions, call, self.frame, callee) if params else ()
        if any([p[:2] for p in grad_params(other)] != [p[:2] for p in params] for other in others):
            return []
        positional = [a for a in call.args if a.keyword is None]
        out = []
        for index, name, node in params:
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and 0 <= index < len(positional):
                arg = positional[index]
            key = dotted_name(arg.value) if arg is not None else None
            if key:
                how = f"`{'.'.join(dotted)}(...)` at line {{grad_call_line}}, which runs its `{name}` forward"
                out.append((tuple(key), node, how))
        return out

    def _module_key(self, call: cst.Call) -> Optional[Tuple[str, ...]]:
        dotted = dotted_name(call.func)
        if not dotted:
            return None
        while len(dotted) > 1 and dotted[-1] in FORWARD_METHODS:
            dotted = dotted[:-1]
        if dotted[0] in _BUILTINS or resolve(dotted, self.frame) is not None:
            return None
        if len(dotted) == 1:
            if dotted[0] in self.facts.callgraph.instances or _MODEL_NAME.search(dotted[0]):
                return dotted
            return None
        if dotted[0] == "self" and len(dotted) == 2:
            cls = self.frame.class_frame
            if cls is not None and (
                (cls.name, dotted[1]) in self.modules
                or (cls.name, dotted[1]) in self.facts.callgraph.self_instances
            ):
                return dotted
            return dotted if _MODEL_NAME.search(dotted[1]) else None
        return dotted if _MODEL_NAME.search(dotted[-1]) else None
