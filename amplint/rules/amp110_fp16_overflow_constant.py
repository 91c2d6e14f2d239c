"""AMP110 fp16-overflow-constant."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set

import libcst as cst

from amplint.diagnostics import Applicability, Diagnostic, Severity
from amplint.facts.regions import DTYPES
from amplint.facts.tree import Frame
from amplint.data.overflow import (
    AUTOCAST_FP32, BF16_MAX, C10_NAMES, CASTS, FEEDS_FUNCTIONS, FEEDS_METHODS, FLOAT_FACTORIES,
    FP16_MAX, FUNCTIONS, IN_PLACE, KEEPS_DTYPE, LIKE_FACTORIES, METHODS, OTHER_DTYPES,
)
from amplint.rules import Flag, Rule
from amplint.rules._util import argument, dotted_expr, keyword, region_note


@dataclass
class _Const:
    value: float
    finfo32: bool  # `torch.finfo(torch.float32).min/max`


class Fp16OverflowConstant(Rule):
    """## What it does
    Finds `masked_fill`/`masked_fill_`, `fill_`, `index_fill`, `new_full`, `torch.full` and
    `x[i] = v` with a constant beyond the float16 range (±65504: `-1e9`, `1e10`, `float(2**30)`,
    a module constant `NEG_INF = -1e9`) or `torch.finfo(torch.float32).min/max`, on a tensor of
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
    has float32's range), and code outside fp16 code.

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
    (it would be evaluated twice) there is no fix.
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
    ]
    clean = [
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
        state = _State(ctx)
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
            where = state.overflows(const, known, site.frame)
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
            if const is None:
                continue
            target = assign.targets[0].value
            known = state.dtype_of(target, assign.frame, assign.line_stmt)
            where = state.overflows(const, known, assign.frame)
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

    def _fix(self, ctx, state: "_State", value, const: _Const, target, dtype_expr, known,
             frame: Frame, call, method: str, stmt):
        try:
            torch_name, needs = ctx.facts.torch_name(frame)
        except LookupError:
            return None
        if dtype_expr is not None and _pure(dtype_expr):
            info_arg: cst.BaseExpression = dtype_expr
        elif dtype_expr is None and target is not None and _pure(target):
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


class _State:
    """Per-file lazy helpers: statement order, constants, dtypes, where values flow."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.facts = ctx.facts
        self._order: Optional[Dict[int, int]] = None
        self._feeding: Optional[Set[int]] = None

    # -- statement order ------------------------------------------------------------------
    def order(self, stmt) -> Optional[int]:
        if stmt is None:
            return None
        if self._order is None:
            collector = _Order()
            self.ctx.module.visit(collector)
            self._order = collector.index
        return self._order.get(id(stmt))

    # -- constants ------------------------------------------------------------------------
    def constant(self, expr: cst.BaseExpression, frame: Frame, depth: int = 0) -> Optional[_Const]:
        """The number `expr` is, when it is a constant beyond float16's range (finite)."""
        const = self._evaluate(expr, frame, depth)
        if const is None or not math.isfinite(const.value) or abs(const.value) <= FP16_MAX:
            return None
        return const

    def _evaluate(self, expr, frame: Frame, depth: int) -> Optional[_Const]:
        if depth > 4:
            return None
        if isinstance(expr, (cst.Integer, cst.Float)):
            try:
                return _Const(float(expr.evaluated_value), False)
            except (OverflowError, ValueError):
                return None
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            inner = self._evaluate(expr.expression, frame, depth + 1)
            if inner is None:
                return None
            sign = -1.0 if isinstance(expr.operator, cst.Minus) else 1.0
            return _Const(sign * inner.value, inner.finfo32)
        if isinstance(expr, cst.BinaryOperation):
            left = self._evaluate(expr.left, frame, depth + 1)
            right = self._evaluate(expr.right, frame, depth + 1)
            if left is None or right is None or left.finfo32 or right.finfo32:
                return None
            try:
                if isinstance(expr.operator, cst.Power):
                    if abs(right.value) > 400:
                        return None
                    return _Const(float(left.value ** right.value), False)
                if isinstance(expr.operator, cst.Multiply):
                    return _Const(left.value * right.value, False)
                if isinstance(expr.operator, cst.Add):
                    return _Const(left.value + right.value, False)
                if isinstance(expr.operator, cst.Subtract):
                    return _Const(left.value - right.value, False)
            except (OverflowError, ZeroDivisionError, TypeError):
                return None
            return None
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].keyword:
            if isinstance(expr.func, cst.Name) and expr.func.value in ("float", "int") and (
                self.facts.resolve(expr.func, frame) is None
            ):
                arg = expr.args[0].value
                if isinstance(arg, cst.SimpleString):
                    try:
                        return _Const(float(arg.evaluated_value), False)
                    except (ValueError, TypeError):
                        return None
                return self._evaluate(arg, frame, depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("min", "max"):
            inner = expr.value
            if isinstance(inner, cst.Call) and self.facts.resolve(inner.func, frame) == "torch.finfo":
                if not inner.args:
                    dtype = "float32"
                elif len(inner.args) == 1 and not inner.args[0].keyword:
                    dtype = self.dtype_literal(inner.args[0].value, frame)
                else:
                    return None
                if dtype == "float32":
                    value = 3.4028234663852886e38
                elif dtype == "float64":
                    value = 1.7976931348623157e308
                else:
                    return None
                return _Const(-value if expr.attr.value == "min" else value, True)
        if isinstance(expr, cst.Name):
            return self._named_constant(expr.value, frame, depth)
        return None

    def _named_constant(self, name: str, frame: Frame, depth: int) -> Optional[_Const]:
        if self.facts.resolve((cst.Name(name)), frame) is not None:
            return None
        assigns = [
            a for a in self.facts.tree.assigns
            if any(isinstance(t, cst.Name) and t.value == name for t in a.targets)
        ]
        if len(assigns) != 1 or len(assigns[0].targets) != 1:
            return None
        scope = assigns[0].frame.scope
        if scope.kind != "module" and scope is not frame.scope:
            return None
        const = self._evaluate(assigns[0].value, assigns[0].frame, depth + 1)
        return const

    def describe(self, expr: cst.BaseExpression, const: _Const) -> str:
        text = self.ctx.module.code_for_node(expr).strip()
        if len(text) > 40:
            text = text[:37] + "..."
        if isinstance(expr, cst.Name):
            return f"`{text}` (= {const.value:g})"
        return f"`{text}`"

    # -- dtypes ---------------------------------------------------------------------------
    def dtype_literal(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        qualified = self.facts.resolve(expr, frame)
        if qualified is None:
            return None
        if qualified in OTHER_DTYPES:
            return "other"
        return DTYPES.get(qualified)

    def dtype_of(self, expr: cst.BaseExpression, frame: Frame, stmt, depth: int = 0) -> Optional[str]:
        """"float16", "bfloat16", "float32", "float64", "other" when the file shows it."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Subscript):
            return self.dtype_of(expr.value, frame, stmt, depth + 1)
        if isinstance(expr, cst.Name):
            return self._name_dtype(expr.value, frame, stmt, depth)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        qualified = self.facts.resolve(func, frame)
        if qualified is not None:
            dtype_arg = keyword(expr, "dtype")
            if dtype_arg is not None:
                return self.dtype_literal(dtype_arg.value, frame)
            if qualified in FLOAT_FACTORIES:
                return "float32"
            if qualified in LIKE_FACTORIES and expr.args and not expr.args[0].keyword:
                return self.dtype_of(expr.args[0].value, frame, stmt, depth + 1)
            if qualified.rsplit(".", 1)[-1] in AUTOCAST_FP32 and self._cuda_autocast(frame):
                return "float32"
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method in CASTS and not expr.args:
            return CASTS[method]
        if method in ("to", "type"):
            for arg in expr.args:
                if arg.keyword is not None and arg.keyword.value != "dtype":
                    continue
                found = self.dtype_literal(arg.value, frame)
                if found is not None:
                    return found
                if arg.keyword is not None:
                    return None  # dtype=<expression>
            positional = [a for a in expr.args if a.keyword is None]
            if method == "to" and positional and all(_is_device(a.value) for a in positional):
                return self.dtype_of(func.value, frame, stmt, depth + 1)
            if method == "to" and not positional:
                return self.dtype_of(func.value, frame, stmt, depth + 1)
            return None
        if method in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
            dtype_arg = keyword(expr, "dtype")
            if dtype_arg is not None:
                return self.dtype_literal(dtype_arg.value, frame)
            return self.dtype_of(func.value, frame, stmt, depth + 1)
        if method in KEEPS_DTYPE:
            return self.dtype_of(func.value, frame, stmt, depth + 1)
        if method in AUTOCAST_FP32 and self._cuda_autocast(frame):
            return "float32"
        return None

    def _cuda_autocast(self, frame: Frame) -> bool:
        region = self.facts.active_region(frame)
        return region is not None and region.device == "cuda"

    def _name_dtype(self, name: str, frame: Frame, stmt, depth: int) -> Optional[str]:
        here = self.order(stmt)
        if here is None:
            return None
        best = None
        best_index = -1
        for assign in self.facts.tree.assigns:
            if assign.frame.scope is not frame.scope:
                continue
            if not any(_binds(t, name) for t in assign.targets):
                continue
            index = self.order(assign.line_stmt)
            if index is None or index >= here or index <= best_index:
                continue
            best, best_index = assign, index
        if best is None:
            return None
        if len(best.targets) != 1 or not isinstance(best.targets[0], cst.Name):
            return None
        return self.dtype_of(best.value, best.frame, best.line_stmt, depth + 1)

    def overflows(self, const: _Const, known: Optional[str], frame: Frame):
        """(where, related) when the constant overflows the tensor's dtype here, else None."""
        if known == "float16":
            return "(the tensor is float16)", {}, "float16"
        if known == "bfloat16":
            if abs(const.value) > BF16_MAX:
                return "(the tensor is bfloat16)", {}, "bfloat16"
            return None
        if known is not None:
            return None
        region = self.facts.active_region(frame)
        if region is not None:
            if region.dtype in ("float32", "float64"):
                return None
            if region.dtype == "bfloat16" and abs(const.value) <= BF16_MAX:
                return None
            note, related = region_note(region)
            half = "bfloat16" if region.dtype == "bfloat16" else "float16"
            return f"under autocast {note}", related, half
        if self.facts.fp16.is_fp16(frame):
            casts = set(self.facts.fp16.half_casts.values())
            half = "bfloat16" if casts == {"bfloat16"} else "float16"
            if half == "bfloat16" and abs(const.value) <= BF16_MAX:
                return None
            return "in fp16 code (a module the file turns half, or @auto_fp16)", {}, half
        return None

    # -- where the filled tensor goes -----------------------------------------------------
    def feeding(self) -> Set[int]:
        """ids of expressions whose value goes straight into softmax/log_softmax/max/min."""
        if self._feeding is None:
            found: Set[int] = set()
            for qualified, site in self.facts.qualified_calls:
                call = site.node
                if qualified in FEEDS_FUNCTIONS:
                    first = argument(call, 0, "input")
                    if first is not None:
                        found.add(id(first.value))
                elif (
                    qualified is None
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in FEEDS_METHODS
                ):
                    found.add(id(call.func.value))
            self._feeding = found
        return self._feeding

    def feeds_reduction(self, call, method: str, target, frame: Frame, stmt) -> bool:
        feeding = self.feeding()
        if call is not None and id(call) in feeding:
            return True
        name: Optional[str] = None
        if method in IN_PLACE or method == "setitem":
            if isinstance(target, cst.Name):
                name = target.value
        elif call is not None and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (
                isinstance(small, cst.Assign)
                and small.value is call
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                name = small.targets[0].target.value
        if name is None or stmt is None:
            return False
        function = frame.function
        root = function.node if function is not None else self.ctx.module
        uses = _LaterUses(name, stmt)
        root.visit(uses)
        return bool(uses.loads) and all(id(node) in feeding for node in uses.loads)


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


def _is_device(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return True
    return isinstance(expr, cst.Name) and "device" in expr.value


def _pure(expr: cst.BaseExpression) -> bool:
    """A name, attribute chain or simple subscript of one: safe to write twice."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    if isinstance(expr, cst.Subscript):
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not isinstance(index.value, (cst.Name, cst.Integer, cst.Ellipsis)):
                    return False
            elif isinstance(index, cst.Slice):
                parts = (index.lower, index.upper, index.step)
                if any(p is not None and not isinstance(p, (cst.Name, cst.Integer)) for p in parts):
                    return False
        return _pure(expr.value)
    return False


class _Order(cst.CSTVisitor):
    def __init__(self) -> None:
        self.index: Dict[int, int] = {}

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.index[id(node)] = len(self.index)


class _LaterUses(cst.CSTVisitor):
    """Reads of `name` after statement `after`, up to the statement that rebinds it."""

    def __init__(self, name: str, after: cst.CSTNode) -> None:
        self.name = name
        self.after = after
        self.started = False
        self.stopped = False
        self.rebinds = False
        self.loads: List[cst.Name] = []
        self._stores: Set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stopped:
            return False
        return super().on_visit(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if node is self.after:
            self.started = True
        elif self.started and self.rebinds:
            self.stopped = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._stores.add(id(node.target))

    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        node.value.visit(self)
        return False  # the attribute's own name is not a read of `name`

    def visit_Arg(self, node: cst.Arg) -> Optional[bool]:
        node.value.visit(self)
        return False  # nor is a keyword's name

    def visit_Name(self, node: cst.Name) -> None:
        if not self.started or node.value != self.name:
            return
        if id(node) in self._stores:
            self.rebinds = True
        else:
            self.loads.append(node)
