"""AMP102 bce-under-autocast."""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.syntax import holder_key
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.facts.defuse import is_duplicable
from amplint.analysis.facts.names import binding_scope, through_partial
from amplint.analysis.rules._util import (
    argument, dotted_expr, has_star_args, kwarg, method_call, positional, region_note,
)

BCE_FUNCTIONS = ("torch.nn.functional.binary_cross_entropy", "torch.binary_cross_entropy")
BCE_CLASS = "torch.nn.BCELoss"
SIGMOIDS = ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit")


class BceUnderAutocast(Rule):
    """## What it does
    Finds `F.binary_cross_entropy`, `torch.binary_cross_entropy` and calls of `nn.BCELoss`
    instances (also `self.crit = nn.BCELoss()` called later, and losses of this file called under
    autocast) inside an autocast region that is or may be on CUDA.

    ## Why is this bad?
    CUDA autocast refuses it outright:
    `RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to
    autocast. Many models use a sigmoid layer right before the binary cross entropy layer. In
    this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits
    or torch.nn.BCEWithLogitsLoss.` In float16 a sigmoid output saturates to exactly 0 or 1 and
    the log of it is -inf, so torch will not run it. CPU autocast runs BCE in float32 and does not
    raise: regions known to be on the CPU are not reported. The runtime monitor follows the same
    semantics: it reports BCE under CUDA autocast, and under CPU autocast only when CPU stands in
    for CUDA (`monitor(stand_in_for_cuda=True)`, which `verify` sets on a machine without a GPU).

    ## Example
    ```python
    with torch.autocast("cuda"):
        logits = model(x)
        loss = F.binary_cross_entropy(torch.sigmoid(logits), y)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda"):
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y)
    ```

    ## Fix safety
    Both fixes are **safe**. When the input is visibly a sigmoid (`torch.sigmoid(z)`,
    `z.sigmoid()`, `F.sigmoid(z)` in the call, or a local assigned once from one and not
    changed before the loss), the call becomes `binary_cross_entropy_with_logits(z, ...)` (an
    `nn.BCELoss(...)` instance, or an inline `nn.BCELoss(...)(...)`, becomes
    `nn.BCEWithLogitsLoss(...)` with its arguments), keeping `weight`, `reduction` and
    positional arguments; `pos_weight` stays unset. The same loss, computed more accurately:
    in fp32 it differs by at most about 1e-6 relative (BCE rounds the sigmoid and clamps the
    log at -100). The shared def-use facts decide when `z` may be moved to the loss: not when
    it is rebound (`z = z * 2`), changed in place (`z.mul_(2)`) or passed to a call in
    between, nor when the local probabilities are. A call is never duplicated: `p =
    torch.sigmoid(net(x))` becomes `logits = net(x)` (plus `p = torch.sigmoid(logits)` when `p`
    is read elsewhere), so the network still runs once. Otherwise the statement is put in an
    fp32 island, `with torch.autocast(<device>, enabled=False):` with `.float()` inputs, which
    in an fp32 run changes nothing at all. tests/test_fp32_proof.py runs both fixes before and
    after in fp32. `torch.autocast` needs torch >= 1.10: for a project that targets an older
    torch (`target-torch`, or its requirement on torch) the island is
    `torch.cuda.amp.autocast(enabled=False)` on CUDA, and there is no island fix otherwise.
    """

    code = "AMP102"
    name = "bce-under-autocast"
    severity = Severity.ERROR
    fix_safety = "safe"
    triggers = ("autocast", "optim_context", "auto_fp16")

    flag = [
        Flag(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "def train_step(model, x, y):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        logits = model(x)\n"
            "        loss = F.binary_cross_entropy(torch.sigmoid(logits), y, reduction='sum')\n"
            "    return loss\n",
            fixed="import torch\n"
            "import torch.nn.functional as F\n"
            "def train_step(model, x, y):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        logits = model(x)\n"
            "        loss = F.binary_cross_entropy_with_logits(logits, y, reduction='sum')\n"
            "    return loss\n",
        ),
        Flag(  # a BCELoss instance on self, probabilities from elsewhere: fp32 island
            "import torch\n"
            "from torch import nn\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.crit = nn.BCELoss()\n"
            "    def step(self, probs, y):\n"
            "        with torch.cuda.amp.autocast():\n"
            "            # probabilities come from the model head\n"
            "            loss = self.crit(probs, y)\n"
            "        return loss\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.crit = nn.BCELoss()\n"
            "    def step(self, probs, y):\n"
            "        with torch.cuda.amp.autocast():\n"
            "            # probabilities come from the model head\n"
            "            with torch.autocast(\"cuda\", enabled=False):\n"
            "                loss = self.crit(probs.float(), y.float())\n"
            "        return loss\n",
        ),
        Flag(  # a loss function of this file called under autocast; sigmoid via a local
            "import torch\n"
            "from torch.nn.functional import binary_cross_entropy\n"
            "def dice_bce(logits, target):\n"
            "    probs = logits.sigmoid()\n"
            "    return binary_cross_entropy(probs, target)\n"
            "def run(model, x, y, device):\n"
            "    with torch.autocast(device_type=device):\n"
            "        return dice_bce(model(x), y)\n",
            fixed="import torch\n"
            "from torch.nn.functional import binary_cross_entropy\n"
            "def dice_bce(logits, target):\n"
            "    probs = logits.sigmoid()\n"
            "    return torch.nn.functional.binary_cross_entropy_with_logits(logits, target)\n"
            "def run(model, x, y, device):\n"
            "    with torch.autocast(device_type=device):\n"
            "        return dice_bce(model(x), y)\n",
        ),
        Flag(  # BCELoss instance always fed a sigmoid: becomes BCEWithLogitsLoss
            "import torch.nn as nn\n"
            "import torch\n"
            "criterion = nn.BCELoss(weight=w)\n"
            "ctx = torch.amp.autocast('cuda', enabled=use_amp)\n"
            "with ctx:\n"
            "    loss = criterion(torch.sigmoid(model(x)), y)\n",
            fixed="import torch.nn as nn\n"
            "import torch\n"
            "criterion = nn.BCEWithLogitsLoss(weight=w)\n"
            "ctx = torch.amp.autocast('cuda', enabled=use_amp)\n"
            "with ctx:\n"
            "    loss = criterion(model(x), y)\n",
        ),
        Flag(  # a local bound once to the function (DeepCTR-Torch's `loss_func`)
            "import torch\n"
            "import torch.nn.functional as F\n"
            "def fit(model, x, y):\n"
            "    loss_func = F.binary_cross_entropy\n"
            "    with torch.autocast('cuda'):\n"
            "        p = model(x)\n"
            "        loss = loss_func(p, y, reduction='sum')\n"
            "    return loss\n",
            fixed="import torch\n"
            "import torch.nn.functional as F\n"
            "def fit(model, x, y):\n"
            "    loss_func = F.binary_cross_entropy\n"
            "    with torch.autocast('cuda'):\n"
            "        p = model(x)\n"
            "        with torch.autocast(\"cuda\", enabled=False):\n"
            "            loss = loss_func(p.float(), y.float(), reduction='sum')\n"
            "    return loss\n",
        ),
        Flag(  # a module-level partial: flagged, no fix (the partial holds `weight=`)
            "import functools\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "bce = functools.partial(F.binary_cross_entropy, weight=None)\n"
            "def fit(model, x, y):\n"
            "    with torch.autocast('cuda'):\n"
            "        return bce(torch.sigmoid(model(x)), y)\n",
        ),
    ]
    clean = [
        # a name bound twice (or in a branch) is unknown: never guessed
        "import torch\nimport torch.nn.functional as F\n"
        "def fit(model, x, y, probs):\n"
        "    loss_func = F.binary_cross_entropy_with_logits\n"
        "    if probs:\n"
        "        loss_func = F.binary_cross_entropy\n"
        "    with torch.autocast('cuda'):\n"
        "        return loss_func(model(x), y)\n",
        "import torch\nimport torch.nn.functional as F\n"
        "def fit(model, x, y, probs):\n"
        "    if probs:\n"
        "        loss_func = F.binary_cross_entropy\n"
        "    else:\n"
        "        loss_func = F.binary_cross_entropy_with_logits\n"
        "    with torch.autocast('cuda'):\n"
        "        return loss_func(model(x), y)\n",
        # the with-logits forms are autocast-safe
        "import torch\nimport torch.nn.functional as F\n"
        "with torch.autocast('cuda'):\n"
        "    loss = F.binary_cross_entropy_with_logits(logits, y)\n"
        "    loss2 = torch.nn.BCEWithLogitsLoss()(logits, y)\n",
        # CPU autocast runs BCE in fp32
        "import torch\nimport torch.nn.functional as F\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    loss = F.binary_cross_entropy(torch.sigmoid(z), y)\n",
        # the documented fp32 island
        "import torch\nimport torch.nn.functional as F\n"
        "with torch.autocast('cuda'):\n"
        "    p = model(x)\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        loss = F.binary_cross_entropy(p.float(), y.float())\n",
        # BCE after the region
        "import torch\nimport torch.nn.functional as F\n"
        "with torch.autocast('cuda'):\n"
        "    p = torch.sigmoid(model(x))\n"
        "loss = F.binary_cross_entropy(p.float(), y)\n",
        # no autocast at all
        "import torch.nn as nn\ncrit = nn.BCELoss()\nloss = crit(p, y)\n",
        # a custom @custom_fwd(cast_inputs=float32) loss runs with autocast off
        "import torch\nimport torch.nn.functional as F\n"
        "class Loss(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @torch.amp.custom_fwd(device_type='cuda', cast_inputs=torch.float32)\n"
        "    def forward(ctx, p, y):\n"
        "        return F.binary_cross_entropy(p, y)\n"
        "with torch.autocast('cuda'):\n"
        "    loss = Loss.apply(p, y)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        instances = self._instances(facts)
        # (holder key, id of the scope it is bound in) -> the assignments and the calls it reaches
        readable: Dict[tuple, List] = {}
        by_instance: Dict[tuple, List[CallSite]] = {}
        hits: List[Tuple[CallSite, str, Optional[tuple]]] = []
        qualifieds: Dict[int, Optional[str]] = {}
        for qualified, site in facts.qualified_calls:
            call = site.node
            key = None
            if qualified in BCE_FUNCTIONS:
                label = "binary_cross_entropy"
            elif isinstance(call.func, cst.Call) and _constructs_bce(facts, call.func, site.frame):
                label = "BCELoss"
            else:
                key = holder_key(call.func)
                if key is None or key not in instances:
                    continue
                seen = self._seen_assigns(facts, key, instances[key], site)
                if not seen:
                    continue  # `loss_fn` of another function (DLRM's evaluation BCELoss)
                key = (key, id(seen[0].frame.scope))
                readable[key] = seen
                by_instance.setdefault(key, []).append(site)
                label = "BCELoss"
            hits.append((site, label, key))
            qualifieds[id(site)] = qualified
        for site, label, key in hits:
            region = facts.active_region(site.frame)
            if region is None or not region.may_be_cuda:
                continue
            note, related = region_note(region)
            message = (
                f"`{label}` under CUDA autocast {note} raises 'RuntimeError: "
                "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
                "autocast'; use the with-logits form or an fp32 island"
            )
            fix = None
            if through_partial(site.dotted, site.frame):
                pass  # `partial(F.binary_cross_entropy, weight=w)`: the call shows only some arguments
            elif key is None:
                fix = self._logits_fix_function(ctx, site, qualifieds.get(id(site)))
            else:
                fix = self._logits_fix_instance(ctx, readable[key], by_instance.get(key, []))
            if fix is None and not through_partial(site.dotted, site.frame):
                fix = self._island_fix(ctx, site, region)
            if isinstance(fix, str):  # the island needs a torch the project does not target
                message, fix = f"{message}; {fix}", None
            yield self.report(site.node, message, fix=fix, related=related)

    # -- facts ----------------------------------------------------------------------------
    @staticmethod
    def _seen_assigns(facts, key: Tuple[str, str], assigns: List, site: CallSite) -> List:
        """The BCELoss assignments of `key` that the call at `site` can read: for a bare name,
        those in the scope whose binding of it the call sees (a `loss_fn` local to another
        function is not this one); all of them for `self.x` or a name some scope declares
        global/nonlocal."""
        kind, name = key
        if kind != "name" or name in facts.tree.declared_names:
            return assigns
        scope = binding_scope(site.frame, name)
        return [a for a in assigns if a.frame.scope is scope]

    @staticmethod
    def _instances(facts) -> Dict[Tuple[str, str], List]:
        found: Dict[Tuple[str, str], List] = {}
        for assign in facts.tree.assigns:
            if not isinstance(assign.value, cst.Call):
                continue
            if not _constructs_bce(facts, assign.value, assign.frame):
                continue
            for target in assign.targets:
                key = holder_key(target)
                if key is not None:
                    found.setdefault(key, []).append(assign)
        return found

    # -- fixes ----------------------------------------------------------------------------
    def _logits_for(self, ctx, site: CallSite, expr: cst.BaseExpression):
        """(logits, extra edits) when the BCE input `expr` is visibly sigmoid(logits), such that
        passing `logits` at `site` instead computes the same loss in fp32; else None.

        `sigmoid(z)` written in the call: `z`, evaluated where it was. A local `p` assigned once
        from `sigmoid(E)` before the call and not changed since (def-use facts): `E` itself when
        it can be written again unchanged (names, attributes; not rebound, mutated or passed on
        in between); when `E` is a call (`net(x)`), the assignment is split so it runs once:
        `logits = net(x)` (and `p = sigmoid(logits)` kept when `p` is read elsewhere)."""
        inner = _sigmoid_of(ctx.facts, expr, site.frame)
        if inner is not None:
            return inner, {}
        if not isinstance(expr, cst.Name):
            return None
        name = expr.value
        function = site.frame.function
        scope = function.node if function is not None else None
        defuse = ctx.facts.defuse
        assigns = [
            a for a in ctx.facts.tree.assigns
            if a.frame.function is function
            and any(isinstance(t, cst.Name) and t.value == name for t in a.targets)
        ]
        if len(assigns) != 1 or len(assigns[0].targets) != 1:
            return None
        assign = assigns[0]
        inner = _sigmoid_of(ctx.facts, assign.value, assign.frame)
        if inner is None or not defuse.precedes(assign.value, site.node, scope):
            return None
        if defuse.changes(name, assign.value, site.node, scope):
            return None  # p itself rebound, changed in place or passed on before the loss
        if defuse.unchanged_between(inner, assign.value, site.node, scope):
            return inner, {}
        if is_duplicable(inner):
            return None  # the logits changed in between: `z = z * 2`, `z.mul_(2)`
        return self._split_assignment(ctx, assign, inner, site, scope)

    def _split_assignment(self, ctx, assign, inner, site: CallSite, scope):
        """`p = sigmoid(net(x))` -> `logits = net(x)` [+ `p = sigmoid(logits)`]: the call runs
        once, where it ran, and the loss reads its result."""
        stmt = assign.line_stmt
        if stmt is None or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
            return None
        if ctx.facts.defuse.calls_between(assign.value, site.node, scope):
            return None  # a call in between might change what the call returned
        name = _fresh_name(ctx.module, "logits")
        small = stmt.body[0]
        first = stmt.with_changes(body=[small.with_changes(
            targets=[cst.AssignTarget(cst.Name(name))], value=inner)])
        uses = ctx.facts.defuse.uses(assign.targets[0].value, scope)
        if uses <= 2:  # its assignment and this loss: nothing else reads the probabilities
            return cst.Name(name), {stmt: first}
        sigmoid = assign.value.deep_replace(inner, cst.Name(name))
        second = stmt.with_changes(body=[small.with_changes(value=sigmoid)], leading_lines=())
        return cst.Name(name), {stmt: cst.FlattenSentinel([first, second])}

    def _logits_fix_function(self, ctx, site: CallSite, qualified: Optional[str]):
        call = site.node
        if has_star_args(call):
            return None
        input_arg = argument(call, 0, "input")
        limit = 3 if qualified == "torch.binary_cross_entropy" else 6
        if input_arg is None or len(positional(call)) > limit:
            return None  # torch.binary_cross_entropy_with_logits has pos_weight 4th
        found = self._logits_for(ctx, site, input_arg.value)
        if found is None:
            return None
        logits, edits = found
        func = call.func
        imports: Tuple[str, ...] = ()
        if isinstance(func, cst.Call):  # nn.BCELoss(w, reduction=...)(p, y): keep its arguments
            new_ctor = self._with_logits_class(ctx, func, site.frame)
            if new_ctor is None:
                return None
            new_func, imports = new_ctor
            message = "Use `nn.BCEWithLogitsLoss` on the logits"
        elif isinstance(func, cst.Attribute):
            new_func = func.with_changes(attr=cst.Name("binary_cross_entropy_with_logits"))
            message = "Use `binary_cross_entropy_with_logits` on the logits"
        else:
            try:
                torch_name, needs = ctx.facts.torch_name(site.frame)
            except LookupError:
                return None
            new_func = dotted_expr(f"{torch_name}.nn.functional.binary_cross_entropy_with_logits")
            imports = ("torch",) if needs else ()
            message = "Use `binary_cross_entropy_with_logits` on the logits"
        new_args = [a.with_changes(value=logits) if a is input_arg else a for a in call.args]
        edits = {**edits, call: call.with_changes(func=new_func, args=new_args)}
        return self.fix(Applicability.SAFE, message, edits, imports)

    def _with_logits_class(self, ctx, constructor: cst.Call, frame: Frame):
        """`nn.BCELoss(args)` -> `nn.BCEWithLogitsLoss(args)`: the same parameters in the same
        order (weight, size_average, reduce, reduction), pos_weight left at None."""
        if has_star_args(constructor) or len(positional(constructor)) > 4:
            return None
        if ctx.facts.resolve(constructor.func, frame) != BCE_CLASS:
            chosen = ctx.facts.chosen_classes.constructed(constructor, frame)
            if chosen is None or not chosen.direct:
                return None  # `build_loss("bce")`: its arguments are the builder's
        func = constructor.func
        if isinstance(func, cst.Attribute):
            return constructor.with_changes(func=func.with_changes(attr=cst.Name("BCEWithLogitsLoss"))), ()
        try:
            torch_name, needs = ctx.facts.torch_name(frame)
        except LookupError:
            return None
        new_func = dotted_expr(f"{torch_name}.nn.BCEWithLogitsLoss")
        return constructor.with_changes(func=new_func), (("torch",) if needs else ())

    def _logits_fix_instance(self, ctx, assigns: List, sites: List[CallSite]):
        if len(assigns) != 1 or not sites:
            return None
        assign = assigns[0]
        constructor = assign.value
        edits: Dict[cst.CSTNode, cst.CSTNode] = {}
        for site in sites:
            if has_star_args(site.node) or len(positional(site.node)) > 2:
                return None
            input_arg = argument(site.node, 0, "input")
            if input_arg is None:
                return None
            found = self._logits_for(ctx, site, input_arg.value)
            if found is None:
                return None
            logits, extra = found
            if any(node in edits for node in extra):
                return None
            edits.update(extra)
            edits[input_arg.value] = logits
        # The instance must not escape (returned, passed on): every mention is the assignment
        # or one of these calls.
        key = holder_key(assign.targets[0])
        mentions = _mention_count(ctx.module, key)
        if mentions != len(sites) + 1:
            return None
        new_ctor = self._with_logits_class(ctx, constructor, assign.frame)
        if new_ctor is None:
            return None
        edits[constructor], imports = new_ctor
        return self.fix(
            Applicability.SAFE, "Use `nn.BCEWithLogitsLoss` on the logits", edits, imports
        )

    def _island_fix(self, ctx, site: CallSite, region: Region):
        stmt = site.line_stmt
        if stmt is None or len(stmt.body) != 1:
            return None
        try:
            torch_name, needs = ctx.facts.torch_name(site.frame)
        except LookupError:
            return None
        call = site.node
        device: cst.BaseExpression = cst.SimpleString('"cuda"')
        if region.kind != "call" and region.device_expr is not None and region.device is None:
            device = region.device_expr  # the same device expression, in the same function
        new_args = []
        for index, arg in enumerate(call.args):
            is_tensor = (arg.keyword is None and index < 3) or (
                arg.keyword is not None and arg.keyword.value in ("input", "target", "weight")
            )
            if is_tensor and not arg.star and not _is_none(arg.value):
                arg = arg.with_changes(value=method_call(arg.value, "float"))
            new_args.append(arg)
        new_stmt = stmt.deep_replace(call, call.with_changes(args=new_args))
        assert isinstance(new_stmt, cst.SimpleStatementLine)
        disable = cst.Call(func=dotted_expr(f"{torch_name}.autocast"),
                           args=[cst.Arg(device), kwarg("enabled", cst.Name("False"))])
        if not ctx.torch.allows("torch.autocast"):
            # before torch.autocast (1.10) only CUDA had autocast, as torch.cuda.amp.autocast
            cuda = isinstance(device, cst.SimpleString) and device.evaluated_value == "cuda"
            if not cuda or not ctx.torch.allows("torch.cuda.amp.autocast"):
                return ctx.torch.why_not("torch.autocast")
            disable = cst.Call(func=dotted_expr(f"{torch_name}.cuda.amp.autocast"),
                               args=[kwarg("enabled", cst.Name("False"))])
        island = cst.With(
            items=[cst.WithItem(item=disable)],
            body=cst.IndentedBlock(body=[new_stmt.with_changes(leading_lines=())]),
            leading_lines=stmt.leading_lines,
        )
        return self.fix(
            Applicability.SAFE, "Run it in an fp32 island (autocast disabled, float inputs)",
            {stmt: island}, ("torch",) if needs else (),
        )


def _constructs_bce(facts, call: cst.Call, frame: Frame) -> bool:
    """`nn.BCELoss(...)`, or a BCELoss a string picks (`LOSSES["bce"](...)`, `build_loss("bce")`) or a
    helper of the file returns on every path (`make_criterion()`): facts/chosen_classes.py."""
    if facts.resolve(call.func, frame) == BCE_CLASS:
        return True
    chosen = facts.chosen_classes.constructed(call, frame)
    return chosen is not None and chosen.qualified == BCE_CLASS


def _sigmoid_of(facts, expr: cst.BaseExpression, frame: Frame) -> Optional[cst.BaseExpression]:
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if facts.resolve(func, frame) in SIGMOIDS and len(expr.args) == 1 and not expr.args[0].keyword:
        return expr.args[0].value
    if isinstance(func, cst.Attribute) and func.attr.value == "sigmoid" and not expr.args:
        if dotted_name(func.value) is not None and facts.resolve(func.value, frame) is not None:
            return None  # a module's function, e.g. `torch.sigmoid` without arguments
        return func.value
    return None


def _fresh_name(module: cst.Module, base: str) -> str:
    """`base`, or `base_1`, ...: a name that appears nowhere in the file."""
    taken = _name_counts(module)
    candidate, number = base, 0
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    return candidate


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


class _NameCounter(cst.CSTVisitor):
    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.self_attrs: Counter = Counter()

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.self_attrs[node.attr.value] += 1


def _name_counts(node: cst.CSTNode) -> Counter:
    counter = _NameCounter()
    node.visit(counter)
    return counter.counts


def _names_in(expr: cst.BaseExpression) -> List[str]:
    return list(_name_counts(expr))


def _mention_count(module: cst.Module, key: Tuple[str, str]) -> int:
    counter = _NameCounter()
    module.visit(counter)
    if key[0] == "name":
        return counter.counts[key[1]]
    return counter.self_attrs[key[1]]
