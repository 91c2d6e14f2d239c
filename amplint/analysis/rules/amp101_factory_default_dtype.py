"""AMP101 factory-default-dtype."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.buffer_writes import (
    CONCATS, WRITTEN_ARGUMENT, _assigned_name, hazardous_write, held_buffer, reference_kind, write_error,
    written_value,
)
from amplint.analysis.facts.defuse import explicit_cast, only_cast_reads
from amplint.analysis.facts.tree import CallSite, iter_nodes
from amplint.analysis.facts.float32_flow import stays_float32
from amplint.analysis.facts.half_evidence import half_origin, may_be_half
from amplint.analysis.facts.value_meets import (
    cast_where_made, cast_where_rebound, first_meeting, meets_only_float32, reads_meet_no_data,
)
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import (
    argument, code_of, has_float_data, is_float_literal, keyword, kwarg,
    method_call, region_note, with_args,
)

# factory -> the `Tensor.new_*` method that keeps the reference tensor's dtype and device
FACTORIES = {
    "torch.zeros": "new_zeros",
    "torch.ones": "new_ones",
    "torch.empty": "new_empty",
    "torch.full": "new_full",
    "torch.tensor": "new_tensor",
    "torch.rand": None,  # no new_rand: the fix passes dtype=r.dtype instead
    "torch.randn": None,
}
KEPT_KEYWORDS = {"device", "requires_grad", "size", "fill_value", "data"}


class FactoryDefaultDtype(Rule):
    """## What it does
    Finds `torch.zeros/ones/empty/full/rand/randn` and `torch.tensor(<float data>)` without
    `dtype=` in fp16 code: under an enabled autocast region, in a function called from one, in
    the methods of a module class the file turns `.half()`, or in an mmcv `@auto_fp16` body.

    ## Why is this bad?
    A factory without `dtype=` makes float32 whatever the surrounding precision is. Writing half
    values into that buffer raises
    `RuntimeError: Index put requires the source and destination dtypes match, got Float for the
    destination and Half for the source.`; mixed into arithmetic it silently upcasts the half
    tensors it meets to float32, costing memory and speed.

    Under autocast a float32 tensor is re-cast per op, so only a use that goes wrong with half
    values is reported: an advanced-index write (`buf[idx] = h` with a tensor or bool-mask
    index), `index_add_/index_copy_/index_put_/scatter*/masked_scatter_/put_`, `out=buf` of a
    matmul-family op (these raise), or `torch.cat/stack` of it with a half value (silently
    float32; the tensor itself and a value cast to its dtype, `label.to(buf)`, are not another
    value). The value must possibly be half, on the dtype fact's evidence
    (facts/half_evidence.py): the output of a module the file shows (`self.encoder`, a
    `torch.nn` module, an instance of a module class of the file, or (linting a project) a
    call the project resolves to the forward of project module classes: `train_step(model,
    ...)` called with a `TinyAttention()` built in another file), an op on the lower-precision
    list of the region's device (`torch.mv` is on CUDA's, not CPU's), a name assigned from
    one, or (linting a project) a parameter that a call of another file, under an enabled
    region, binds to such a value (GFPGAN's `scatter_restored_faces(output, ...)` called with
    its generator's output). A callee's name is no evidence: `h = model(x)` with `model` a
    parameter nothing binds is a value of unknown dtype, and its write is not reported.
    Python numbers (`buf[idx] = 1.0`), float32-by-construction values (`pe[:, 0::2] =
    torch.sin(position * div_term)`, `y = y.float()`) and basic-slice writes (`buf[i, :n] = h`,
    which converts the dtype) are not reported.

    Outside fp16 code only a write that raises is reported, and only of a value the dtype fact
    knows is float16 or bfloat16 exactly (Grounded-SAM's `canvas[keep] = low_res_masks[keep]`
    in a plain helper every call of which passes the half model's output): a write whose value
    may be half, or any other use, is fp32 code's business.

    In a module class made half, code that runs before the cast is not fp16 code: `__init__`,
    `reset_parameters`, `_init_weights`, and a method only they call (openai/CLIP's
    `self.attn_mask = self.build_attention_mask()` in `__init__`).

    Integer and bool factories (`dtype=torch.long`, `torch.full(s, 0)`), `*_like` and `new_*`
    calls, an explicit `dtype=`, and 0-d scalars (`torch.tensor(0.0)`, which never upcast a
    tensor they meet) are not reported. In fp16 code the value is followed too: a tensor with
    no elements (`torch.empty([0])` as a placeholder argument), one cast where it is made
    (`torch.zeros(s).float()`), and a local read only through explicit casts to float32, an
    integer or bool (`filler.float()`, `.long()`, `.to(torch.float32)`), rebound to a cast of
    itself before anything else reads it (meta-llama's `mask = torch.full(...)` then
    `mask = torch.triu(mask, diagonal=1).type_as(h)`: through dtype-keeping steps to
    `.type_as(x)`, `.to(x.dtype)`, `.to(dtype=...)` or `.half()`), never read, or met only
    by values known to be float32 (`torch.cat([key_padding_mask.float(), filler])`: the result
    is float32 whatever the factory makes) do not meet half data as float32 and are not
    reported.

    The finding names the half value and where: under autocast, the value written or
    concatenated (`line 6 writes `h` (half: the output of `model` at line 4) into it`); in fp16
    code, the first value the new tensor meets in arithmetic, an update, an index write or a
    cat/stack, preferring one shown to be half (`line 9 mixes it with `h` (half: the output of
    `self.proj` at line 8)`).

    ## Example
    ```python
    with torch.autocast("cuda"):
        h = self.encoder(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda"):
        h = self.encoder(x)
        out = h.new_zeros(n, h.shape[-1])
        out[idx] = h
    ```

    ## Fix safety
    When the file shows the tensor written into the buffer (`buf[i] = h`), the fix takes its
    dtype: `torch.zeros(s, device=h.device)` -> `h.new_zeros(s)`, or `dtype=h.dtype` added when
    the device comes from elsewhere (the device is kept). **Safe**: in an fp32 run `h` is
    float32, since writing it into the float32 buffer works. Otherwise the fix takes the
    reference tensor from the `device=r.device` argument and rewrites
    `torch.zeros(s, device=r.device)` to `r.new_zeros(s)` (`new_ones`, `new_empty`,
    `new_full(s, v)`, `new_tensor(data)`; `rand`/`randn` get `dtype=r.dtype`), keeping
    `requires_grad=`. In fp32 `r` is float32, so the result is the same tensor as before.
    It is **safe** when `r` is known to be a floating tensor of the fp16 code: the value written
    into the new buffer, a module's output, or (in a half module, not under autocast, where
    parameters stay float32 and the fix would change nothing) a parameter. It is **unsafe**
    otherwise, and there is no fix at all when `r` looks integer or bool (`labels`, `targets`,
    `*_ids`, `index`, `mask`, `tokens`, `lengths`, ...): `labels.new_zeros(...)` would be int64
    and the loss then raises "result type Float can't be cast to the desired output type Long".
    Without a `device=r.device` argument
    there is no reference tensor and no fix: pass `dtype=` yourself.
    """

    code = "AMP101"
    name = "factory-default-dtype"
    severity = Severity.ERROR
    fix_safety = "safe / unsafe"
    triggers = ("autocast", "optim_context", "auto_fp16", ".half(", "float16", "torch.half")

    flag = [
        Flag(
            "import torch\n"
            "def step(x, idx, n):\n"
            "    model = torch.nn.Linear(8, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x)\n"
            "        out = torch.zeros(n, h.shape[-1], device=h.device)\n"
            "        out[idx] = h\n"
            "        return out\n",
            fixed="import torch\n"
            "def step(x, idx, n):\n"
            "    model = torch.nn.Linear(8, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x)\n"
            "        out = h.new_zeros(n, h.shape[-1])\n"
            "        out[idx] = h\n"
            "        return out\n",
        ),
        Flag(  # a module turned half: its forward is fp16 code; r's dtype unknown -> unsafe
            "import torch\n"
            "class Net(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        mask = torch.ones(x.shape[0], device=x.device, requires_grad=False)\n"
            "        return x * mask\n"
            "net = Net().cuda().half()\n",
            fixed="import torch\n"
            "class Net(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        mask = x.new_ones(x.shape[0], requires_grad=False)\n"
            "        return x * mask\n"
            "net = Net().cuda().half()\n",
            unsafe=True,
        ),
        Flag(  # in a half module a parameter is a floating reference: safe
            "import torch\n"
            "class Head(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        noise = torch.randn(x.shape, device=self.proj.weight.device)\n"
            "        return self.proj(x + noise)\n"
            "head = Head().half()\n",
            fixed="import torch\n"
            "class Head(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        noise = torch.randn(x.shape, device=self.proj.weight.device, dtype=self.proj.weight.dtype)\n"
            "        return self.proj(x + noise)\n"
            "head = Head().half()\n",
        ),
        Flag(  # written with index_add_; the device comes from the int index: dtype= added
            "import torch\n"
            "def pool(x, segment_ids, n):\n"
            "    encoder = torch.nn.Linear(8, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        h = encoder(x)\n"
            "        sums = torch.zeros(n, h.shape[-1], device=segment_ids.device)\n"
            "        sums.index_add_(0, segment_ids, h)\n"
            "        return sums\n",
            fixed="import torch\n"
            "def pool(x, segment_ids, n):\n"
            "    encoder = torch.nn.Linear(8, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        h = encoder(x)\n"
            "        sums = torch.zeros(n, h.shape[-1], device=segment_ids.device, dtype=h.dtype)\n"
            "        sums.index_add_(0, segment_ids, h)\n"
            "        return sums\n",
        ),
        Flag(  # the written value is a matmul result through a dtype-keeping view (dtype fact)
            "import torch\n"
            "def scores(x, w, idx, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        h = (x @ w).view(-1, 4)\n"
            "        buf = torch.zeros(n, 4, device=x.device)\n"
            "        buf[idx] = h\n"
            "        return buf\n",
            fixed="import torch\n"
            "def scores(x, w, idx, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        h = (x @ w).view(-1, 4)\n"
            "        buf = torch.zeros(n, 4, device=x.device, dtype=h.dtype)\n"
            "        buf[idx] = h\n"
            "        return buf\n",
        ),
        Flag(  # a module's output through a shape op (`.squeeze`) keeps the region's dtype
            "import torch\n"
            "class Scorer(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.proj = torch.nn.Linear(8, 4)\n"
            "    def forward(self, x):\n"
            "        return self.proj(x)\n"
            "def pick(x, keep):\n"
            "    model = Scorer()\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x).squeeze(-1)\n"
            "        picked = torch.zeros(h.shape, device=h.device)\n"
            "        picked[keep] = h[keep]\n"
            "        return picked\n",
            fixed="import torch\n"
            "class Scorer(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.proj = torch.nn.Linear(8, 4)\n"
            "    def forward(self, x):\n"
            "        return self.proj(x)\n"
            "def pick(x, keep):\n"
            "    model = Scorer()\n"
            "    with torch.autocast('cuda'):\n"
            "        h = model(x).squeeze(-1)\n"
            "        picked = h.new_zeros(h.shape)\n"
            "        picked[keep] = h[keep]\n"
            "        return picked\n",
        ),
        Flag(  # a mask-indexed write of a matmul result: the device's tensor is the reference
            "import torch\n"
            "def gather(x, w, keep, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        out = torch.zeros(n, 4, device=x.device)\n"
            "        out[keep] = torch.matmul(x[keep], w)\n"
            "        return out\n",
            fixed="import torch\n"
            "def gather(x, w, keep, n):\n"
            "    with torch.autocast('cuda'):\n"
            "        out = x.new_zeros(n, 4)\n"
            "        out[keep] = torch.matmul(x[keep], w)\n"
            "        return out\n",
            unsafe=True,
        ),
        Flag(  # read through `.float()` once, and as it is once: still meets half data
            "import torch\n"
            "class Pad(torch.nn.Module):\n"
            "    def forward(self, x, n):\n"
            "        filler = torch.zeros(n, x.shape[-1], device=x.device)\n"
            "        total = filler.float().sum()\n"
            "        return torch.cat([x, filler]), total\n"
            "pad = Pad().half()\n",
            fixed="import torch\n"
            "class Pad(torch.nn.Module):\n"
            "    def forward(self, x, n):\n"
            "        filler = x.new_zeros(n, x.shape[-1])\n"
            "        total = filler.float().sum()\n"
            "        return torch.cat([x, filler]), total\n"
            "pad = Pad().half()\n",
            unsafe=True,
        ),
        Flag(  # an integer-looking reference is never the new_* receiver: reported, no fix
            "import torch\n"
            "class Head(torch.nn.Module):\n"
            "    def forward(self, x, labels):\n"
            "        weight = torch.ones(labels.shape[0], device=labels.device)\n"
            "        return self.proj(x) * weight[:, None]\n"
            "head = Head().cuda().half()\n",
        ),
        Flag(  # under autocast a parameter stays float32: reported, no fix
            "import torch\n"
            "from torch.cuda.amp import autocast as ac\n"
            "class Head(torch.nn.Module):\n"
            "    @ac()\n"
            "    def forward(self, x, keep):\n"
            "        table = torch.empty(x.shape[0], 8, device=self.proj.weight.device)\n"
            "        table[keep] = self.proj(x)\n"
            "        return table\n",
        ),
        Flag(  # concatenated with a value of unknown dtype: reported (twin of the clean one below)
            "import torch\n"
            "class Attn(torch.nn.Module):\n"
            "    def forward(self, query, key_padding_mask, bsz, n):\n"
            "        filler = torch.zeros(bsz, n, device=query.device)\n"
            "        return torch.cat([key_padding_mask, filler], dim=1)\n"
            "attn = Attn().half()\n",
            fixed="import torch\n"
            "class Attn(torch.nn.Module):\n"
            "    def forward(self, query, key_padding_mask, bsz, n):\n"
            "        filler = query.new_zeros(bsz, n)\n"
            "        return torch.cat([key_padding_mask, filler], dim=1)\n"
            "attn = Attn().half()\n",
            unsafe=True,
        ),
        Flag(  # rebound through a dtype-keeping op but not cast: the float32 mask meets `h`
            "import torch\n"
            "class Transformer(torch.nn.Module):\n"
            "    def forward(self, tokens, h):\n"
            "        seqlen = tokens.shape[1]\n"
            "        mask = torch.full((seqlen, seqlen), float('-inf'), device=tokens.device)\n"
            "        mask = torch.triu(mask, diagonal=1)\n"
            "        return h + mask\n"
            "model = Transformer().half()\n",
        ),
        Flag(  # rebound to `.float()`: still float32, so it still upcasts `h`
            "import torch\n"
            "class Transformer(torch.nn.Module):\n"
            "    def forward(self, tokens, h):\n"
            "        seqlen = tokens.shape[1]\n"
            "        mask = torch.full((seqlen, seqlen), float('-inf'), device=tokens.device)\n"
            "        mask = torch.triu(mask, diagonal=1).float()\n"
            "        return h + mask\n"
            "model = Transformer().half()\n",
        ),
        Flag(  # the same builder called again from forward: it runs after the cast
            "import torch\nfrom torch import nn\n"
            "class TextTransformer(nn.Module):\n"
            "    def __init__(self, n):\n"
            "        super().__init__()\n"
            "        self.n = n\n"
            "        self.attn_mask = self.build_attention_mask()\n"
            "    def build_attention_mask(self):\n"
            "        mask = torch.empty(self.n, self.n)\n"
            "        mask.fill_(float('-inf'))\n"
            "        return mask\n"
            "    def forward(self, x):\n"
            "        return x + self.build_attention_mask()\n"
            "model = TextTransformer(8).half()\n",
        ),
        Flag(  # a Linear moved to the GPU when bound: under float16 autocast it outputs float16,
            # written through a list of row indices into a float32 buffer
            "import torch\nimport torch.nn as nn\n"
            "def route(x, langs):\n"
            "    router = nn.Linear(16, 16).cuda()\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        rows = [i for i, lang in enumerate(langs) if lang == 'en']\n"
            "        out = torch.zeros(x.shape[0], 16, device=x.device)\n"
            "        out[rows] = router(x[rows])\n"
            "        return out\n",
        ),
    ]
    clean = [
        # a method that only construction calls runs before the cast, like `__init__`
        # (openai/CLIP's `attn_mask=self.build_attention_mask()`)
        "import torch\nfrom torch import nn\n"
        "class TextTransformer(nn.Module):\n"
        "    def __init__(self, n):\n"
        "        super().__init__()\n"
        "        self.n = n\n"
        "        self.attn_mask = self.build_attention_mask()\n"
        "    def build_attention_mask(self):\n"
        "        mask = torch.empty(self.n, self.n)\n"
        "        mask.fill_(float('-inf'))\n"
        "        mask.triu_(1)\n"
        "        return mask\n"
        "    def forward(self, x):\n"
        "        return x + self.attn_mask.to(dtype=x.dtype, device=x.device)\n"
        "model = TextTransformer(8).half()\n",
        # meta-llama's mask: rebound to a cast of itself (through `torch.triu`, which keeps
        # the dtype) before anything reads it, so the float32 value meets nothing
        "import torch\n"
        "class Transformer(torch.nn.Module):\n"
        "    def forward(self, tokens, h):\n"
        "        seqlen = tokens.shape[1]\n"
        "        mask = None\n"
        "        if seqlen > 1:\n"
        "            mask = torch.full((seqlen, seqlen), float('-inf'), device=tokens.device)\n"
        "            mask = torch.triu(mask, diagonal=1).type_as(h)\n"
        "        return h + mask\n"
        "model = Transformer().half()\n",
        "import torch\n"
        "class Transformer(torch.nn.Module):\n"
        "    def forward(self, tokens, h):\n"
        "        n = tokens.shape[1]\n"
        "        mask = torch.full((n, n), float('-inf'), device=tokens.device)\n"
        "        mask = mask.masked_fill(tokens[0] > 0, 0.0)[None].to(h.dtype)\n"
        "        bias = torch.zeros(n, device=tokens.device)\n"
        "        bias = bias.half()\n"
        "        return h + mask + bias\n"
        "model = Transformer().half()\n",
        # the module's output is cast back to float32 before it is written: no dtype mismatch
        "import torch\n"
        "def pick(model, x, keep):\n"
        "    with torch.autocast('cuda'):\n"
        "        h = model(x).squeeze(-1).float()\n"
        "        picked = torch.zeros(h.shape, device=h.device)\n"
        "        picked[keep] = h[keep]\n"
        "        return picked\n",
        # under autocast, float32 noise and masks are re-cast per op (Lightning's GAN example)
        "import torch\n"
        "class GAN(LightningModule):\n"
        "    def training_step(self, batch):\n"
        "        with torch.autocast('cuda'):\n"
        "            z = torch.randn(batch.shape[0], self.latent_dim, device=self.device)\n"
        "            fake = self.generator(z)\n"
        "            valid = torch.ones(batch.size(0), 1, device=self.device)\n"
        "            return self.adversarial_loss(self.discriminator(fake), valid)\n",
        "import torch\n"
        "def helper(h):\n"
        "    return h + torch.tensor([0.5, 1.5]).cuda()\n"
        "def train(model, x):\n"
        "    with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "        return helper(model(x))\n",
        # integer / bool factories, explicit dtype, *_like, new_*
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    idx = torch.zeros(4, dtype=torch.long, device='cuda')\n"
        "    pos = torch.arange(10, device='cuda')\n"
        "    m = torch.ones(3, 3, dtype=torch.bool)\n"
        "    z = torch.zeros_like(x)\n"
        "    y = x.new_zeros(3)\n"
        "    c = torch.full((2,), 0)\n"
        "    d = torch.tensor([1, 2, 3])\n"
        "    s = torch.tensor(0.0, device='cuda')\n",
        # no autocast anywhere: plain fp32 code
        "import torch\n"
        "def forward(x):\n"
        "    return x + torch.zeros(x.shape, device=x.device)\n",
        # an fp32 island under enabled=False
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        acc = torch.zeros(3, device='cuda')\n",
        # after the autocast block
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    out = model(x)\n"
        "total = torch.zeros(1, device=out.device)\n",
        # parameters and buffers built in __init__ are converted by .half() afterwards
        "import torch\nfrom torch import nn\n"
        "class RMSNorm(nn.Module):\n"
        "    def __init__(self, n):\n"
        "        super().__init__()\n"
        "        self.weight = nn.Parameter(torch.ones(n))\n"
        "        self.register_buffer('scale', torch.tensor([1.0]))\n"
        "    def forward(self, x):\n"
        "        return x * self.weight\n"
        "norm = RMSNorm(8).half()\n",
        # a name that shadows torch is not torch
        "import torch\n"
        "def f(torch):\n"
        "    with autocast():\n"
        "        return torch.zeros(3)\n",
        # writes that cannot raise: a Python number, basic slicing (converts the dtype), a
        # float32-by-construction value (issue 15: fairseq, Lightning's positional encoding)
        "import torch\n"
        "def make_targets(model, x, idx, n):\n"
        "    with torch.autocast('cuda'):\n"
        "        h = model(x)\n"
        "        buf = torch.zeros(n, h.shape[-1], device=h.device)\n"
        "        buf[idx] = 1.0\n"
        "        pad = torch.zeros(n, h.shape[-1], device=h.device)\n"
        "        for i in range(n):\n"
        "            pad[i, :4] = h[i]\n"
        "        return buf, pad\n",
        "import math\nimport torch\n"
        "def positional(d_model, max_len):\n"
        "    pe = torch.zeros(max_len, d_model)\n"
        "    position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)\n"
        "    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))\n"
        "    pe[:, 0::2] = torch.sin(position * div_term)\n"
        "    pe[:, 1::2] = torch.cos(position * div_term)\n"
        "    return pe\n"
        "def run(model, x):\n"
        "    with torch.autocast('cuda'):\n"
        "        return model(x) + positional(16, 128)\n",
        # a value of unknown dtype (an input): not known to be half
        "import torch\n"
        "def gather(x, idx, n):\n"
        "    with torch.autocast('cuda'):\n"
        "        out = torch.zeros(n, 4, device=x.device)\n"
        "        out[idx] = torch.relu(x)\n"
        "        return out\n",
        # **kwargs may carry dtype
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    buf = torch.zeros(3, **factory_kwargs)\n",
        # in a half module, values that never meet half data as float32 (issue 28: fairseq's
        # multihead_attention.py): read only through `.float()`, an empty placeholder argument,
        # cast where it is made, never read
        "import torch\nimport torch.nn.functional as F\n"
        "class MultiheadAttention(torch.nn.Module):\n"
        "    def forward(self, query, key_padding_mask, bsz, src_len):\n"
        "        filler = torch.zeros((bsz, src_len - key_padding_mask.size(1)),\n"
        "                             device=key_padding_mask.device)\n"
        "        mask = torch.cat([key_padding_mask.float(), filler.float()], dim=1)\n"
        "        steps = torch.ones(bsz, device=query.device).long()\n"
        "        spare = torch.zeros(bsz, device=query.device)\n"
        "        if bsz > 1:\n"
        "            filler = torch.zeros(bsz, 1, device=query.device)\n"
        "            mask = torch.cat([filler.float(), mask], dim=1)\n"
        "        return F.multi_head_attention_forward(query, torch.empty([0]), mask, steps)\n"
        "attn = MultiheadAttention().half()\n",
        # met only by a value cast to float32: the result is float32 whatever filler is
        "import torch\n"
        "class Attn(torch.nn.Module):\n"
        "    def forward(self, query, key_padding_mask, bsz, n):\n"
        "        filler = torch.zeros(bsz, n, device=query.device)\n"
        "        return torch.cat([key_padding_mask.float(), filler], dim=1)\n"
        "attn = Attn().half()\n",
        # the same routing outside autocast: the moved Linear outputs float32
        "import torch\nimport torch.nn as nn\n"
        "def route(x, langs, device):\n"
        "    router = nn.Linear(16, 16).to(device=device)\n"
        "    rows = [i for i, lang in enumerate(langs) if lang == 'en']\n"
        "    out = torch.zeros(x.shape[0], 16, device=x.device)\n"
        "    out[rows] = router(x[rows])\n"
        "    return out\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        writers = None  # functions with a write that can raise: read once, when asked
        for qualified, site in facts.calls_to(*FACTORIES):
            call = site.node
            if keyword(call, "dtype") or keyword(call, "out") or _may_pass_dtype(qualified, call):
                continue
            if not self._is_float_factory(qualified, call):
                continue
            region = facts.active_region(site.frame)
            if region is not None:
                # Under autocast a float32 tensor is re-cast per op: only writing half values
                # into it goes wrong (noise, masks and accumulators are fine).
                write = hazardous_write(facts, site)
                if write is None or cast_where_rebound(facts, site, _assigned_name(site)):
                    continue  # OpenNMT's `pad = torch.zeros(...)`, then `pad = pad.type_as(x)`
                note, related = region_note(region)
                related = {**related, "write_line": write[0]}
                value, shown, why = _half_value(ctx, write, site)
                if why is not None and why[1] is not shown:
                    related["half_line"] = why[1]
                if write[1] == "raise":
                    message = (
                        f"`{qualified}` without `dtype=` creates float32 under autocast {note}, "
                        f"and line {{write_line}} writes {value}{_why(why, shown)} into it: that raises "
                        f"'{write_error(write[0], facts.dtypes.region_dtype(region))}'"
                    )
                else:
                    message = (
                        f"`{qualified}` without `dtype=` creates float32 under autocast {note}, "
                        f"and line {{write_line}} concatenates it with {value}{_why(why, shown)}: the "
                        "result is silently float32"
                    )
            elif facts.fp16.is_fp16(site.frame) and not _built_before_the_cast(site):
                if _never_half_data(ctx, qualified, site):
                    continue
                note, related = facts.fp16.note(site.frame)
                meeting = first_meeting(facts, site, _assigned_name(site))
                if meeting is None:
                    message = (
                        f"`{qualified}` without `dtype=` creates float32 in fp16 code {note}: it "
                        "silently upcasts the half tensors it meets, and writing half values "
                        "into it raises 'Index put requires the source and destination dtypes "
                        "match'"
                    )
                else:
                    if not related:  # the note was not meant to be formatted: keep its braces
                        note = note.replace("{", "{{").replace("}", "}}")
                    related = {**related, "meet_line": meeting.node}
                    if meeting.origin is not None and meeting.origin[1] is not meeting.other:
                        related["half_line"] = meeting.origin[1]
                    other = _code(ctx, meeting.other)
                    verb = meeting.verb.format(value=other) if "{value}" in meeting.verb \
                        else f"{meeting.verb} {other}"
                    message = (
                        f"`{qualified}` without `dtype=` creates float32 in fp16 code {note}, and "
                        f"line {{meet_line}} {verb}{_why(meeting.origin, meeting.other)}: the half tensors it "
                        "meets are silently upcast to float32, and writing half values into it "
                        "raises 'Index put requires the source and destination dtypes match'"
                    )
            else:
                # outside fp16 code: only a write of a value the dtype fact knows is half, which
                # raises wherever it runs (Grounded-SAM's `canvas[keep] = low_res_masks[keep]`
                # in a plain helper given the half model's output)
                if writers is None:
                    writers = _writing_functions(facts)
                if id(site.frame.function) not in writers:
                    continue
                write = hazardous_write(facts, site)
                half = facts.dtypes.exact(write[2]) if write is not None and write[2] is not None else None
                if half not in ("float16", "bfloat16") or write[1] != "raise" \
                        or facts.dtypes.exact(call) != "float32" \
                        or cast_where_rebound(facts, site, _assigned_name(site)):
                    continue
                related = {"write_line": write[0]}
                message = (
                    f"`{qualified}` without `dtype=` creates float32, and line {{write_line}} writes "
                    f"{_code(ctx, write[2])} ({half}) into it: that raises "
                    f"'{write_error(write[0], half)}'"
                )
            fix = self._fix(ctx, qualified, site, in_region=region is not None)
            yield self.report(call, message, fix=fix, related=related)

    @staticmethod
    def _is_float_factory(qualified: str, call: cst.Call) -> bool:
        if qualified == "torch.tensor":
            data = argument(call, 0, "data")
            return data is not None and has_float_data(data.value)
        if qualified == "torch.full":
            fill = argument(call, 1, "fill_value")
            return fill is not None and is_float_literal(fill.value)
        return True

    def _fix(self, ctx, qualified: str, site: CallSite, in_region: bool):
        call = site.node
        if _assigned_name(site) is None and held_buffer(ctx.facts, site) is not None:
            return None  # `self.cache = torch.zeros(...)`: kept across calls, no one value's dtype
        if any(a.keyword is not None and a.keyword.value not in KEPT_KEYWORDS for a in call.args):
            return None
        device = keyword(call, "device")
        device_ref = None
        if device is not None and isinstance(device.value, cst.Attribute) and device.value.attr.value == "device":
            device_ref = device.value.value
        method = FACTORIES[qualified]
        written = written_value(ctx.facts, site)
        if written is not None:
            # The value written into the buffer is the dtype it needs; in an fp32 run that
            # value is float32 (writing it into a float32 buffer works), so nothing changes.
            same_device = device_ref is not None and code_of(ctx.module, device_ref) == code_of(ctx.module, written)
            if method is not None and same_device:
                return self._new_method_fix(ctx, call, device, written, method, Applicability.SAFE)
            new_call = with_args(call, list(call.args) + [kwarg("dtype", cst.Attribute(
                value=written, attr=cst.Name("dtype")))])
            return self.fix(
                Applicability.SAFE, f"Pass `dtype={code_of(ctx.module, written)}.dtype`",
                {call: new_call},
            )
        if device_ref is None:
            return None
        kind = reference_kind(ctx.facts, site, device_ref)
        if kind == "parameter" and in_region:
            return None  # under autocast parameters stay float32: new_* of one fixes nothing
        if kind == "unknown" and _integer_looking(device_ref):
            return None  # labels.new_zeros(...) would be int64: the loss then raises
        applicability = Applicability.SAFE if kind != "unknown" else Applicability.UNSAFE
        if method is None:
            new_call = with_args(call, list(call.args) + [kwarg("dtype", cst.Attribute(
                value=device_ref, attr=cst.Name("dtype")))])
            return self.fix(
                applicability, f"Pass `dtype={code_of(ctx.module, device_ref)}.dtype`",
                {call: new_call},
            )
        return self._new_method_fix(ctx, call, device, device_ref, method, applicability)

    def _new_method_fix(self, ctx, call, device, reference, method, applicability):
        kept = [a for a in call.args if a is not device]
        new_call = with_args(method_call(reference, method), kept, original=call)
        return self.fix(
            applicability, f"Use `{code_of(ctx.module, reference)}.{method}(...)`", {call: new_call}
        )


def _code(ctx, expr: cst.BaseExpression) -> str:
    """`expr` as the message shows it (shortened; braces doubled for `str.format`)."""
    text = " ".join(ctx.module.code_for_node(expr).split())
    if len(text) > 40:
        text = text[:37] + "..."
    return "`" + text.replace("{", "{{").replace("}", "}}") + "`"


def _why(origin, value) -> str:
    """` (half: the output of `model` at line 4)`; no line when the value itself shows it."""
    if origin is None:
        return ""
    text = origin[0].replace("{", "{{").replace("}", "}}")
    if origin[1] is not value:
        return f" (half: {text} at line {{half_line}})"
    return f" ({text.rsplit(' is ', 1)[1]})" if text.startswith("`") else f" (half: {text})"


def _half_value(ctx, write, site: CallSite):
    """(the half value a hazardous write puts into the buffer, as shown, and why it is half)."""
    facts = ctx.facts
    node, kind, value = write
    if value is None and isinstance(node, cst.Call):
        if kind == "upcast" or facts.resolve(node.func, site.frame) in CONCATS:
            items = [e.value for e in node.args[0].value.elements]  # type: ignore[attr-defined]
        else:  # `out=buf` of a matmul: its operands
            items = [a.value for a in node.args if a.keyword is None]
        value = next((i for i in items if may_be_half(facts, i, site.frame)), None)
    if value is None:
        return "half values", None, None
    return _code(ctx, value), value, half_origin(facts, value, site.frame)


def _writing_functions(facts) -> set:
    """ids of the functions (None: the module) holding a subscript store, an index_put-family
    call or an `out=`: where a write into a new buffer can raise."""
    found = set()
    for assign in facts.tree.assigns:
        if any(isinstance(target, cst.Subscript) for target in assign.targets):
            found.add(id(assign.frame.function))
    for _qualified, other in facts.qualified_calls:
        func = other.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in WRITTEN_ARGUMENT or keyword(other.node, "out"):
            found.add(id(other.frame.function))
    return found


def _may_pass_dtype(qualified: str, call: cst.Call) -> bool:
    """`**kwargs` may pass `dtype=`; `*args` only where a positional decides the dtype
    (`torch.tensor`'s data, `torch.full`'s fill value): the other factories take sizes only
    positionally (`torch.zeros(*x.shape[:-1], n)`, peft's LoRA buffer), `dtype` by keyword."""
    return any(a.star == "**" or (a.star and qualified in ("torch.tensor", "torch.full"))
               for a in call.args)


def _never_half_data(ctx, qualified: str, site: CallSite) -> bool:
    """The factory's value never meets half data as float32: it is empty (`torch.empty([0])`,
    a placeholder argument), cast explicitly where it is made (`torch.zeros(s).float()`,
    `torch.randn(s).to(x.dtype)`), compared (`torch.rand(1) > p`: a bool), or
    bound to a local whose every read is such a cast or which is never read (fairseq's
    `filler = torch.zeros(...)`, used only as `filler.float()`)."""
    call = site.node
    sizes = [a.value for a in call.args if a.keyword is None and not a.star]
    if qualified == "torch.full":
        sizes = sizes[:1]
    if qualified != "torch.tensor" and any(_zero_size(size) for size in sizes):
        return True
    if cast_where_made(ctx.facts, site) or meets_only_float32(ctx.facts, site, None) \
            or stays_float32(ctx.facts, site):
        return True
    stmt = site.line_stmt
    if stmt is None:
        return False
    for node in iter_nodes(stmt):
        if isinstance(node, cst.Call) and explicit_cast(node) and node.func.value is call:
            return True
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return False
    assign = stmt.body[0]
    if assign.value is not call or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    function = site.frame.function
    return only_cast_reads(ctx.module, target.value, function.node if function else None) \
        or meets_only_float32(ctx.facts, site, target.value) \
        or cast_where_rebound(ctx.facts, site, target.value) \
        or reads_meet_no_data(ctx.facts, site, target.value)


def _zero_size(size: cst.BaseExpression) -> bool:
    """`0`, `[0]`, `(n, 0)`: a shape with a literal zero makes a tensor with no elements."""
    if isinstance(size, (cst.List, cst.Tuple)):
        return any(_zero_size(e.value) for e in size.elements)
    return isinstance(size, cst.Integer) and size.evaluated_value == 0


CONSTRUCTION = ("__init__", "reset_parameters", "_init_weights")


def _built_before_the_cast(site: CallSite) -> bool:
    """`__init__` runs before `Net().half()` converts parameters and buffers: a factory there
    (`nn.Parameter(torch.ones(n))`, `register_buffer(...)`) ends up half like the rest. So does
    a method of the class that only construction calls (openai/CLIP's
    `attn_mask=self.build_attention_mask()` in `__init__`)."""
    function = site.frame.function
    if function is None:
        return False
    if function.name in CONSTRUCTION:
        return True
    owner = function.class_frame
    return owner is not None and _called_only_at_construction(site.frame, owner, function.name)


def _called_only_at_construction(frame, owner, name: str) -> bool:
    """Whether every mention of the name in the file is the method's `def` or a call
    `self.name(...)` in a construction method of `owner` (at least one). A method mentioned
    anywhere else (another method, another class, a bare `self.name` passed on) may run after
    the cast."""
    method = owner.functions.get(name)
    if method is None:
        return False
    calls = 0
    for constructor in [f for n, f in owner.functions.items() if n in CONSTRUCTION]:
        for node in iter_nodes(constructor.node):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == name and isinstance(node.func.value, cst.Name) \
                    and node.func.value.value == "self":
                calls += 1
    return calls > 0 and _name_counts(frame)[name] == 1 + calls


def _name_counts(frame) -> Counter:
    """How often each name is written in the file (every `Name` node, attributes' included),
    counted once per file."""
    module = frame
    while module.parent is not None:
        module = module.parent
    counts = module.__dict__.get("_name_counts")
    if counts is None:
        counts = module.__dict__["_name_counts"] = Counter(
            node.value for node in iter_nodes(module.node) if isinstance(node, cst.Name))
    return counts


# a reference tensor with one of these names is likely integer or bool: never a `new_*` receiver
INTEGER_LOOKING = (
    "label", "target", "id", "idx", "index", "indices", "mask", "token", "length", "len",
    "position", "pos", "count", "step", "segment", "choice", "class", "tgt",
)


def _integer_looking(expr: cst.BaseExpression) -> bool:
    name = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", "")
    if not isinstance(name, str):
        return False
    words = name.lower().replace("-", "_").split("_")
    return any(w.rstrip("s") in INTEGER_LOOKING or w in INTEGER_LOOKING for w in words)
