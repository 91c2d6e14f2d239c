"""AMP140 eps-underflow."""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.half_callees import half_param_entries
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.returned_casts import moved_root
from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes
from amplint.analysis.facts.float16_scope import float16_where, has_float16_code
from amplint.analysis.facts.half_values import FrameWalker, float16_values, walk_float16_code
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._param_sources import call_arguments, is_parameter, parameter_owners
from amplint.analysis.rules._eps_literals import local_literal as _local_literal, self_attr_literal as _self_attr_literal
from amplint.analysis.rules._util import argument, code_of, keyword, literal_float

SMALLEST_HALF = 2.0 ** -24  # 5.96e-08, the smallest positive float16 (a subnormal)
ROUNDS_TO_ZERO = 2.0 ** -25  # at or below this, a float16 rounds it to 0
THRESHOLD = 6e-8

# torch optimizers whose update divides by (sqrt(second moment) + eps), with their default eps
OPTIMIZER_EPS = {
    "Adam": 1e-8, "AdamW": 1e-8, "Adamax": 1e-8, "NAdam": 1e-8, "RAdam": 1e-8,
    "SparseAdam": 1e-8, "RMSprop": 1e-8, "Adagrad": 1e-10,
}
# Wrappers that keep fp32 master weights for the optimizer they are given.
MASTER_WEIGHT_WRAPPERS = ("FP16_Optimizer", "MixedPrecisionOptimizer", "initialize")

