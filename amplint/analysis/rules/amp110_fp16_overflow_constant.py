"""AMP110 fp16-overflow-constant."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.data.overflow import BF16_MAX, C10_NAMES, FUNCTIONS, METHODS
from amplint.analysis.facts.fills import Const, FillValues, pure
from amplint.analysis.facts.tree import Frame, dotted_name
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, dotted_expr, keyword, region_note


class Fp16OverflowConstant(Rule):
    """## What it does
    Finds `masked_fill`/`masked_fill_`, `fill_`, `index_fill`, `new_full`, `torch.full` and
    `x[i] = v` with a constant beyond the float16 range (±65504: `-1e9`, `1e10`, `float(2**30)`,
    a module constant `NEG_INF = -1e9`) or `torch.finfo(torch.float32).min/max` (numpy's
    `np.finfo(np.float32).min` is the same number), on a tensor of
    fp16 code: under an enabled autocast region (the output of a matmul there is half), in a
    module class the file turns `.half()`, in an mmcv `@auto_fp16` body, or on a tensor the
    file makes half itself (`x.half()`, `dtype=torch.float16`).

    ## Why is this bad?
    The classic transformer attention mask. Under float16 autocast `q @ k.transpose(-2, -1)`
    is half, and `scores.masked_fill(mask == 0, -1e9)` raises
    `RuntimeError: value cannot be converted to type c10::Half without overflow`
    (`at::Half` in older builds). `torch.finfo(torch.float32).min` overflows bfloat16 too
    (`c10::BFloat16`). An index assignment `scores[mask] = -1e9` does not raise: it silently
    stores `-inf`, and a fully masked row then turns into NaN after softmax.

    Not reported: values inside the range (`-1e4`, `-65504`), `float("-inf")`,
    `torch.finfo(x.dtype).min`, tensors the file shows are float32 (`x.float()` just before,
    `dtype=torch.float32`, a factory without `dtype=`, the output of an op CUDA autocast runs
    in float32 such as `softmax` or `cdist`), bfloat16 regions for literal constants (bfloat16
    has float32's range), and code outside fp16 code. An index assignment of a constant
    named as infinity (`cost[invalid] = INF` with `INF = 1e9`) stores the infinity its name
    asks for: not reported either (a `masked_fill` of it still is: that raises).

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(mask == 0, -1e9)
        attn = scores.softmax(dim=-1)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        attn = scores.softmax(dim=-1)
    ```

    ## Fix safety
    The constant becomes `torch.finfo(X.dtype).min` (`.max` for a positive one), `X` being the
    filled tensor (`torch.finfo(D)` for `torch.full(..., dtype=D)`). In float32 this is
    -3.4e38 instead of -1e9. The fix is **safe** when the constant was
    `torch.finfo(torch.float32).min/max` (the same value in float32), or when the filled
    result only feeds `softmax`/`log_softmax`/`max`/`min` (directly, or through a name whose
    every later read does): there any large negative fill gives the same result. Otherwise it
    is **unsafe**: the value that flows on changes. When `X` is not a plain name or attribute
    (it would be evaluated twice) there is no fix. Nor when the constant is a parameter's default
    (`def masked_max(v, mask, min_val=-1e7)`, every call of the file, and every call of another
    file that reaches it under a region, leaving it out), or `self.inf` holding a constructor
    parameter's default (`__init__(self, inf=1e9)`, every construction of the file leaving it
    out): other callers may pass another value.
    """

    code = "AMP110"
    name = "fp16-overflow-constant"
    severity = Severity.ERROR
    fix_safety = "safe / unsafe"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half")

    flag = [
        Flag(  # the attention mask under autocast, feeding softmax: safe
            "import torch\n"
            "def attention(q, k, v, mask):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        scores = q @ k.transpose(-2, -1)\n"
            "        scores = scores.masked_fill(mask == 0, -1e9)\n"
            "        attn = scores.softmax(dim=-1)\n"
            "        return attn @ v\n",
            fixed="import torch\n"
            "def attention(q, k, v, mask):\n"
            "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
            "        scores = q @ k.transpose(-2, -1)\n"
            "        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)\n"
            "        attn = scores.softmax(dim=-1)\n"
            "        return attn @ v\n",
        ),
        Flag(  # a module constant, in a function called under autocast, result returned: unsafe
            "import torch\n"
            "NEG_INF = -1e9\n"
            "def masked_scores(scores, mask):\n"
            "    return scores.masked_fill(~mask, NEG_INF)\n"
            "def forward(model, x, mask):\n"
            "    with torch.autocast('cuda'):\n"
            "        return masked_scores(model(x), mask)\n",
            fixed="import torch\n"
            "NEG_INF = -1e9\n"
            "def masked_scores(scores, mask):\n"
            "    return scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n"
            "def forward(model, x, mask):\n"
            "    with torch.autocast('cuda'):\n"
            "        return masked_scores(model(x), mask)\n",
            unsafe=True,
        ),
        Flag(  # finfo(float32).min in a half module: the same value in fp32, so safe
            "import torch\n"
            "from torch import nn\n"
            "class Pool(nn.Module):\n"
            "    def forward(self, x, mask):\n"
            "        x.masked_fill_(~mask[..., None], torch.finfo(torch.float32).min)\n"
            "        return x.sum(1)\n"
            "pool = Pool().cuda().half()\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class Pool(nn.Module):\n"
            "    def forward(self, x, mask):\n"
            "        x.masked_fill_(~mask[..., None], torch.finfo(x.dtype).min)\n"
            "        return x.sum(1)\n"
            "pool = Pool().cuda().half()\n",
        ),
        Flag(  # index assignment silently stores -inf; result feeds F.softmax: safe
            "import torch\n"
            "import torch.nn.functional as F\n"
            "with torch.autocast('cuda'):\n"
            "    logits = model(x)\n"
            "    logits[~valid] = -1e10\n"
            "    probs = F.softmax(logits, dim=-1)\n",
            fixed="import torch\n"
            "import torch.nn.functional as F\n"
            "with torch.autocast('cuda'):\n"
            "    logits = model(x)\n"
            "    logits[~valid] = torch.finfo(logits.dtype).min\n"
            "    probs = F.softmax(logits, dim=-1)\n",
        ),
        Flag(  # torch.full with an explicit half dtype raises anywhere
            "import torch\n"
            "bias = torch.full((n, n), -1e9, dtype=torch.float16).triu(1)\n",
            fixed="import torch\n"
            "bias = torch.full((n, n), torch.finfo(torch.float16).min, dtype=torch.float16).triu(1)\n",
            unsafe=True,
        ),
        Flag(  # a complex receiver: reported, no fix (it would be evaluated twice)
            "import torch\n"
            "with torch.autocast('cuda', dtype=torch.float16):\n"
            "    attn = (q @ k.transpose(-2, -1)).masked_fill(mask, float(-2**32))\n",
        ),
        Flag(  # allennlp's masked_max: the fill is a default no call of the file passes; no fix
            "import torch\n"
            "def masked_max(vector, mask, dim, min_val=-1e7):\n"
            "    return vector.masked_fill(~mask, min_val).max(dim=dim)[0]\n"
            "class Enc(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = torch.nn.Conv1d(8, 8, 3)\n"
            "    def forward(self, x, mask):\n"
            "        return masked_max(self.conv(x), mask, dim=2)\n"
            "def train(x, mask):\n"
            "    enc = Enc()\n"
            "    with torch.autocast('cuda'):\n"
            "        return enc(x, mask)\n",
        ),
    ]
    clean = [
        # a call of the file passes the parameter (by keyword, by position): the default is not
        # its value; a function passed on as a value may be called with anything
        "import torch\n"
        "def masked_max(vector, mask, dim, min_val=-1e7):\n"
        "    return vector.masked_fill(~mask, min_val).max(dim=dim)[0]\n"
        "def train(x, mask):\n"
        "    with torch.autocast('cuda'):\n"
        "        a = masked_max(x, mask, dim=2)\n"
        "        return masked_max(x, mask, dim=2, min_val=-1e4)\n",
        "import torch\n"
        "def masked_max(vector, mask, dim, min_val=-1e7):\n"
        "    return vector.masked_fill(~mask, min_val).max(dim=dim)[0]\n"
        "def train(x, mask):\n"
        "    with torch.autocast('cuda'):\n"
        "        return masked_max(x, mask, 2, -1e4)\n",
        "import torch\n"
        "def masked_max(vector, mask, dim, min_val=-1e7):\n"
        "    return vector.masked_fill(~mask, min_val).max(dim=dim)[0]\n"
        "def train(x, mask, reduce=masked_max):\n"
        "    with torch.autocast('cuda'):\n"
        "        return masked_max(x, mask, dim=2) + reduce(x, mask, 2, -1e4)\n",
        # an index assignment of a constant named infinity stores one (mmdet's CenterNet head)
        "import torch\n"
        "INF = 1000000000\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    loss = (pred - target).abs()\n"
        "    loss[invalid] = INF\n"
        "    cost = (pred @ target.T)\n"
        "    cost[~valid] = -INF\n",
        # the safe values
        "import torch\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    scores = q @ k.transpose(-2, -1)\n"
        "    a = scores.masked_fill(mask == 0, -1e4)\n"
        "    b = scores.masked_fill(mask == 0, float('-inf'))\n"
        "    c = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)\n"
        "    d = scores.masked_fill(mask == 0, -65504.0)\n",
        # tensors the file shows are float32
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    scores = q @ k.transpose(-2, -1)\n"
        "    scores = scores.float()\n"
        "    scores = scores.masked_fill(mask == 0, -1e9)\n"
        "    m = attention_mask.float().masked_fill(~attention_mask, -1e9)\n"
        "    bias = torch.zeros(n, n, device=q.device)\n"
        "    bias.masked_fill_(causal, -1e9)\n"
        "    full = torch.full((n, n), -1e9, device=q.device)\n"
        "    f32 = torch.empty(n, dtype=torch.float32).fill_(1e10)\n",
        # bfloat16 has float32's range
        "import torch\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    scores = (q @ k.transpose(-2, -1)).masked_fill(mask, -1e9)\n",
        # fp32 code, and an fp32 island inside autocast
        "import torch\n"
        "def attend(scores, mask):\n"
        "    return scores.masked_fill(mask, -1e9).softmax(-1)\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        s = (q.float() @ k.float().T).masked_fill(mask, -1e9)\n",
        # integer tensors and bool fills
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    ids = input_ids.masked_fill(pad, -100)\n"
        "    pos = torch.arange(n).long().masked_fill(pad, 10**6)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        state = FillValues(ctx.facts)
        facts = ctx.facts
        for qualified, site in facts.qualified_calls:
            call = site.node
            func = call.func
            target: Optional[cst.BaseExpression] = None  # the tensor that is filled
            dtype_expr: Optional[cst.BaseExpression] = None
            if qualified in FUNCTIONS:
                index, name, tensor_index = FUNCTIONS[qualified]
                value = argument(call, index, name)
                if tensor_index is not None:
                    tensor = argument(call, tensor_index, "input")
                    target = tensor.value if tensor is not None else None
                dtype_arg = keyword(call, "dtype")
                dtype_expr = dtype_arg.value if dtype_arg is not None else None
                method = qualified.rsplit(".", 1)[-1]
                label = qualified
            elif (
                qualified is None
                and isinstance(func, cst.Attribute)
                and func.attr.value in METHODS
            ):
                index, name = METHODS[func.attr.value]
                value = argument(call, index, name)
                target = func.value
                method = func.attr.value
                label = f".{method}"
                if method == "new_full":
                    dtype_arg = keyword(call, "dtype")
                    dtype_expr = dtype_arg.value if dtype_arg is not None else None
            else:
                continue
            if value is None:
                continue
            const = state.constant(value.value, site.frame)
            if const is None:
                continue
            if dtype_expr is not None:
                known = state.dtype_literal(dtype_expr, site.frame)
                if known is None:  # `dtype=x.dtype`: the dtype of x
                    if isinstance(dtype_expr, cst.Attribute) and dtype_expr.attr.value == "dtype":
                        known = state.dtype_of(dtype_expr.value, site.frame, site.line_stmt)
            elif qualified == "torch.full":
                known = "float32"  # no dtype=: the default dtype
            else:
                known = state.dtype_of(target, site.frame, site.line_stmt) if target is not None else None
            where = self._overflows(state, const, known, site.frame)
            if where is None:
                continue
            message, related, half = where
            text = (
                f"`{label}` with {state.describe(value.value, const)} overflows {half} "
                f"{message}: 'RuntimeError: value cannot be converted to type "
                f"{C10_NAMES[half]} without overflow'; use `torch.finfo(x.dtype).min` (or `.max`)"
            )
            fix = self._fix(ctx, state, value.value, const, target, dtype_expr, known, site.frame,
                            call, method, site.line_stmt)
            yield self.report(value.value, text, fix=fix, related=related)
        for assign in facts.tree.assigns:
            if len(assign.targets) != 1 or not isinstance(assign.targets[0], cst.Subscript):
                continue
            const = state.constant(assign.value, assign.frame)
            if const is None or _named_infinity(assign.value):
                continue
            target = assign.targets[0].value
            known = state.dtype_of(target, assign.frame, assign.line_stmt)
            where = self._overflows(state, const, known, assign.frame)
            if where is None:
                continue
            message, related, half = where
            text = (
                f"index assignment of {state.describe(assign.value, const)} overflows {half} "
                f"{message}: it silently stores {'-' if const.value < 0 else ''}inf (a fully "
                "masked row then gives NaN); use `torch.finfo(x.dtype).min` (or `.max`)"
            )
            fix = self._fix(ctx, state, assign.value, const, target, None, known, assign.frame,
                            None, "setitem", assign.line_stmt)
            yield self.report(assign.value, text, fix=fix, related=related,
                              severity=Severity.WARNING)

    def _fix(self, ctx, state: "FillValues", value, const: Const, target, dtype_expr, known,
             frame: Frame, call, method: str, stmt):
        if isinstance(value, cst.Name) and ctx.facts.param_defaults.default(value.value, frame) is not None:
            return None
        inner = value.expression if isinstance(value, cst.UnaryOperation) else value
        if ctx.facts.param_defaults.attr_default(inner, frame) is not None:
            return None  # `-self.inf`, a constructor's default: other constructions may pass another
        try:
            torch_name, needs = ctx.facts.torch_name(frame)
        except LookupError:
            return None
        if dtype_expr is not None and pure(dtype_expr):
            info_arg: cst.BaseExpression = dtype_expr
        elif dtype_expr is None and target is not None and pure(target):
            info_arg = cst.Attribute(value=target, attr=cst.Name("dtype"))
        elif known in ("float16", "bfloat16"):
            info_arg = dotted_expr(f"{torch_name}.{known}")
        else:
            return None
        bound = "min" if const.value < 0 else "max"
        new_value = cst.Attribute(
            value=cst.Call(func=dotted_expr(f"{torch_name}.finfo"), args=[cst.Arg(info_arg)]),
            attr=cst.Name(bound),
        )
        safe = const.finfo32 or state.feeds_reduction(call, method, target, frame, stmt)
        return self.fix(
            Applicability.SAFE if safe else Applicability.UNSAFE,
            f"Use `torch.finfo(...).{bound}` of the filled tensor's dtype",
            {value: new_value}, ("torch",) if needs else (),
        )

    @staticmethod
    def _overflows(values: FillValues, const: Const, known: Optional[str], frame: Frame):
        """(where, related) when the constant overflows the tensor's dtype here, else None."""
        if known in ("float16", "bfloat16") and values.facts.dtypes.on_region_path(frame):
            known = None  # the dtype holds on the region's call path: cite the region below
        if known == "float16":
            return "(the tensor is float16)", {}, "float16"
        if known == "bfloat16":
            if abs(const.value) > BF16_MAX:
                return "(the tensor is bfloat16)", {}, "bfloat16"
            return None
        if known is not None:
            return None
        region = values.facts.active_region(frame)
        if region is not None:
            if region.dtype in ("float32", "float64"):
                return None
            if region.dtype == "bfloat16" and abs(const.value) <= BF16_MAX:
                return None
            note, related = region_note(region)
            half = "bfloat16" if region.dtype == "bfloat16" else "float16"
            return f"under autocast {note}", related, half
        if values.facts.fp16.is_fp16(frame):
            casts = set(values.facts.fp16.half_casts.values())
            half = "bfloat16" if casts == {"bfloat16"} else "float16"
            if half == "bfloat16" and abs(const.value) <= BF16_MAX:
                return None
            note, related = values.facts.fp16.note(frame)
            return f"in fp16 code {note}", related, half
        return None


def _named_infinity(value: cst.BaseExpression) -> bool:
    """`INF`, `-INF`, `self.INFINITY`: a constant whose name says it stands for infinity."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    name = dotted_name(value)
    return bool(name) and name[-1].upper() in ("INF", "INFINITY")
