"""AMP141 half-reduction."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.tree import Frame
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import code_of, dotted_expr, keyword, kwarg, method_call
from amplint.analysis.facts.float16_scope import float16_where, has_float16_code
from amplint.analysis.facts.half_values import FrameWalker, _unparen, float16_values, walk_float16_code
from amplint.analysis.rules._backward_root import backward_root_only
from amplint.analysis.rules._reduction_shapes import (
    _assignments, _calls_in, _exp_argument, _reduced, _short, _softmax_parts, _square_base,
    _stabilised, _stable_here,
)

SQUARE_SUMS = ("sum", "mean")
OUTPUT_REDUCTIONS = ("sum", "var", "std", "cumsum", "prod")


class HalfReduction(Rule):
    """## What it does
    Finds reductions that overflow float16 (largest finite value 65504) on float16 tensors
    outside autocast:
    hand-written norms and mean squares (`x.pow(2).sum(-1).sqrt()`, `(x ** 2).mean(-1)`,
    `torch.square(x).sum()`, `(x * x).sum()`), hand-written softmax and log-sum-exp
    (`x.exp() / x.exp().sum(-1, keepdim=True)`, `torch.exp(x).sum(-1).log()`) whose input is
    not max-subtracted, and `sum/var/std/cumsum/prod` of a tensor the file itself casts to
    float16 (`h = x.half()`, `x.half().sum()`).
    "float16 outside autocast" is what the file shows: the methods of a module class the file
    casts with `.half()` / `.to(torch.float16)` (or, linting a project, that another file makes
    float16; and of its submodules) with no autocast region active, and values cast to float16
    in the same function. A function those methods call with their float16 values runs on
    float16 too: a module-level helper of the file (k-diffusion's `rms_norm(x, scale, eps)`
    called from `RMSNorm.forward`), its parameter float16 where every caller of the file
    passes float16, or, linting a project, a function of another file that the float16 code
    passes a float16 value; and what such a function calls in turn.

    Under a float16 autocast region, the same squares, exponentials and softmax when the
    dtype fact (torch's autocast tables) shows the elementwise result float16: `(h * h).sum(-1)`
    with `h = self.proj(x)` (`mul` is on no autocast list, so it runs in the region's float16),
    or `e / e.sum(-1, keepdim=True)` with `e = s.exp()` under CPU float16 autocast. Not there:
    what autocast runs in float32 (`h.pow(2)`, `h ** 2`, `h.exp()`, `sum` on CUDA), bfloat16
    regions, values whose dtype the file does not show. In code `autocast-modules` declares,
    whose inputs may be the region's float16, exponentials of such inputs are reported as "may
    be float16"; squares of them are not (a loss input is often a probability).

    A module class is also half when a method of the file that casts its instances'
    submodules is called (`model.convert_to_fp16()` running
    `self.blocks.apply(convert_module_to_f16)` or `self.blocks.half()`).

    ## Why is this bad?
    Squares overflow first: any |x| > 256 gives `x * x > 65504`, i.e. `inf`, before the
    reduction (which accumulates in float32 internally) sees it, and the norm or the RMSNorm
    `x * torch.rsqrt(x.pow(2).mean(-1) + eps)` becomes inf or 0. `exp` overflows for x > 11.09
    (`torch.tensor([11.1], dtype=torch.half).exp()` is inf), so an unstabilised hand-written
    softmax returns NaN. A float16 `sum` (or `var` of values spread more than 256) is inf once the
    result passes 65504: `torch.full((4096,), 20., dtype=torch.half).sum()` is `inf`.
    Under CUDA autocast none of this is reported: autocast runs `sum`, `pow`, `exp`, `softmax`
    and norms in float32 on its own.

    Not reported: `torch.softmax`/`F.softmax`/`log_softmax` on float16 (torch computes them in
    float32 internally: on torch 2.13 the result is bit-identical to the float32 softmax cast to
    float16), `mean` of float16 values (accumulated in float32; it cannot leave the inputs'
    range), `torch.norm`/`linalg.vector_norm` (same), squares of a tensor cast to float32 first
    (`x.float().pow(2).mean(-1)`, the Hugging Face RMSNorm), max-subtracted exponentials
    (`(x - x.amax(-1, keepdim=True)).exp()`), and everything under autocast or in bfloat16.
    Nor a float16 `sum` whose value is only ever the root of a backward pass
    (`loss = y.sum()` then only `loss.backward()`, `scaler.scale(loss).backward()`,
    `optimizer.backward(loss)`, `accelerator.backward(loss)`, `self.manual_backward(loss)`;
    or inline `y.sum().backward()`): the gradient of a sum is 1 per element whatever the
    forward value, so the gradients are right even when the sum is inf (on torch 2.13 they
    equal those of `y.float().sum()`, also through `GradScaler`). Read anywhere else (logged,
    printed, returned, compared, `.item()`), the inf reaches that reader and is reported.

    ## Example
    ```python
    class Attention(nn.Module):
        def forward(self, q, k):
            scores = q @ k.transpose(-1, -2)
            probs = scores.exp() / scores.exp().sum(-1, keepdim=True)
            rms = q.pow(2).mean(-1, keepdim=True).sqrt()
            return probs, rms

    model = Attention().cuda().half()
    ```

    ## Use instead
    ```python
    class Attention(nn.Module):
        def forward(self, q, k):
            scores = q @ k.transpose(-1, -2)
            probs = torch.softmax(scores, -1, dtype=torch.float32).to(scores.dtype)
            rms = q.float().pow(2).mean(-1, keepdim=True).sqrt().to(q.dtype)
            return probs, rms
    ```

    ## Fix safety
    Only the hand-written softmax has a fix, and it is **unsafe**:
    `e / e.sum(d, keepdim=True)` with `e = x.exp()` becomes
    `torch.softmax(x, d, dtype=torch.float32).to(x.dtype)`. It is the same function where the
    original did not overflow, and finite where it did; but the numbers differ in the last
    bits and a NaN the code relied on (masking by -inf rows) becomes a uniform row. It applies
    when `x` is a plain name or attribute and `d` is given with `keepdim=True`. Norms,
    squares and sums are suggestions: computing them in float32 changes the dtype that flows
    on, which the rest of a half model may not accept.
    """

    code = "AMP141"
    name = "half-reduction"
    severity = Severity.WARNING
    fix_safety = "unsafe / suggestion"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half", "f16")

    flag = [
        Flag(  # a hand-written softmax in a half module: exp overflows past 11.09
            "import torch\n"
            "from torch import nn\n"
            "class Attention(nn.Module):\n"
            "    def forward(self, q, k):\n"
            "        scores = q @ k.transpose(-1, -2)\n"
            "        return scores.exp() / scores.exp().sum(-1, keepdim=True)\n"
            "model = Attention().cuda().half()\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class Attention(nn.Module):\n"
            "    def forward(self, q, k):\n"
            "        scores = q @ k.transpose(-1, -2)\n"
            "        return torch.softmax(scores, -1, dtype=torch.float32).to(scores.dtype)\n"
            "model = Attention().cuda().half()\n",
            unsafe=True,
        ),
        Flag(  # an RMSNorm squaring float16 values (T5-style, without the float32 cast)
            "import torch\n"
            "from torch import nn\n"
            "class RMSNorm(nn.Module):\n"
            "    def __init__(self, d, eps=1e-6):\n"
            "        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(d))\n"
            "        self.eps = eps\n"
            "    def forward(self, x):\n"
            "        variance = x.pow(2).mean(-1, keepdim=True)\n"
            "        return self.weight * x * torch.rsqrt(variance + self.eps)\n"
            "class Decoder(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.norm = RMSNorm(512)\n"
            "decoder = Decoder().to(torch.float16)\n",
        ),
        Flag(  # a tensor cast to half and summed; a hand-written norm on it
            "import torch\n"
            "def scores(features):\n"
            "    h = features.cuda().half()\n"
            "    total = h.sum()\n"
            "    norm = (h * h).sum(-1).sqrt()\n"
            "    return total, norm\n",
            count=2,
        ),
        Flag(  # a hand-written softmax through a local; torch imported under an alias
            "import torch as th\n"
            "def attend(q, k):\n"
            "    logits = (q @ k.t()).half()\n"
            "    e = th.exp(logits)\n"
            "    return e / th.sum(e, dim=1, keepdim=True)\n",
            fixed="import torch as th\n"
            "def attend(q, k):\n"
            "    logits = (q @ k.t()).half()\n"
            "    e = th.exp(logits)\n"
            "    return th.softmax(logits, 1, dtype=th.float32).to(logits.dtype)\n",
            unsafe=True,
        ),
        Flag(  # a half sum that is a backward root but also logged: the log shows inf
            "import torch\n"
            "def train_step(model, x, optimizer, logger):\n"
            "    y = model.half()(x.half())\n"
            "    loss = y.sum()\n"
            "    optimizer.backward(loss)\n"
            "    logger.info('loss %f', loss.item())\n"
            "    other = y.sum()\n"
            "    other.backward()\n"
            "    return other\n",
            count=2,
        ),
        Flag(  # hand-written log-sum-exp: no fix, a suggestion
            "import torch\n"
            "def partition(energy):\n"
            "    energy = energy.half()\n"
            "    return torch.exp(energy).sum(-1).log()\n",
        ),
        Flag(  # a method that `.half()`s a child, called from __init__
            "import torch\n"
            "from torch import nn\n"
            "class Norm(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x.pow(2).mean(-1, keepdim=True)\n"
            "class Net(nn.Module):\n"
            "    def __init__(self, fp16):\n"
            "        super().__init__()\n"
            "        self.norm = Norm()\n"
            "        if fp16:\n"
            "            self.to_half()\n"
            "    def to_half(self):\n"
            "        self.norm.half()\n",
        ),
        Flag(  # under CUDA float16 autocast `h * h` runs in float16 (mul is on no list)
            "import torch\n"
            "from torch import nn\n"
            "class Scorer(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.proj = nn.Linear(64, 64)\n"
            "    def forward(self, x):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            h = self.proj(x)\n"
            "            return (h * h).sum(-1).sqrt()\n",
        ),
        Flag(  # CPU float16 autocast runs exp in float16: the softmax overflows
            "import torch\n"
            "def attend(q, k):\n"
            "    with torch.autocast('cpu', dtype=torch.float16):\n"
            "        s = q @ k.t()\n"
            "        e = s.exp()\n"
            "        return e / e.sum(-1, keepdim=True)\n",
            fixed="import torch\n"
            "def attend(q, k):\n"
            "    with torch.autocast('cpu', dtype=torch.float16):\n"
            "        s = q @ k.t()\n"
            "        e = s.exp()\n"
            "        return torch.softmax(s, -1, dtype=torch.float32).to(s.dtype)\n",
            unsafe=True,
        ),
    ]
    clean = [
        # under autocast: bfloat16 region, a max-subtracted softmax, an input of unknown dtype
        "import torch\n"
        "from torch import nn\n"
        "class Scorer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(64, 64)\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "            h = self.proj(x)\n"
        "            a = (h * h).sum(-1)\n"
        "        with torch.autocast('cpu', dtype=torch.float16):\n"
        "            s = x @ x.t()\n"
        "            z = s - s.amax(-1, keepdim=True)\n"
        "            e = z.exp()\n"
        "            p = e / e.sum(-1, keepdim=True)\n"
        "            b = (x * x).sum(-1)\n"
        "        return a, p, b\n",
        # the method casts another child: Norm stays float32
        "import torch\n"
        "from torch import nn\n"
        "class Norm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x.pow(2).mean(-1, keepdim=True)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, fp16):\n"
        "        super().__init__()\n"
        "        self.norm = Norm()\n"
        "        self.proj = nn.Linear(8, 8)\n"
        "        if fp16:\n"
        "            self.to_half()\n"
        "    def to_half(self):\n"
        "        self.proj.half()\n",
        # the AMP recipe: the same code under CUDA autocast runs these ops in float32
        "import torch\n"
        "def attend(q, k):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        scores = q @ k.t()\n"
        "        probs = scores.exp() / scores.exp().sum(-1, keepdim=True)\n"
        "        rms = scores.pow(2).mean(-1).sqrt()\n"
        "        return probs, rms, scores.sum()\n",
        # the Hugging Face RMSNorm in a half model: squares in float32, softmax with dtype
        "import torch\n"
        "from torch import nn\n"
        "class LlamaRMSNorm(nn.Module):\n"
        "    def forward(self, hidden_states):\n"
        "        input_dtype = hidden_states.dtype\n"
        "        hidden_states = hidden_states.to(torch.float32)\n"
        "        variance = hidden_states.pow(2).mean(-1, keepdim=True)\n"
        "        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)\n"
        "        return self.weight * hidden_states.to(input_dtype)\n"
        "class Attn(nn.Module):\n"
        "    def forward(self, w):\n"
        "        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(w.dtype)\n"
        "        return torch.softmax(w, -1), w.mean(-1), w.norm(dim=-1)\n"
        "norm = LlamaRMSNorm().half()\n"
        "attn = Attn().half()\n",
        # a max-subtracted (stable) softmax; masks summed in a half module
        "import torch\n"
        "from torch import nn\n"
        "class Pool(nn.Module):\n"
        "    def forward(self, x, mask):\n"
        "        z = x - x.amax(-1, keepdim=True)\n"
        "        p = z.exp() / z.exp().sum(-1, keepdim=True)\n"
        "        return (x * mask).sum(1) / mask.sum(1)\n"
        "pool = Pool().half()\n",
        # bfloat16 has float32's range; fp32 modules are not half code
        "import torch\n"
        "def stats(x, model):\n"
        "    b = x.bfloat16()\n"
        "    y = x.float()\n"
        "    return b.sum(), b.pow(2).mean(), y.pow(2).sum(), model(x).exp().sum()\n",
        # fairseq's EMA / fp16-optimizer tests: a half sum used only as a backward root
        "import torch\n"
        "def step(model, x, optimizer, scaler, me_optimizer):\n"
        "    y = model.cuda().half()(x.half())\n"
        "    loss = y.sum()\n"
        "    loss.backward()\n"
        "    scaled = y.sum()\n"
        "    scaler.scale(scaled).backward()\n"
        "    me_optimizer.backward(model(x.half()).sum())\n"
        "    y.sum().backward()\n",
        # half inference whose reductions run in float32 explicitly
        "import torch\n"
        "def score(model, x):\n"
        "    h = model.half()(x.half())\n"
        "    return h.sum(dtype=torch.float32), h.float().var(), h.float().pow(2).sum()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        yield from self._autocast_values(ctx)
        if not has_float16_code(facts):
            return  # no float16 cast here, nor a class of this file another file makes float16
        values = float16_values(facts)
        rule = self
        found: List[Tuple[cst.CSTNode, Frame, str]] = []

        class Visitor(FrameWalker):
            def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
                if isinstance(node.operator, cst.Divide) and rule._softmax(
                    node, self.frame, values
                ):
                    found.append((node, self.frame, "softmax"))

            def visit_Call(self, node: cst.Call) -> None:
                kind = rule._reduction(node, self.frame, values)
                if kind is not None:
                    found.append((node, self.frame, kind))

        walk_float16_code(facts, lambda start: Visitor(facts, values, start))
        softmax_parts = set()
        for node, _frame, kind in found:
            if kind == "softmax":
                softmax_parts.update(id(n) for n in _calls_in(node))
        root_indexes: dict = {}
        for node, frame, kind in found:
            if kind != "softmax" and id(node) in softmax_parts:
                continue  # the denominator of a reported softmax
            if kind == "sum" and backward_root_only(ctx.module, node, frame, root_indexes):
                continue  # only a backward root: d(sum)/dx = 1 whatever the forward value
            yield self._diagnostic(ctx, node, frame, kind, values)

    def _autocast_values(self, ctx) -> Iterable[Diagnostic]:
        """Squares, exponentials and hand-written softmax whose elementwise result the dtype
        fact (amplint.analysis.facts.dtypes, torch's autocast tables) shows float16 under a region:
        `(h * h).sum(-1)` with `h = self.fc(x)` under float16 autocast (`mul` is on no autocast
        list, so it runs in float16). Silent where autocast runs the op in float32
        (`h.pow(2)`, `h.exp()` on CUDA), in bfloat16 regions, and where the value is unknown."""
        facts = ctx.facts
        if not facts.regions.uses_autocast() and not facts.regions.entries:
            return  # no region here, nor one another file puts around this file's code
        dtypes = facts.dtypes

        # ids of findings on values that may be float16 (code autocast-modules declares). Only
        # exponentials: a square of a declared input overflows only past |x| > 256, and loss
        # inputs are often probabilities (mmdet's dice_loss squares sigmoid outputs)
        maybe = set()

        def half(expr: cst.BaseExpression, frame: Frame, node: cst.CSTNode, may=True) -> bool:
            found_dtype = dtypes.float16_in_region(expr, frame)  # the node itself, not a copy
            if found_dtype == "may":
                # the fact joins the plain reading (the declared region may be off); the
                # declaration says the code runs under it, where CUDA runs `exp` in float32
                if dtypes.policy(facts.active_region(frame), "exp") == "fp32":
                    return False
                maybe.add(id(node))
                return may
            return found_dtype is not None

        found: List[Tuple[cst.CSTNode, Frame, str]] = []
        for node, frame in dtypes.region_nodes:
            if isinstance(node, cst.BinaryOperation):
                if isinstance(node.operator, cst.Divide):
                    parts = _softmax_parts(node, frame)
                    if parts is not None and half(node.left, frame, node) \
                            and not _stable_here(parts[0], frame):
                        found.append((node, frame, "softmax"))
                continue
            reduced = _reduced(node, frame)
            if reduced is None:
                continue
            method, operand = reduced
            bare = _unparen(operand)
            if method in SQUARE_SUMS and _square_base(bare, frame) is not None \
                    and half(operand, frame, node, may=False):
                found.append((node, frame, "square"))
            elif method == "sum":
                exponent = _exp_argument(bare, frame)
                if exponent is not None and half(operand, frame, node) \
                        and not _stable_here(exponent, frame):
                    found.append((node, frame, "exp"))
        softmax_parts = set()
        for node, _frame, kind in found:
            if kind == "softmax":
                softmax_parts.update(id(n) for n in _calls_in(node))
        for node, frame, kind in found:
            if kind != "softmax" and id(node) in softmax_parts:
                continue
            region = facts.active_region(frame).root
            where, related = "a float16 value of the autocast region at line {region}", {
                "region": region.origin}
            call = facts.dtypes.path_call(frame)
            if call is not None:  # the value holds on the path through this call only
                where, related["call"] = where + ", called at line {call}", call
            if region.external:
                where, related = ("a float16 value of " if region.external.startswith("the ") else
                                  "a float16 value ") + region.external, {}  # not formatted
                if id(node) in maybe:
                    where = "a value that may be float16, in code " + region.external
            yield self._diagnostic(ctx, node, frame, kind, None, where=(where, related))

    # -- patterns -------------------------------------------------------------------------
    def _reduction(self, call: cst.Call, frame: Frame, values) -> Optional[str]:
        """"square" / "exp" / "sum" when `call` is such a reduction of float16 values."""
        reduced = _reduced(call, frame)
        if reduced is None:
            return None
        method, operand = reduced
        operand = _unparen(operand)
        if method in SQUARE_SUMS:
            base = _square_base(operand, frame)
            if base is not None and values.is_float16(base, frame):
                return "square"
        if method == "sum":
            exponent = _exp_argument(operand, frame)
            if (
                exponent is not None
                and not _stabilised(exponent, frame, values)
                and values.is_float16(exponent, frame)
            ):
                return "exp"
        if method in OUTPUT_REDUCTIONS:
            if keyword(call, "dtype") is not None:
                return None
            if values.is_float16(operand, frame, explicit=True):
                return method
        return None

    def _softmax(self, node: cst.BinaryOperation, frame: Frame, values) -> bool:
        parts = _softmax_parts(node, frame)
        if parts is None:
            return False
        exponent = parts[0]
        return not _stabilised(exponent, frame, values) and values.is_float16(exponent, frame)

    # -- reporting ------------------------------------------------------------------------
    def _diagnostic(self, ctx, node, frame: Frame, kind: str, values, where=None) -> Diagnostic:
        code = _short(code_of(ctx.module, node))
        related = {}
        place = "outside autocast"
        if where is not None:  # under autocast: cite the region
            where, related = where
            place = "under autocast"
        else:  # cite which class is float16, and where it was made so
            where, related = float16_where(ctx.facts, frame)
        if related:  # the message is formatted with the related lines
            code = code.replace("{", "{{").replace("}", "}}")
        if kind == "softmax":
            message = (
                f"hand-written softmax `{code}` on float16 values {place} ({where}): "
                "exp overflows past x = 11.09 (float16 max 65504) and the result is NaN; use "
                "`torch.softmax(x, dim, dtype=torch.float32).to(x.dtype)`"
            )
            return self.report(node, message, fix=self._softmax_fix(ctx, node, frame),
                               related=related)
        if kind == "square":
            message = (
                f"`{code}` squares float16 values {place} ({where}): any |x| > 256 "
                "squares past 65504 to inf before the reduction; square in float32 "
                "(`x.float().pow(2)`) and cast the result back"
            )
        elif kind == "exp":
            message = (
                f"`{code}` sums exp of float16 values {place} ({where}): exp overflows "
                "past x = 11.09; use `torch.logsumexp` / `torch.softmax`, or subtract the max first"
            )
        else:
            message = (
                f"`{code}` of a float16 tensor {place} ({where}): the result is inf "
                f"once it passes 65504; pass `dtype=torch.float32`"
                + (" (or reduce `x.float()`)" if kind in ("var", "std") else "")
            )
        return self.report(node, message, related=related)

    def _softmax_fix(self, ctx, node: cst.BinaryOperation, frame: Frame):
        parts = _softmax_parts(node, frame)
        if parts is None:
            return None
        exponent, dim = parts
        exponent = _unparen(exponent)
        if dim is None or not isinstance(exponent, (cst.Name, cst.Attribute)):
            return None
        if isinstance(exponent, cst.Name) and _assignments(exponent.value, frame) > 1:
            return None  # `x` may have changed between the exp and the division
        try:
            torch_name, needs_import = ctx.facts.torch_name(frame)
        except LookupError:
            return None
        softmax = cst.Call(
            func=dotted_expr(f"{torch_name}.softmax"),
            args=[
                cst.Arg(exponent, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(dim, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                kwarg("dtype", dotted_expr(f"{torch_name}.float32")),
            ],
        )
        replacement = method_call(
            softmax, "to", [cst.Arg(cst.Attribute(value=exponent, attr=cst.Name("dtype")))]
        )
        replacement = replacement.with_changes(lpar=node.lpar, rpar=node.rpar)
        return self.fix(
            Applicability.UNSAFE,
            f"Use `{torch_name}.softmax(..., dtype={torch_name}.float32)`",
            {node: replacement},
            imports=("torch",) if needs_import else (),
        )
