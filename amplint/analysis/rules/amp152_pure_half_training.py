"""AMP152 pure-half-training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.cast_back import cast_back_between
from amplint.analysis.facts.returned_casts import moved_root
from amplint.analysis.facts.syntax import params
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name
from amplint.analysis.rules import Flag, Rule

# Text that shows the file keeps float32 master weights or hands precision to a framework.
MASTER_WEIGHT_HINTS = (
    "master", "FP16_Optimizer", "fp32_param", "float_param", "amp.initialize", "deepspeed",
    "MixedPrecision", "kahan", "Kahan", "stochastic_round", "loss_scale",
)
PARAM_METHODS = ("parameters", "named_parameters")


@dataclass
class _Optimizer:
    site: CallSite
    name: str  # the optimizer class, as written
    target: Optional[Tuple[str, ...]]  # what it is bound to: ("opt",) or ("self", "opt")
    index: int
    built: Optional[object] = None  # a helper builds it (facts/chosen_classes.py `Chosen.built`)


class PureHalfTraining(Rule):
    """## What it does
    Finds a model cast to float16 (`model.half()`, `model.to(torch.float16)`) and then trained
    by a plain `torch.optim` optimizer built over that model's parameters and stepped, in a file
    with no autocast and no GradScaler: pure fp16 training.

    A call of a method of the file that casts the model's submodules
    (`model.convert_to_fp16()`) counts as a cast, and so does a call of a builder that returns
    the model it casts with `.half()`: a function of the file (reported at its cast), or one
    another file defines (reported at the call; a call passing False for the flag guarding the
    cast is not). A model moved after its cast (`Net().half().to("cuda")`) is still half, and an
    optimizer a helper of the file builds counts when the helper returns a new `torch.optim`
    optimizer on every path over the parameters of the model the call passes it
    (`optimizer = create_optimizer(net, args)`, LoRA's `create_adam_optimizer_from_args`).

    ## Why is this bad?
    The optimizer updates the float16 weights in place, with no float32 master copy. Any update
    smaller than half the gap between neighbouring fp16 values is lost: a weight of 1.0 with
    `lr=1e-3` and a gradient of 0.04 stays exactly 1.0 after `SGD.step()`. Adam's second moment
    underflows (a gradient of 1e-4 squares to 0 in fp16) and its `eps=1e-8` rounds to 0, so the
    step divides by zero and the weights become `-inf`. BatchNorm running statistics accumulate
    in fp16 as well. Training stalls or diverges with no error. Mixed precision keeps the model
    float32 and runs the forward under `torch.autocast`, with a `GradScaler` for float16.
    Half-precision *inference* is fine and is not reported: the rule needs an optimizer over the
    half model's parameters, stepped after the cast. Nor is a model cast back to float32
    (`model = model.float()`, the module's in-place `model.float()`) by a statement of the same
    body before the optimizer is built: it trains float32 weights.

    ## Example
    ```python
    model = Net().cuda().half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = F.cross_entropy(model(x.cuda().half()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Fix safety
    A **suggestion**, no edit: moving to autocast changes the memory use (float32 weights) and
    the training loop (a GradScaler), and some projects train in pure fp16 on purpose with their
    own master weights or loss scaling (files that mention master weights, `FP16_Optimizer`,
    apex `amp.initialize`, DeepSpeed, Kahan summation or loss scaling are not reported).
    """

    code = "AMP152"
    name = "pure-half-training"
    severity = Severity.WARNING
    fix_safety = "suggestion"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half", "f16")

    flag = [
        Flag(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "model = Net().cuda().half()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            "for x, y in loader:\n"
            "    loss = F.cross_entropy(model(x.cuda().half()), y.cuda())\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n",
        ),
        Flag(  # a trainer class: cast in __init__, optimizer over a filter of the parameters
            "import torch\n"
            "from torch import optim\n"
            "class Trainer:\n"
            "    def __init__(self, model, lr):\n"
            "        self.model = model.cuda()\n"
            "        if args.fp16:\n"
            "            self.model.half()\n"
            "        params = filter(lambda p: p.requires_grad, self.model.parameters())\n"
            "        self.optimizer = optim.Adam(params, lr=lr)\n"
            "    def step(self, batch):\n"
            "        loss = self.model(**batch).loss\n"
            "        loss.backward()\n"
            "        self.optimizer.step()\n",
        ),
        Flag(  # .to(dtype=torch.float16), optimizer handed to a train function
            "import torch\n"
            "def main():\n"
            "    model = build_model(cfg).to(device, dtype=torch.float16)\n"
            "    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"
            "    train(model, opt, loader)\n"
            "def train(model, opt, loader):\n"
            "    for batch in loader:\n"
            "        model(batch).backward()\n"
            "        opt.step()\n",
        ),
        Flag(  # half through the model's own method, then a plain optimizer
            "import torch\n"
            "from torch import nn\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.body = Body()\n"
            "    def convert_to_fp16(self):\n"
            "        self.body.half()\n"
            "model = Net().cuda()\n"
            "model.convert_to_fp16()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for x, y in loader:\n"
            "    loss = loss_fn(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n",
        ),
    ]
    clean = [
        # a method of that name that casts nothing
        "import torch\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.body = Body()\n"
        "    def convert_to_fp16(self):\n"
        "        self.use_fp16 = True\n"
        "model = Net().cuda()\n"
        "model.convert_to_fp16()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x, y in loader:\n"
        "    loss = loss_fn(model(x), y)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
        # half inference
        "import torch\n"
        "model = Net().cuda().half().eval()\n"
        "with torch.no_grad():\n"
        "    out = model(x.cuda().half())\n",
        # the AMP recipe: fp32 model, autocast, GradScaler
        "import torch\n"
        "model = Net().cuda()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        loss = loss_fn(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # trained in fp32, cast to half afterwards for export / evaluation
        "import torch\n"
        "def main():\n"
        "    model = Net().cuda()\n"
        "    opt = torch.optim.Adam(model.parameters())\n"
        "    for x, y in loader:\n"
        "        loss_fn(model(x), y).backward()\n"
        "        opt.step()\n"
        "    model.half()\n"
        "    evaluate(model)\n",
        # bfloat16 weights (a deliberate choice for LLM fine-tuning) are another rule's business
        "import torch\n"
        "model = AutoModelForCausalLM.from_pretrained(name).to(torch.bfloat16)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
        "for batch in loader:\n"
        "    model(**batch).loss.backward()\n"
        "    opt.step()\n",
        # fp16 weights with hand-kept fp32 master copies
        "import torch\n"
        "model = Net().cuda().half()\n"
        "master_params = [p.detach().clone().float().requires_grad_() for p in model.parameters()]\n"
        "opt = torch.optim.SGD(master_params, lr=0.1)\n"
        "opt.step()\n",
        # the optimizer trains another, float32 model
        "import torch\n"
        "teacher = Net().cuda().half().eval()\n"
        "student = Small().cuda()\n"
        "opt = torch.optim.SGD(student.parameters(), lr=0.1)\n"
        "for x in loader:\n"
        "    loss = kd(student(x), teacher(x.half()).float())\n"
        "    loss.backward()\n"
        "    opt.step()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        if facts.regions.uses_autocast() or facts.scalers.any:
            return
        if any(hint in ctx.source for hint in MASTER_WEIGHT_HINTS):
            return
        casts = facts.fp16.model_casts
        if not any(dtype == "float16" for dtype in casts.values()) and not facts.remote_casts:
            return
        index = {id(site.node): i for i, site in enumerate(facts.tree.calls)}
        optimizers = self._optimizers(facts, index)
        if not optimizers:
            return
        steps = self._steps(facts, index)
        reported = set()
        for site, model, cast, via in self._casts(ctx, casts):
            if id(cast) in reported:
                continue  # a builder trained at two of its calls: one finding at its cast
            key = _scoped(model, site.frame)
            for opt in optimizers:
                if not _over(facts, opt, model) or _scoped(model, opt.site.frame) != key:
                    continue
                if not self._trained_after(site, opt, steps, index):
                    continue
                if _cast_back(ctx, site, opt, model):
                    continue  # `model = model.float()` before the optimizer: it trains float32
                text = ".".join(model)
                losses = "small updates round away"
                if "Adam" in opt.name:
                    losses += ", Adam's eps rounds to 0 and its second moment underflows"
                if "BatchNorm" in ctx.source or "batch_norm" in ctx.source:
                    losses += ", BatchNorm statistics accumulate in fp16"
                message = (
                    f"`{text}` is cast to float16{via} and trained by a plain `{opt.name}`{_built_by(opt)} (line "
                    "{opt_line}) with no autocast or GradScaler: without float32 master weights "
                    f"{losses}; keep the model float32 and train under `torch.autocast` with "
                    "`torch.amp.GradScaler`"
                )
                related = {"opt_line": opt.site.node}
                if cast is not site.node:
                    related["call_line"] = site.node
                yield self.report(cast, message, related=related)
                reported.add(id(cast))
                break

    @staticmethod
    def _casts(ctx, casts):
        """(the site that makes the model half where it is trained, the name it ends up in, the
        node to report, how it is cast): the file's float16 casts, and the calls of a function
        of the file that returns a model it casts (reported at that cast)."""
        facts = ctx.facts
        for site in facts.tree.calls:
            if casts.get(id(site.node)) != "float16":
                continue
            model = _cast_model(site)
            if model is not None:
                via = ""
                if id(site.node) in facts.fp16.method_cast_calls:
                    via = f" (its submodules, by `{ctx.module.code_for_node(site.node.func)}()`)"
                yield site, model, site.node, via
        returned = facts.returned_casts
        for site in facts.tree.calls:
            found = returned.get(id(site.node))
            if found is None or found[0] != "float16":
                continue
            model = _cast_model(site, returned=True)
            if model is not None:
                callee = ctx.module.code_for_node(site.node.func)
                yield site, model, found[1].node, f" (in `{callee}`, which returns it to the call at line {{call_line}})"
        for site in facts.tree.calls:  # a builder of another file (reported at the call)
            entry = facts.remote_casts.get(id(site.node))
            model = _cast_model(site, returned=True) if entry is not None else None
            if model is not None:
                where, _, function = entry.callee.partition(": ")
                yield site, model, site.node, f" (at {where}:{entry.line}, through this call: `{function}` returns it)"

    # -- facts ----------------------------------------------------------------------------
    @staticmethod
    def _optimizers(facts, index) -> List[_Optimizer]:
        found: List[_Optimizer] = []
        targets: Dict[int, Tuple[str, ...]] = {}
        for assign in facts.tree.assigns:
            if len(assign.targets) == 1:
                dotted = dotted_name(assign.targets[0])
                if dotted and (len(dotted) == 1 or (len(dotted) == 2 and dotted[0] == "self")):
                    targets[id(assign.value)] = dotted
        for qualified, site in facts.qualified_calls:
            if not _optimizer_class(qualified):
                continue
            last = qualified.rsplit(".", 1)[-1]
            found.append(_Optimizer(site, last, targets.get(id(site.node)), index[id(site.node)]))
        chosen = facts.chosen_classes
        for site in facts.tree.calls:  # `opt = create_optimizer(model, args)`
            if id(site.node) not in targets:
                continue
            picked = chosen.constructed(site.node, site.frame)
            if picked is None or picked.built is None or not _optimizer_class(picked.qualified):
                continue
            last = picked.qualified.rsplit(".", 1)[-1]
            found.append(_Optimizer(site, last, targets[id(site.node)], index[id(site.node)], picked.built))
        return found

    @staticmethod
    def _steps(facts, index) -> List[Tuple[Tuple[str, ...], CallSite]]:
        steps = []
        for site in facts.tree.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "step" and not site.node.args:
                dotted = dotted_name(func.value)
                if dotted:
                    steps.append((dotted, site))
        return steps

    @staticmethod
    def _trained_after(cast: CallSite, opt: _Optimizer, steps, index) -> bool:
        """The optimizer is stepped, and the cast happens before the training: before the
        optimizer is built, or before one of its steps in the same function."""
        target = opt.target
        if target is None:
            return False
        own = [s for d, s in steps if d == target]
        if target[0] != "self":
            own = [s for s in own if s.frame.scope is opt.site.frame.scope]
        if own:
            if index[id(cast.node)] < opt.index and cast.frame.scope is opt.site.frame.scope:
                return True
            if any(
                s.frame.scope is cast.frame.scope and index[id(s.node)] > index[id(cast.node)]
                for s in own
            ):
                return True
            if target[0] == "self" and cast.frame.scope.name == "__init__":
                return True
            return False
        # `train(model, opt, loader)`: the optimizer leaves this function; a step elsewhere
        # in the file on a name that holds an optimizer is the training.
        if target[0] == "self" or index[id(cast.node)] > opt.index:
            return False
        if cast.frame.scope is not opt.site.frame.scope:
            return False
        return _passed_on(opt, target) and any("opt" in dotted[-1] for dotted, _ in steps)


def _built_by(opt: _Optimizer) -> str:
    return f" built by `{opt.built.function.name}`" if opt.built is not None else ""


def _optimizer_class(qualified: Optional[str]) -> bool:
    if not qualified or not qualified.startswith("torch.optim.") or "lr_scheduler" in qualified:
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last[:1].isupper() and last != "Optimizer"


def _over(facts, opt: _Optimizer, model: Tuple[str, ...]) -> bool:
    """The optimizer is built over the model's parameters: at its call, or in the helper that
    builds it, over the parameters of the helper's parameter this call passes `model` for (the
    parameter bound nowhere else in the helper)."""
    built = opt.built
    if built is None:
        return _over_params(facts, opt.site, model)
    helper = built.function
    for param in params(helper.node):
        name = param.name.value
        passed = built.argument(name)
        if passed is None or dotted_name(passed) != model or not facts.tree.bound_once(helper, name):
            continue
        if all(_over_params(facts, CallSite(value, helper, None, None, None), (name,)) for value in built.values):
            return True
    return False


def _cast_model(site: CallSite, returned: bool = False) -> Optional[Tuple[str, ...]]:
    """The name the half model ends up in: `model = Net().half()` -> ("model",),
    `self.model.half()` -> ("self", "model"), `model = model.to(torch.float16)`."""
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    call = site.node
    if returned:  # `model = build(cfg).cuda()`; a call whose value is dropped gives no model
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and moved_root(small.value, site.frame) is call):
            return None
        dotted = dotted_name(small.targets[0].target)
    elif isinstance(small, cst.Assign) and len(small.targets) == 1 and moved_root(small.value, site.frame) is call:
        dotted = dotted_name(small.targets[0].target)  # `net = Net().half().to("cuda")`: the move keeps it
    elif isinstance(small, cst.Expr) and small.value is call:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        root = func.value
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value  # `model.cuda().half()`
        dotted = dotted_name(root)
    else:
        return None
    if not dotted or not (len(dotted) == 1 or (len(dotted) == 2 and dotted[0] == "self")):
        return None
    return dotted


def _cast_back(ctx, site: CallSite, opt, model: Tuple[str, ...]) -> bool:
    if site.line_stmt is None:
        return False
    function = site.frame.function
    return cast_back_between(function.node if function is not None else ctx.module, site.line_stmt,
                             opt.site.node, model)


def _scoped(model: Tuple[str, ...], frame: Frame):
    """Where a name lives: a function's local, or a class's attribute."""
    if model[0] == "self":
        cls = frame.class_frame
        return ("class", id(cls)) if cls is not None else None
    return ("scope", id(frame.scope))


class _ParamsOf(cst.CSTVisitor):
    """Finds `<model>.parameters()` / `.named_parameters()`, and names that may hold them."""

    def __init__(self, model: Tuple[str, ...]) -> None:
        self.model = model
        self.found = False
        self.names: List[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in PARAM_METHODS
            and dotted_name(func.value) == self.model
        ):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)


def _over_params(facts, site: CallSite, model: Tuple[str, ...]) -> bool:
    """The optimizer is built over the model's parameters, directly, in param groups, or
    through one local (`params = filter(..., model.parameters())`)."""
    visitor = _ParamsOf(model)
    for arg in site.node.args:
        arg.visit(visitor)
    if visitor.found:
        return True
    scope = site.frame.scope
    names = set(visitor.names)
    for assign in facts.tree.assigns:
        if assign.frame.scope is not scope or len(assign.targets) != 1:
            continue
        target = assign.targets[0]
        if isinstance(target, cst.Name) and target.value in names:
            inner = _ParamsOf(model)
            assign.value.visit(inner)
            if inner.found:
                return True
    return False


class _PassedOn(cst.CSTVisitor):
    def __init__(self, target: Tuple[str, ...]) -> None:
        self.target = target
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if any(dotted_name(arg.value) == self.target for arg in node.args):
            self.found = True


def _passed_on(opt: _Optimizer, target: Tuple[str, ...]) -> bool:
    """The optimizer is handed to a call (`train(model, opt, loader)`)."""
    visitor = _PassedOn(target)
    opt.site.frame.scope.node.visit(visitor)
    return visitor.found