class EpsUnderflow(Rule):
    """## What it does
    Finds an epsilon too small for float16 (a literal below 6e-8: `1e-8`, `1e-10`, `1e-12`,
    or `self.eps` set from one) added to a float16 tensor outside autocast, in `x + eps`,
    `x.add(eps)`, `x.clamp(min=eps)`, `x.clamp_min(eps)` and `F.normalize(x, eps=...)`: in
    the methods of a module
    class the file turns `.half()` (or, linting a project, that another file makes float16),
    and on tensors the file itself casts to float16. Also
    `torch.optim.Adam` (AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad) with its default or a
    tiny `eps=` over the `.parameters()` of a model the file casts to float16.

    A function those methods call with their float16 values runs on float16 too: a
    module-level helper of the file (`def normalize_2nd_moment(x, eps=1e-8)` called from
    `MappingNetwork.forward`), its parameter float16 where every caller of the file passes
    float16, or, linting a project, a function of another file that the float16 code passes a
    float16 value (MaskGit's `gumbel_sample(logits)` reaching `log(t, eps=1e-20)` in helpers.py);
    and what such a function calls in turn. Not from `__init__`, whose parameters are settings.

    Linting a project, the model may be a parameter of a module-level function that another
    file passes a model it casts to float16 (SlowFast's `construct_optimizer(model, cfg)`
    called from tools/train_net.py after `model.half()`), unless the function rebinds it.

    A module class is also half when a method of the file that casts its instances'
    submodules is called (`model.convert_to_fp16()` running
    `self.blocks.apply(convert_module_to_f16)` or `self.blocks.half()`).

    Under a float16 autocast region, the same eps arithmetic on a value the dtype fact shows
    float16 there (torch's autocast tables: a `torch.nn.Linear`/`Conv` output or a matmul,
    through dtype-keeping ops such as `sigmoid`, `view`, `* 2`): `torch.sigmoid(self.fc(x)) +
    1e-8`. Not there: values autocast runs in float32 (`exp`, `norm`, `softmax`, `sum` on
    CUDA), `F.normalize` (its norm is float32), outputs of a model whose dtype the file does
    not show, bfloat16 regions.

    ## Why is this bad?
    The smallest positive float16 is 2**-24 = 5.96e-8; anything at or below 2**-25 rounds to 0.
    In float16 `torch.tensor([1.0], dtype=torch.half) + 1e-8 == 1` and
    `torch.zeros(1, dtype=torch.half) + 1e-8 == 0`, so the epsilon guards nothing: a zero
    denominator stays zero (`x / 0 = inf`, `0 / 0 = nan`), `log(0 + eps) = -inf` and
    `rsqrt(var + eps)` is inf on a constant row; `F.normalize` of an all-zero float16 row is
    NaN where the float32 one is 0 (its default eps, 1e-12, is not reported: an eps written out
    shows the author expects zero rows, the default does not). The same happens inside Adam on half
    parameters: a gradient of 1e-5 gives a second moment of 1e-13, which is 0 in float16, the
    denominator `sqrt(v) + 1e-8` is 0, and one `step()` turns the parameters into `-inf`
    (checked with torch 2.13 on CPU, for the default and the foreach implementations).

    Not reported: the same eps in float32 code or on autocast values not shown float16 (an
    optimizer over fp32 parameters, the AMP recipe, is fine: autocast never makes parameters
    half),
    `nn.LayerNorm(d, eps=1e-12)` and `F.layer_norm` (their kernels add eps in float32),
    an eps 6e-8 or larger, `fused=True` optimizers (the fused kernels do the update math in
    float32), optimizers handed to a master-weight wrapper (`FP16_Optimizer`,
    `amp.initialize`), and bfloat16 casts (bfloat16 has float32's range).

    ## Example
    ```python
    class Scorer(nn.Module):
        def forward(self, x):
            n = x.pow(2).sum(-1, keepdim=True).sqrt()
            return x / (n + 1e-8)

    model = Scorer().cuda().half()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ```

    ## Use instead
    ```python
    class Scorer(nn.Module):
        def forward(self, x):
            n = x.pow(2).sum(-1, keepdim=True).sqrt()
            return x / (n + torch.finfo(x.dtype).tiny)

    model = Scorer().cuda()  # fp32 weights, float16 compute under autocast
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    ```

    ## Fix safety
    No automatic fix, only the suggestion: which eps is right depends on what it guards (a
    dtype-following `torch.finfo(x.dtype).tiny` is 6.1e-5 in float16 and 1.2e-38 in float32;
    `torch.finfo(x.dtype).eps` is 9.8e-4 and 1.2e-7), and for an optimizer the better change is
    fp32 parameters under autocast (or `fused=True`), which is beyond a local edit.
    """

    code = "AMP140"
    name = "eps-underflow"
    severity = Severity.WARNING
    fix_safety = "suggestion"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half", "f16")

    flag = [
        Flag(  # float16 values autocast produces: a Linear's output through sigmoid, a matmul
            "import torch\n"
            "from torch import nn\n"
            "class Scorer(nn.Module):\n"
            "    def __init__(self, d):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(d, 1)\n"
            "    def forward(self, x):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            p = torch.sigmoid(self.fc(x))\n"
            "            q = torch.sigmoid(x @ x.t()).clamp(min=1e-10)\n"
            "            return -torch.log(p + 1e-8).mean(), q\n",
            count=2,
        ),
        Flag(  # a half module: the eps of a hand-written normalisation vanishes
            "import torch\n"
            "from torch import nn\n"
            "class Scorer(nn.Module):\n"
            "    def forward(self, x):\n"
            "        n = x.pow(2).sum(-1, keepdim=True).sqrt()\n"
            "        return x / (n + 1e-8)\n"
            "model = Scorer().cuda().half()\n",
        ),
        Flag(  # BertLayerNorm-style: self.variance_epsilon from a 1e-12 default
            "import torch\n"
            "from torch import nn\n"
            "class LayerNorm(nn.Module):\n"
            "    def __init__(self, hidden, eps=1e-12):\n"
            "        super().__init__()\n"
            "        self.weight = nn.Parameter(torch.ones(hidden))\n"
            "        self.variance_epsilon = eps\n"
            "    def forward(self, x):\n"
            "        u = x.mean(-1, keepdim=True)\n"
            "        s = (x - u).pow(2).mean(-1, keepdim=True)\n"
            "        return self.weight * (x - u) / torch.sqrt(s + self.variance_epsilon)\n"
            "class Encoder(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.norm = LayerNorm(768)\n"
            "encoder = Encoder().half()\n",
        ),
        Flag(  # Adam with its default eps over half parameters
            "import torch\n"
            "def train(model, loader, lr=1e-3):\n"
            "    model.cuda().half()\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    for x, y in loader:\n"
            "        loss = model(x.cuda().half(), y.cuda())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n",
        ),
        Flag(  # a tensor the file casts to float16; clamp_min and log
            "import torch\n"
            "def log_mel(spec):\n"
            "    power = spec.half().abs() ** 2\n"
            "    return power.clamp_min(1e-10).log10()\n",
        ),
        Flag(  # F.normalize with an explicit eps meant to guard zero (padding) rows
            "import torch.nn.functional as F\n"
            "from torch import nn\n"
            "class Proj(nn.Module):\n"
            "    def __init__(self, d):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(d, d)\n"
            "    def forward(self, x):\n"
            "        return F.normalize(self.fc(x), dim=-1, eps=1e-12)\n"
            "proj = Proj(64).half()\n",
        ),
        Flag(  # RMSprop with an explicit tiny eps over a model built half
            "import torch\n"
            "net = build_net().to('cuda', torch.float16)\n"
            "opt = torch.optim.RMSprop(net.parameters(), lr=1e-4, eps=1e-10)\n",
        ),
        Flag(  # half through a method of the file: `convert_to_fp16` casts the blocks
            "import torch\n"
            "from torch import nn\n"
            "from .fp16_util import convert_module_to_f16\n"
            "class Scorer(nn.Module):\n"
            "    def forward(self, x):\n"
            "        n = x.abs().sum(-1, keepdim=True)\n"
            "        return x / (n + 1e-8)\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.blocks = nn.ModuleList([Scorer(), Scorer()])\n"
            "    def convert_to_fp16(self):\n"
            "        self.blocks.apply(convert_module_to_f16)\n"
            "model = Net()\n"
            "if use_fp16:\n"
            "    model.convert_to_fp16()\n",
        ),
        Flag(  # an optimizer helper (SlowFast's construct_optimizer) over a model its caller halved
            "import torch\n"
            "def construct_optimizer(model, cfg):\n"
            "    bn, rest = [], []\n"
            "    for name, p in model.named_parameters():\n"
            "        (bn if 'bn' in name else rest).append(p)\n"
            "    groups = [{'params': bn, 'weight_decay': 0.0}, {'params': rest}]\n"
            "    return torch.optim.AdamW(groups, lr=cfg.lr, eps=1e-8)\n"
            "def train(cfg):\n"
            "    model = build_model(cfg)\n"
            "    if cfg.half:\n"
            "        model = model.half()\n"
            "    optimizer = construct_optimizer(model, cfg)\n",
        ),
        Flag(  # a module moved to the GPU before it is bound is the same module: its output
            # under float16 autocast is float16, squared and averaged in float16 (a pixel norm)
            "import torch\nimport torch.nn as nn\n"
            "def pixel_norm(x):\n"
            "    proj = nn.Conv2d(3, 16, 1).cuda()\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        h = proj(x)\n"
            "        return h / torch.sqrt((h * h).mean(dim=1, keepdim=True) + 1e-8)\n",
        ),
        Flag(  # a pixel-norm module whose every call passes the float16 conv output of the
            # autocast its holder opens: its forward's `x` is float16
            "import torch\nimport torch.nn as nn\n"
            "class PixelNorm(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
            "class Generator(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n"
            "        self.norm = PixelNorm()\n"
            "    def forward(self, x):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            return self.norm(self.conv(x))\n",
        ),
        Flag(  # the pixel norm behind a network that is only ever called under the autocast:
            # the network's forward surely runs under it, so the conv feeds it float16
            "import torch\nimport torch.nn as nn\n"
            "class PixelNorm(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n"
            "        self.norm = PixelNorm()\n"
            "    def forward(self, x):\n"
            "        return self.norm(self.conv(x))\n"
            "net = Net().cuda()\n"
            "def train(x):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        return net(x).mean()\n",
        ),
        Flag(  # the same network also evaluated outside the autocast: the training step still
            # runs the pixel norm on the float16 conv output (README, "Call paths"); the finding
            # cites the call and the region
            "import torch\nimport torch.nn as nn\n"
            "class PixelNorm(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n"
            "        self.norm = PixelNorm()\n"
            "    def forward(self, x):\n"
            "        return self.norm(self.conv(x))\n"
            "net = Net().cuda()\n"
            "def train(x):\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        return net(x).mean()\n"
            "def evaluate(x):\n"
            "    return net(x).mean()\n",
        ),
        Flag(  # the pixel norm also called elsewhere with a value of unknown dtype: on the
            # region's path its `x` is the float16 conv output
            "import torch\nimport torch.nn as nn\n"
            "class PixelNorm(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
            "class Generator(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n"
            "        self.norm = PixelNorm()\n"
            "    def forward(self, x):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            return self.norm(self.conv(x))\n"
            "    def style(self, w):\n"
            "        return self.norm(w)\n",
        ),
    ]
    clean = [
        # the region's call passes the conv output cast back to float32 (the network is also
        # evaluated outside the autocast): float32 on the region's path, 1e-8 is held
        "import torch\nimport torch.nn as nn\n"
        "class PixelNorm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n"
        "        self.norm = PixelNorm()\n"
        "    def forward(self, x):\n"
        "        return self.norm(self.conv(x).float())\n"
        "net = Net().cuda()\n"
        "def train(x):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        return net(x).mean()\n"
        "def evaluate(x):\n"
        "    return net(x).mean()\n",
        # the same, the pixel norm also called elsewhere with a value of unknown dtype
        "import torch\nimport torch.nn as nn\n"
        "class PixelNorm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
        "class Generator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n"
        "        self.norm = PixelNorm()\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            return self.norm(self.conv(x).float())\n"
        "    def style(self, w):\n"
        "        return self.norm(w)\n",
        # called with bfloat16 (CPU autocast): 1e-8 is held
        "import torch\nimport torch.nn as nn\n"
        "class PixelNorm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
        "class Generator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n"
        "        self.norm = PixelNorm()\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "            return self.norm(self.conv(x))\n",
        # the helper's caller passes a float32 model; another list's parameters
        "import torch\n"
        "def construct_optimizer(model, cfg, extra):\n"
        "    params = [p for p in extra.parameters()]\n"
        "    return torch.optim.AdamW(params, lr=cfg.lr, eps=1e-8)\n"
        "def train(cfg):\n"
        "    model = build_model(cfg)\n"
        "    teacher = build_model(cfg).half()\n"
        "    optimizer = construct_optimizer(teacher, cfg, model)\n",
        # under autocast: bfloat16 holds 1e-8; CUDA autocast's float32 ops (`exp`, `norm`,
        # `softmax`); F.normalize (its norm runs in float32); a project model's output (dtype
        # not shown); eps outside the region on a float32 value
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "fc = nn.Linear(8, 8)\n"
        "def score(model, x):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        a = torch.sigmoid(fc(x)) + 1e-8\n"
        "    with torch.autocast('cuda'):\n"
        "        h = fc(x)\n"
        "        b = torch.exp(h) + 1e-8\n"
        "        c = h / (h.norm(dim=-1, keepdim=True) + 1e-8)\n"
        "        d = F.normalize(h, dim=-1, eps=1e-12)\n"
        "        e = model(x) + 1e-8\n"
        "        s = h.softmax(-1) + 1e-10\n"
        "    f = torch.randn(4) + 1e-8\n"
        "    return a, b, c, d, e, f, s\n",
        # the casting method is never called in the file: the blocks stay float32
        "import torch\n"
        "from torch import nn\n"
        "from .fp16_util import convert_module_to_f16\n"
        "class Scorer(nn.Module):\n"
        "    def forward(self, x):\n"
        "        n = x.abs().sum(-1, keepdim=True)\n"
        "        return x / (n + 1e-8)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.blocks = nn.ModuleList([Scorer(), Scorer()])\n"
        "    def convert_to_fp16(self):\n"
        "        self.blocks.apply(convert_module_to_f16)\n"
        "model = Net()\n",
        # the AMP recipe: fp32 parameters, Adam's default eps, eps in autocast code
        "import torch\n"
        "model = Net().cuda()\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, eps=1e-8)\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    emb = model(x)\n"
        "    emb = emb / (emb.norm(dim=-1, keepdim=True) + 1e-8)\n",
        # a half model whose LayerNorm eps is 1e-12 (BERT): the kernel adds eps in float32
        "import torch\n"
        "from torch import nn\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, d):\n"
        "        super().__init__()\n"
        "        self.norm = nn.LayerNorm(d, eps=1e-12)\n"
        "    def forward(self, x):\n"
        "        return self.norm(x) + F.layer_norm(x, (x.shape[-1],), eps=1e-12)\n"
        "block = Block(64).half()\n",
        # in a half module: the statistic computed in float32 first, scalars, a big enough eps
        "import math\n"
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "class Head(nn.Module):\n"
        "    def forward(self, x, eps=1e-12):\n"
        "        var = x.float().pow(2).mean(-1, keepdim=True)\n"
        "        h = x * torch.rsqrt(var + 1e-12).to(x.dtype)\n"
        "        scale = math.sqrt(x.shape[-1]) + 1e-8\n"
        "        h = F.normalize(F.normalize(h, dim=-1), dim=-1, eps=1e-4)\n"
        "        return h / (h.abs().amax(-1, keepdim=True) + 1e-4) * scale\n"
        "head = Head().half()\n",
        # bfloat16 holds 1e-8; fused Adam updates in float32; a master-weight wrapper
        "import torch\n"
        "model = Net().cuda().bfloat16()\n"
        "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "half_model = Other().half()\n"
        "opt2 = torch.optim.AdamW(half_model.parameters(), lr=1e-3, fused=True)\n"
        "opt3 = FP16_Optimizer(torch.optim.Adam(half_model.parameters()), dynamic_loss_scale=True)\n",
        # a half cast of one name does not make another one half
        "import torch\n"
        "def evaluate(model, teacher, x):\n"
        "    teacher.half()\n"
        "    opt = torch.optim.Adam(model.parameters())\n"
        "    return x / (x.sum() + 1e-8)\n",
        # the same norm outside autocast: the moved module computes in float32
        "import torch\nimport torch.nn as nn\n"
        "def pixel_norm(x, device):\n"
        "    proj = nn.Conv2d(3, 16, 1).to(device).train()\n"
        "    h = proj(x)\n"
        "    return h / torch.sqrt((h * h).mean(dim=1, keepdim=True) + 1e-8)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        yield from self._autocast_values(ctx)
        passed = half_param_entries(facts.entries)  # models other files halve, passed here
        casts = facts.fp16.model_casts or facts.fp16.float16_functions
        if casts or passed:
            yield from self._optimizers(ctx, passed)
        if not has_float16_code(facts):
            return  # no float16 cast here, nor a class of this file another file makes float16
        values = float16_values(facts)
        rule = self
        found: List[Tuple[cst.CSTNode, cst.BaseExpression, float, Frame]] = []

        class Visitor(FrameWalker):
            def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
                if not isinstance(node.operator, cst.Add):
                    return
                for eps, other in ((node.right, node.left), (node.left, node.right)):
                    value = rule._tiny(eps, self.frame, facts)
                    if value is not None:
                        if values.is_float16(other, self.frame):
                            found.append((node, other, value, self.frame))
                        return

            def visit_Call(self, node: cst.Call) -> None:
                hit = rule._eps_call(node, self.frame, facts)
                if hit is not None and values.is_float16(hit[0], self.frame):
                    found.append((node, hit[0], hit[1], self.frame))

        walk_float16_code(facts, lambda start: Visitor(facts, values, start))
        for node, operand, value, frame in found:
            where, related = float16_where(facts, frame)
            operand_code = _short(code_of(ctx.module, operand))
            if related:  # the message is formatted with the related lines
                operand_code = operand_code.replace("{", "{{").replace("}", "}}")
            message = (
                f"eps {value:g} {_rounding(value)} in float16, so it guards nothing for "
                f"`{operand_code}` ({where}): a zero stays zero "
                "(x / 0 = inf, 0 / 0 = NaN, log(0) = -inf); use an eps float16 can hold "
                "(`torch.finfo(x.dtype).tiny`) or compute this in float32"
            )
            yield self.report(node, message, related=related)

    def _autocast_values(self, ctx) -> Iterable[Diagnostic]:
        """eps added to a float16 value an autocast region produces, as the dtype fact
        (amplint.analysis.facts.dtypes) shows it: `torch.sigmoid(self.fc(x)) + 1e-8` under a float16
        region. `F.normalize` is left alone: under CUDA autocast its norm is float32."""
        facts = ctx.facts
        if not facts.regions.uses_autocast() and not facts.regions.entries:
            return  # no region here, nor one another file puts around this file's code
        dtypes = facts.dtypes
        rule = self
        found: List[Tuple[cst.CSTNode, cst.BaseExpression, float, Frame]] = []

        def half_here(expr: cst.BaseExpression, frame: Frame) -> bool:
            return dtypes.float16_in_region(expr, frame) is not None

        # the calls and additions the dtype fact valued under a region (no second walk)
        for node, frame in dtypes.region_nodes:
            if isinstance(node, cst.BinaryOperation):
                if not isinstance(node.operator, cst.Add):
                    continue
                for eps, other in ((node.right, node.left), (node.left, node.right)):
                    value = rule._tiny(eps, frame, facts)
                    if value is not None:
                        if half_here(other, frame):
                            found.append((node, other, value, frame))
                        break
            elif resolve_expr(node.func, frame) != "torch.nn.functional.normalize":
                hit = rule._eps_call(node, frame, facts)
                if hit is not None and half_here(hit[0], frame):
                    found.append((node, hit[0], hit[1], frame))
        for node, operand, value, frame in found:
            region = facts.active_region(frame).root
            where = "the autocast region at line {region}"
            related = {"region": region.origin}
            call = dtypes.path_call(frame)
            if call is not None:  # the value holds on the path through this call only
                where, related["call"] = where + ", called at line {call}", call
            snippet = _short(code_of(ctx.module, operand))
            what = "a float16 value of "
            if region.external:  # no related lines: the message is not formatted
                where, related = region.external, {}
                if not where.startswith("the "):  # "called at train.py:13 under the ..."
                    what = "a float16 value "
                if dtypes.declared_region(frame) is not None:
                    what = "a value that may be float16, in code "
            else:
                snippet = snippet.replace("{", "{{").replace("}", "}}")
            message = (
                f"eps {value:g} {_rounding(value)} in float16, so it guards nothing for "
                f"`{snippet}` ({what}{where}): a zero stays zero "
                "(x / 0 = inf, 0 / 0 = NaN, log(0) = -inf); use an eps float16 can hold "
                "(`torch.finfo(x.dtype).tiny`) or compute this in float32"
            )
            yield self.report(node, message, related=related)

    # -- eps arithmetic -------------------------------------------------------------------
    def _eps_call(self, call: cst.Call, frame: Frame, facts):
        """(operand, eps value) for `x.add(eps)`, `x.clamp(min=eps)`, `x.clamp_min(eps)`,
        `torch.add/clamp/clamp_min/clip(x, ...)`, `F.normalize(x, eps=...)`."""
        func = call.func
        qualified = resolve_expr(func, frame) or ""
        if qualified == "torch.nn.functional.normalize":
            operand_arg = argument(call, 0, "input")
            eps_arg = argument(call, 3, "eps")
            if operand_arg is None:
                return None
            if eps_arg is None:
                return None  # the default eps: the author asked for no guard in particular
            value = self._tiny(eps_arg.value, frame, facts)
            return None if value is None else (operand_arg.value, value)
        if qualified.startswith("torch.") and qualified.count(".") == 1:
            name = qualified.split(".")[1]
            operand_arg = argument(call, 0, "input")
            offset = 1
        elif isinstance(func, cst.Attribute) and not qualified:
            name = func.attr.value
            operand_arg = cst.Arg(func.value)
            offset = 0
        else:
            return None
        if name in ("add", "add_"):
            eps_arg = argument(call, offset, "other")
        elif name in ("clamp", "clamp_", "clip", "clip_"):
            eps_arg = argument(call, offset, "min")
        elif name in ("clamp_min", "clamp_min_"):
            eps_arg = argument(call, offset, "min")
        else:
            return None
        if operand_arg is None or eps_arg is None:
            return None
        value = self._tiny(eps_arg.value, frame, facts)
        return None if value is None else (operand_arg.value, value)

    def _tiny(self, expr: cst.BaseExpression, frame: Frame, facts) -> Optional[float]:
        value = literal_float(expr)
        if value is None and isinstance(expr, (cst.Name, cst.Attribute)):
            # the numbers that reach it through the file's bindings, what each call passes or
            # leaves to a default (a config object's attribute passed on as `eps=`): every one
            # tiny; else the binding the function itself shows
            numbers = facts.bound_values.numbers(expr)
            if numbers:
                value = max(numbers)
        if value is None:
            value = _self_attr_literal(expr, frame, facts)
        if value is None and isinstance(expr, cst.Name):
            value = _local_literal(expr.value, frame, facts)
        if value is not None and 0 < value < THRESHOLD:
            return value
        return None

    # -- optimizers -----------------------------------------------------------------------
    def _optimizers(self, ctx, passed) -> Iterable[Diagnostic]:
        """`passed`: (function, parameter) -> EntryHalfParam, the parameters another file passes
        a half model (project/half_params.py)."""
        facts = ctx.facts
        half_models = _half_models(facts)
        if not half_models and not passed:
            return
        wrapped = _wrapped_names(facts)
        for qualified, site in facts.qualified_calls:
            if not qualified or not qualified.startswith("torch.optim."):
                continue
            cls = qualified.rsplit(".", 1)[-1]
            if cls not in OPTIMIZER_EPS:
                continue
            call = site.node
            fused = keyword(call, "fused")
            if fused is not None and not (
                isinstance(fused.value, cst.Name) and fused.value.value in ("False", "None")
            ):
                continue
            eps_arg = keyword(call, "eps")
            if eps_arg is not None:
                eps = literal_float(eps_arg.value)
                if eps is None or not 0 < eps < THRESHOLD:
                    continue
            else:
                eps = OPTIMIZER_EPS[cls]
            params = argument(call, 0, "params")
            if params is None:
                continue
            model = _half_model_in(params.value, site.frame, half_models) or _half_owner(
                params.value, site.frame, facts.tree, half_models)
            remote = None if model is not None else _half_param(params.value, site.frame, facts.tree, passed)
            if (model is None and remote is None) or _is_wrapped(site, wrapped):
                continue
            if remote is not None:
                message = (
                    f"`{cls}` with eps={eps:g} over the parameters of `{remote.param}`, a model another "
                    f"file casts to {remote.dtype} ({remote.cite}): eps rounds to 0 in float16, so a "
                    "parameter whose second moment underflows gets an inf update (one step turns it to "
                    "-inf); keep fp32 parameters with torch.autocast + GradScaler, or pass `fused=True`"
                )
                yield self.report(call, message)
                continue
            name, cast = model
            message = (
                f"`{cls}` with eps={eps:g} over the parameters of `{name}`, which the file casts "
                "to float16 (line {cast_line}): eps rounds to 0 in float16, so a parameter whose "
                "second moment underflows gets an inf update (one step turns it to -inf); keep "
                "fp32 parameters with torch.autocast + GradScaler, or pass `fused=True`"
            )
            yield self.report(call, message, related={"cast_line": cast})


def _rounding(value: float) -> str:
    if value <= ROUNDS_TO_ZERO:
        return "rounds to 0"
    return "rounds to the smallest float16 subnormal, 6e-8 (1 / 6e-8 is already inf)"


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 40 else code[:37] + "..."


def _model_key(expr: cst.BaseExpression, frame: Frame) -> Optional[Tuple]:
    """How a model is named across one function (a local) or one class (`self.model`)."""
    if isinstance(expr, cst.Name):
        scope = frame.function or frame.scope
        return ("local", id(scope), expr.value)
    if (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
        and frame.class_frame is not None
    ):
        return ("self", id(frame.class_frame), expr.attr.value)
    return None


def _half_models(facts) -> Dict[Tuple, cst.CSTNode]:
    """Model names the file casts to float16: `model.half()` / `model.cuda().half()` as a
    statement (modules cast in place), and `model = <...>.half()`."""
    casts = facts.fp16.model_casts
    found: Dict[Tuple, cst.CSTNode] = {}
    for site in facts.tree.calls:
        if casts.get(id(site.node)) != "float16":
            continue
        # in-place: the receiver chain's root through the module's moves (`model.cuda().half()`
        # -> model); not through a call's argument (`copy.deepcopy(model).half()` halves a copy)
        receiver = site.node.func.value  # type: ignore[union-attr]
        root = moved_root(receiver, site.frame)
        for candidate in (receiver, root):
            key = _model_key(candidate, site.frame)
            if key is not None:
                found.setdefault(key, site.node)
    for assign in facts.tree.assigns:
        value = moved_root(assign.value, assign.frame)  # `model = Net().half().to("cuda")`
        if isinstance(value, cst.Call) and casts.get(id(value)) == "float16":
            for target in assign.targets:
                key = _model_key(target, assign.frame)
                if key is not None:
                    found.setdefault(key, value)
    return found


def _half_model_in(params: cst.BaseExpression, frame: Frame, half_models):
    """(model code, cast node) when `params` holds `<half model>.parameters()`."""
    found: List = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in (
                "parameters", "named_parameters"
            ):
                key = _model_key(func.value, frame)
                if key is not None and key in half_models and not found:
                    name = ".".join(dotted_name(func.value) or ("model",))
                    found.append((name, half_models[key]))

    params.visit(Finder())
    return found[0] if found else None


def _half_owner(params: cst.BaseExpression, frame: Frame, tree, half_models):
    """(model code, cast node) when `params` holds a half model's parameters through the
    function's locals, or through its parameter that a call of the file passes a half model."""
    for owner in parameter_owners(params, frame, tree):
        key = _model_key(owner, frame)
        if key is not None and key in half_models:
            return ".".join(dotted_name(owner) or ("model",)), half_models[key]
        if isinstance(owner, cst.Name) and is_parameter(frame.function, owner.value):
            for arg, caller in call_arguments(frame.function, owner.value, tree):
                key = _model_key(arg, caller)
                if key is not None and key in half_models:
                    return owner.value, half_models[key]
    return None


def _half_param(params: cst.BaseExpression, frame: Frame, tree, passed):
    """The EntryHalfParam when `params` holds the parameters of a parameter of the module-level
    function that another file passes a float16 model."""
    function = frame.function
    if not passed or function is None or function.parent is not tree.module_frame:
        return None
    for owner in parameter_owners(params, frame, tree):
        if isinstance(owner, cst.Name) and is_parameter(function, owner.value):
            entry = passed.get((function.name, owner.value))
            if entry is not None and entry.dtype == "float16" and not _rebound(function, owner.value):
                return entry
    return None


def _rebound(function: Frame, name: str) -> bool:
    """Does the function bind its parameter `name` again (`model = copy.deepcopy(model)`)?"""
    for node in iter_nodes(function.node):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem,
                             cst.NamedExpr)):
            target = getattr(node, "target", None) or getattr(node, "asname", None)
            target = target.name if isinstance(target, cst.AsName) else target
            if any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(target)):
                return True
    return False


def _wrapped_names(facts) -> Set[str]:
    """Names passed to a master-weight wrapper (`FP16_Optimizer(opt)`, `amp.initialize(m, opt)`)."""
    names: Set[str] = set()
    for site in facts.tree.calls:
        if site.dotted and site.dotted[-1] in MASTER_WEIGHT_WRAPPERS:
            for arg in site.node.args:
                if isinstance(arg.value, cst.Name):
                    names.add(arg.value.value)
    return names


def _is_wrapped(site, wrapped: Set[str]) -> bool:
    """The optimizer is built inside a wrapper call, or assigned to a name one receives."""
    stmt = site.line_stmt
    if stmt is None:
        return False
    for small in stmt.body:
        value = getattr(small, "value", None)
        if isinstance(value, cst.Call) and value is not site.node:
            name = dotted_name(value.func)
            if name and name[-1] in MASTER_WEIGHT_WRAPPERS:
                return True
        if isinstance(small, cst.Assign) and small.value is site.node:
            for target in small.targets:
                if isinstance(target.target, cst.Name) and target.target.value in wrapped:
                    return True
    return False
