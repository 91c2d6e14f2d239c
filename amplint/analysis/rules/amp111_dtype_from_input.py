"""AMP111 dtype-from-input."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.data import overflow as _FILLS
from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.escape import Entry
from amplint.analysis.facts.finfo_returns import helper_finfo as _helper_finfo
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._property_fill import C10 as _C10, property_fill
from amplint.analysis.rules._util import argument, region_note

# Tensor method -> (position, keyword) of the fill value: the fill calls of the shared table
# (amplint.analysis.data.overflow), and `fill_diagonal_`
METHODS = {**_FILLS.METHODS, "fill_diagonal_": (0, "fill_value")}
# torch function -> (position, keyword) of the fill value, position of the filled tensor (not
# `torch.full`: it fills no tensor it is given)
FUNCTIONS = {name: spec for name, spec in _FILLS.FUNCTIONS.items() if spec[2] is not None}


class DtypeFromInput(Rule):
    """## What it does
    Finds a fill value `torch.finfo(x.dtype).min/max` (or `torch.finfo(d)` with `d = x.dtype`)
    taken from a tensor `x` that comes from outside the autocast region — a parameter of the
    function, a local assigned before the region — and written with `masked_fill`/`fill_`/
    `index_fill`/`fill_diagonal_`/`new_full`/`torch.full_like` into a tensor produced under
    autocast by a matmul-family op or a module (`mat = embeddings @ ref.T` under autocast, then
    `mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)`), in the region, after it, or in
    a function of the same file called under it.

    ## Why is this bad?
    Under float16 autocast `mat` is float16 while `embeddings` stays float32. The float32 range
    (±3.4e38) does not fit in float16 (±65504), nor in bfloat16 (its max is 3.39e38), and the
    fill raises `RuntimeError: value cannot be converted to type c10::Half without overflow`
    (`at::Half` in older builds). The fp32 run works, so tests without autocast pass. This is
    the bug pytorch-metric-learning fixed in `miners/multi_similarity_miner.py` (f9f5a3e).

    The dtype fact (RULES.md "Dtype of values") adds what the file's own calls show: a private
    helper whose every call passes the region's float16 output and a float32 tensor is
    reported, and an input its callers all pass as float16 is not.

    Not reported: `finfo` of the filled tensor's own dtype, or of a tensor known to share it (a
    value of the same region, a name assigned from one); float32 or disabled regions; inputs
    the file does not show (a global, an attribute); helper functions of other files, but for
    one whose every `return` is `torch.finfo` of its parameter's dtype (`max_neg_value(x)` of a
    utils module: read with the call's argument, the project pass summarising that module).

    ## Example
    ```python
    def mine(embeddings, ref):
        with torch.autocast("cuda", dtype=torch.float16):
            mat = embeddings @ ref.T
            mat = mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)
    ```

    ## Use instead
    ```python
    def mine(embeddings, ref):
        with torch.autocast("cuda", dtype=torch.float16):
            mat = embeddings @ ref.T
            mat = mat.masked_fill(mask, torch.finfo(mat.dtype).max)
    ```

    ## Fix safety
    The fix takes the dtype from the filled tensor: `torch.finfo(mat.dtype)`. It is **safe**:
    in a float32 run both tensors are float32 and the value is the same; under autocast it is
    the largest value the tensor can hold, which is what the code meant. When the dtype comes
    through a local (`dtype = embeddings.dtype`) or the filled tensor is not a plain name or
    attribute, the finding has no fix.
    """

    code = "AMP111"
    name = "dtype-from-input"
    severity = Severity.ERROR
    fix_safety = "safe"
    triggers = ("finfo",)

    flag = [
        Flag(  # the pytorch-metric-learning pattern (f9f5a3e)
            "import torch\n"
            "def mine(embeddings, ref, mask):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        mat = embeddings @ ref.T\n"
            "        mat = mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
            "    return mat\n",
            fixed="import torch\n"
            "def mine(embeddings, ref, mask):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        mat = embeddings @ ref.T\n"
            "        mat = mat.masked_fill(mask, torch.finfo(mat.dtype).max)\n"
            "    return mat\n",
        ),
        Flag(  # a miner of the same file called under the region; dtype through a local, a clone
            "import torch\n"
            "class Miner:\n"
            "    def mine(self, embeddings, ref_emb):\n"
            "        dtype = embeddings.dtype\n"
            "        mat = torch.matmul(embeddings, ref_emb.t())\n"
            "        pos_sorting = mat.clone()\n"
            "        pos_sorting.fill_diagonal_(torch.finfo(dtype).max)\n"
            "        return pos_sorting\n"
            "miner = Miner()\n"
            "def step(embeddings, ref):\n"
            "    with torch.autocast('cuda'):\n"
            "        return miner.mine(embeddings, ref)\n",
        ),
        Flag(  # bfloat16 cannot hold float32's max either; a local assigned before the region
            "import torch\n"
            "def scores(q, k, mask):\n"
            "    neg = -torch.finfo(q.dtype).max\n"
            "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "        s = (q @ k.transpose(-2, -1)).masked_fill(mask, neg)\n"
            "    return s\n",
        ),
        Flag(  # after the region, the value is still half
            "import torch\n"
            "def logits(x, w, pad):\n"
            "    with torch.autocast('cuda'):\n"
            "        out = torch.mm(x, w)\n"
            "    out.masked_fill_(pad, torch.finfo(x.dtype).min)\n"
            "    return out\n",
            fixed="import torch\n"
            "def logits(x, w, pad):\n"
            "    with torch.autocast('cuda'):\n"
            "        out = torch.mm(x, w)\n"
            "    out.masked_fill_(pad, torch.finfo(out.dtype).min)\n"
            "    return out\n",
        ),
        Flag(  # scaled by a Python number `math` computes: the scores keep the matmul's float16
            "import math\n"
            "import torch\n"
            "def scores(q, k, mask):\n"
            "    with torch.autocast('cuda'):\n"
            "        att = (q @ k.T) * (1.0 / math.sqrt(k.size(-1)))\n"
            "        return att.masked_fill(mask, torch.finfo(q.dtype).min)\n",
            fixed="import math\n"
            "import torch\n"
            "def scores(q, k, mask):\n"
            "    with torch.autocast('cuda'):\n"
            "        att = (q @ k.T) * (1.0 / math.sqrt(k.size(-1)))\n"
            "        return att.masked_fill(mask, torch.finfo(att.dtype).min)\n",
        ),
        Flag(  # a private helper of the file: every call binds `mat` to the region's float16
            # matmul output and `ref` to a float32 tensor (the dtype fact's bound parameters)
            "import torch\n"
            "def _fill(mat, ref, mask):\n"
            "    return mat.masked_fill(mask, torch.finfo(ref.dtype).min)\n"
            "def scores(q, k, mask):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        mat = q.float() @ k.float().T\n"
            "        return _fill(mat, k.float(), mask)\n",
            fixed="import torch\n"
            "def _fill(mat, ref, mask):\n"
            "    return mat.masked_fill(mask, torch.finfo(mat.dtype).min)\n"
            "def scores(q, k, mask):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        mat = q.float() @ k.float().T\n"
            "        return _fill(mat, k.float(), mask)\n",
        ),
        Flag(  # `dtype` a property returning the parameters' dtype (transformers' ModuleUtilsMixin;
            # a base class of another file is read by the project pass): float32 parameters
            "import torch\n"
            "from torch import nn\n"
            "class Attention(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.q = nn.Linear(8, 8)\n"
            "    @property\n"
            "    def dtype(self):\n"
            "        return next(self.parameters()).dtype\n"
            "    def forward(self, x, mask):\n"
            "        with torch.autocast('cuda'):\n"
            "            s = self.q(x) @ x.transpose(-1, -2)\n"
            "            return s.masked_fill(mask, torch.finfo(self.dtype).min)\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class Attention(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.q = nn.Linear(8, 8)\n"
            "    @property\n"
            "    def dtype(self):\n"
            "        return next(self.parameters()).dtype\n"
            "    def forward(self, x, mask):\n"
            "        with torch.autocast('cuda'):\n"
            "            s = self.q(x) @ x.transpose(-1, -2)\n"
            "            return s.masked_fill(mask, torch.finfo(s.dtype).min)\n",
        ),
    ]
    clean = [
        # `self.dtype` that is not the parameters' dtype: a property returning a stored dtype,
        # an attribute the class stores; or a class whose module is made half (its parameters
        # share the scores' float16)
        "import torch\n"
        "from torch import nn\n"
        "class Attention(nn.Module):\n"
        "    def __init__(self, dtype):\n"
        "        super().__init__()\n"
        "        self.q = nn.Linear(8, 8)\n"
        "        self._dtype = dtype\n"
        "    @property\n"
        "    def dtype(self):\n"
        "        return self._dtype\n"
        "    def forward(self, x, mask):\n"
        "        with torch.autocast('cuda'):\n"
        "            s = self.q(x) @ x.transpose(-1, -2)\n"
        "            return s.masked_fill(mask, torch.finfo(self.dtype).min)\n"
        "class Stored(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.q = nn.Linear(8, 8)\n"
        "        self.dtype = torch.float16\n"
        "    def forward(self, x, mask):\n"
        "        with torch.autocast('cuda'):\n"
        "            s = self.q(x) @ x.transpose(-1, -2)\n"
        "            return s.masked_fill(mask, torch.finfo(self.dtype).min)\n",
        "import torch\n"
        "from torch import nn\n"
        "class Attention(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.q = nn.Linear(8, 8)\n"
        "    @property\n"
        "    def dtype(self):\n"
        "        return next(self.parameters()).dtype\n"
        "    def forward(self, x, mask):\n"
        "        with torch.autocast('cuda'):\n"
        "            s = self.q(x) @ x.transpose(-1, -2)\n"
        "            return s.masked_fill(mask, torch.finfo(self.dtype).min)\n"
        "def infer(x, mask):\n"
        "    return Attention().half()(x, mask)\n",
        # the input is half where it comes from: every call of the private helper passes
        # float16 tensors, so finfo(embeddings.dtype) is float16's range
        "import torch\n"
        "def _mine(embeddings, ref, mask):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        mat = embeddings @ ref.T\n"
        "        return mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
        "def step(e, r, mask):\n"
        "    return _mine(e.half(), r.half(), mask)\n",
        # the helper's filled tensor is float32 at every call
        "import torch\n"
        "def _fill(mat, ref, mask):\n"
        "    return mat.masked_fill(mask, torch.finfo(ref.dtype).min)\n"
        "def scores(q, k, mask):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        mat = (q @ k.T).float()\n"
        "        return _fill(mat, k.float(), mask)\n",
        # finfo of the filled tensor's own dtype, or of a value of the same region
        "import torch\n"
        "def mine(embeddings, ref, mask):\n"
        "    with torch.autocast('cuda'):\n"
        "        mat = embeddings @ ref.T\n"
        "        other = ref @ ref.T\n"
        "        a = mat.masked_fill(mask, torch.finfo(mat.dtype).max)\n"
        "        b = mat.masked_fill(mask, torch.finfo(other.dtype).min)\n"
        "        c = mat.clone().masked_fill(mask, torch.finfo(mat.dtype).min)\n",
        # no region, a disabled one, a float32 one
        "import torch\n"
        "def mine(embeddings, ref, mask):\n"
        "    mat = embeddings @ ref.T\n"
        "    mat = mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        m2 = (embeddings @ ref.T).masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
        "    with torch.autocast('cpu', dtype=torch.float32):\n"
        "        m3 = (embeddings @ ref.T).masked_fill(mask, torch.finfo(embeddings.dtype).max)\n",
        # the filled tensor is not a region's output (cast to float32, or a promoting op)
        "import torch\n"
        "def mine(embeddings, ref, mask):\n"
        "    with torch.autocast('cuda'):\n"
        "        mat = (embeddings @ ref.T).float()\n"
        "        mat = mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
        "        d = torch.cdist(embeddings, ref)\n"
        "        d = d.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n",
        # finfo of something that is not an input: a global, an attribute; tiny/eps do not overflow
        "import torch\n"
        "def mine(embeddings, ref, mask):\n"
        "    with torch.autocast('cuda'):\n"
        "        mat = embeddings @ ref.T\n"
        "        a = mat.masked_fill(mask, torch.finfo(GLOBAL.dtype).max)\n"
        "        b = mat.masked_fill(mask, torch.finfo(self.w.dtype).max)\n"
        "        c = mat.masked_fill(mask, torch.finfo(embeddings.dtype).eps)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        if not facts.regions.uses_autocast() and not any(
            f.inherited is not None for f in facts.tree.frames
        ):
            return
        escape = None
        for qualified, site in facts.qualified_calls:
            call, frame, func = site.node, site.frame, site.node.func
            if qualified in FUNCTIONS:
                index, keyword, tensor_index = FUNCTIONS[qualified]
                tensor = argument(call, tensor_index, "input")
                target = tensor.value if tensor is not None else None
            elif qualified is None and isinstance(func, cst.Attribute) and func.attr.value in METHODS:
                index, keyword = METHODS[func.attr.value]
                target = func.value
            else:
                continue
            value = argument(call, index, keyword)
            if value is None or target is None:
                continue
            escape = escape or facts.escape
            source = self._finfo_source(value.value, escape)
            helper = None
            if source is None:
                helper = _helper_finfo(facts, value.value, frame)
                if helper is None:
                    continue
                source = helper[:5]
            finfo_call, dtype_arg, x, bound, direct = source
            if isinstance(x, cst.Attribute):  # `self.dtype`, a property (facts/property_dtypes.py)
                found = property_fill(self, ctx, x, bound, target, frame, escape, direct)
                if found is not None:
                    yield found
                continue
            dtypes = facts.dtypes
            x_value = dtypes.dtype(x)
            if x_value is not None and not x_value.conditional \
                    and x_value.options <= {"float16", dtypes.exact(target)}:
                continue  # the fact shows `x` float16 or the filled tensor's own dtype
                # (a parameter its callers bind): its range fits
            entry = escape.half_source(target, frame)
            if entry is not None and entry.region is None:
                continue  # returned by another file's function: its region is not this file's
            origin = "an input from outside the autocast region (float32)"
            if entry is None:
                entry = _half_by_fact(facts, target, x, frame)
                if entry is None:
                    continue
                origin = "float32 (what the file's code passes it)"
            else:
                x_entry = escape.read(x)
                if x_entry is None or x_entry.kind not in ("param", "other", "f32") \
                        or x_entry.in_region:
                    if _half_by_fact(facts, target, x, frame) is None:
                        continue
                    # made under the region, float32 there (a factory, a float32 helper's
                    # return): the dtype fact shows both dtypes on the region's path
                    origin = "float32 (what the file's code makes it)"
            root = escape._root(target, frame)
            if isinstance(root, cst.Name) and root.value == x.value:
                continue
            yield self._diagnostic(ctx, finfo_call, dtype_arg, x, bound, target, entry, direct,
                                   origin, helper[5:] if helper is not None else None)

    @staticmethod
    def _finfo_source(
        expr: cst.BaseExpression, escape
    ) -> Optional[Tuple[cst.Call, cst.BaseExpression, cst.Name, str, bool]]:
        """(finfo call, its argument, the tensor whose dtype it reads, "min"/"max", whether the
        finfo is written in the fill itself) for `[-]torch.finfo(x.dtype).min/max`, through a
        local assigned from one, and `torch.finfo(d)` with `d = x.dtype`."""
        direct = True
        for _ in range(3):
            if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
                expr = expr.expression
            if isinstance(expr, cst.Name):
                entry = escape.read(expr)
                if entry is None or entry.value is None or entry.kind != "other":
                    return None
                expr, direct = entry.value, False
                continue
            break
        if not (isinstance(expr, cst.Attribute) and expr.attr.value in ("min", "max")):
            return None
        call = expr.value
        if not (
            isinstance(call, cst.Call)
            and len(call.args) == 1
            and call.args[0].keyword is None
            and (
                getattr(call.func, "attr", None) is not None
                and call.func.attr.value == "finfo"
                or isinstance(call.func, cst.Name) and call.func.value == "finfo"
            )
        ):
            return None
        arg = call.args[0].value
        if isinstance(arg, cst.Name):  # `d = x.dtype`
            entry = escape.read(arg)
            if entry is None or entry.value is None:
                return None
            arg, direct = entry.value, False
        if isinstance(arg, cst.Attribute) and isinstance(arg.value, cst.Name) and arg.value.value == "self":
            return call, arg, arg, expr.attr.value, direct  # `self.dtype`: a property, maybe
        if (
            isinstance(arg, cst.Attribute)
            and arg.attr.value == "dtype"
            and isinstance(arg.value, cst.Name)
        ):
            return call, arg, arg.value, expr.attr.value, direct
        return None

    def _diagnostic(self, ctx, finfo_call, dtype_arg, x, bound, target, entry, direct, origin, helper=None):
        region = entry.region
        half = region.dtype or "half (float16 or bfloat16)"
        note, related = region_note(region)
        target_text = ctx.module.code_for_node(target).strip()
        plain = _plain(target)
        shown = f"`{target_text}`" if plain else "the filled tensor"
        read = f"`torch.finfo({x.value}.dtype).{bound}`"
        if helper is not None and len(helper) > 2:  # the helper is another file's (ldm/util.py)
            call, param, (callee, line) = helper
            where, _, function = callee.partition(": ")
            read = (f"`{ctx.module.code_for_node(call)}` (`torch.finfo({param}.dtype).{bound}` of "
                    f"`{function}` at {where}:{line}, with `{param}` = `{x.value}`)")
            dtype_arg = call
        elif helper is not None:  # `max_neg_value(x)`: the helper's finfo of its parameter
            call, param = helper
            read = (f"`{ctx.module.code_for_node(call)}` (`torch.finfo({param}.dtype).{bound}` of "
                    f"the function at line {{finfo_line}}, with `{param}` = `{x.value}`)")
            related = {**related, "finfo_line": finfo_call}
            dtype_arg = call
        message = (
            f"{read} takes the range of `{x.value}`, {origin}, "
            f"but {shown} is {half} under autocast "
            f"{note}: 'RuntimeError: value cannot be converted to type {_C10.get(half, 'c10::Half')} without "
            f"overflow'; take the dtype from the filled tensor"
        )
        fix = None
        if direct and plain:
            fix = self.fix(
                Applicability.SAFE,
                f"Use `torch.finfo({target_text}.dtype)`",
                {x: target.deep_clone()},
            )
        return self.report(dtype_arg, message, fix=fix, related=related)


def _half_by_fact(facts, target: cst.BaseExpression, x: cst.Name, frame) -> Optional[Entry]:
    """The dtype fact's reading where the escape walk has none: the filled tensor is float16 or
    bfloat16 under an active region and `x` float32 (`_fill(mat, ref.float(), mask)` with
    `def _fill(mat, ref, mask)` whose every call binds `mat` to a region's matmul output)."""
    region = facts.active_region(frame)
    dtypes = facts.dtypes
    if region is None or dtypes.exact(target) not in ("float16", "bfloat16"):
        return None
    if dtypes.exact(x) not in ("float32", "float64"):
        return None
    return Entry("half", True, target, region)


def _plain(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return True
    return isinstance(expr, cst.Attribute) and _plain(expr.value)
