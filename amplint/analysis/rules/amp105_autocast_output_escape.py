"""AMP105 autocast-output-escape."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic
from amplint.analysis.diagnostics import Severity
from amplint.analysis.facts.escape import Entry
from amplint.analysis.facts.returned_escapes import EntryParamEscaped, EntryReturnsEscaped
from amplint.analysis.facts.tree import Frame
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, method_call

# torch function -> positions of the two tensors whose dtypes must match
PAIR_FUNCTIONS = {
    "torch.mm": (0, 1), "torch.matmul": (0, 1), "torch.bmm": (0, 1),
    "torch.nn.functional.linear": (0, 1), "torch.nn.functional.conv1d": (0, 1),
    "torch.nn.functional.conv2d": (0, 1), "torch.nn.functional.conv3d": (0, 1),
    "torch.conv1d": (0, 1), "torch.conv2d": (0, 1), "torch.conv3d": (0, 1),
}
PAIR_METHODS = {"mm", "matmul", "bmm"}
# buffer method -> (position, keyword) of the written source
WRITE_METHODS = {
    "index_add_": (2, "source"), "index_copy_": (2, "source"), "index_put_": (1, "values"),
    "scatter_": (2, "src"), "scatter_add_": (2, "src"),
}

# what torch 2.13 raises for each write method (an indexed write and index_put_ say "Index put")
WRITE_ERRORS = {
    "index_add_": "index_add_(): self (Float) and source (...) must have the same scalar type",
    "index_copy_": "index_copy_(): self and source expected to have the same dtype",
    "scatter_": "scatter(): Expected self.dtype to be equal to src.dtype",
    "scatter_add_": "scatter(): Expected self.dtype to be equal to src.dtype",
}


class AutocastOutputEscape(Rule):
    """## What it does
    Finds a tensor produced inside an autocast region by an op that autocast runs in float16
    (or bfloat16) — a `@`/`torch.mm/matmul/bmm/addmm/baddbmm`/`F.linear`/`conv*` result, the
    output of a `torch.nn.Linear`/`Conv*`/`LSTM`-like module or of a module class of the file,
    or a value taken from one by `.view`, `.detach`, `[...]`, `F.relu` and the like — that is
    used **after the region ends**, outside any other region, in an op that needs equal dtypes
    together with a float32 tensor: `@`/`torch.mm/matmul/bmm`/`F.linear`/`conv*` against a
    float32 tensor (a float factory without `dtype=`, `.float()`, a float32 parameter or
    buffer, the weight of a float32 module), a float32 `torch.nn.Linear`-like module called on
    it, or an advanced-index write (`buf[idx] = v`, `index_add_/index_copy_/index_put_/
    scatter_`) into a float32 buffer.

    Across files (a project linted as a whole), the value is followed where the class flow
    resolves the call to one function: returned out of a region by a function or method of
    another file (reported at the caller's use), computed under a region by a module class of
    another file, or passed after the region into a function, method or module of another file
    (reported at that file's use of the parameter, citing the call).

    ## Why is this bad?
    Autocast casts the inputs of the ops it knows only while the region is active. The
    region's outputs stay half after the `with` ends, and meeting float32 weights there raises
    `RuntimeError: expected mat1 and mat2 to have the same dtype` (`mat1 and mat2 must have the
    same dtype`, `expected scalar type Float but found Half`), or `Index put requires the source
    and destination dtypes match` for a memory bank. The autocast docstring says it: cast the
    tensors produced in the region back to float32 after leaving it. The common shape:
    features computed under autocast in the training step, then a metric head or a memory bank
    outside the `with`.

    Not reported: a value that only goes into losses or ops that promote (`+`, `*`, `sum`,
    `F.cross_entropy`), one cast with `.float()` / `.to(torch.float32)` (or rebound) before the
    use, uses inside another autocast region, regions that are disabled or float32, basic
    slicing (`buf[:n] = v` converts), operands whose float32-ness the file does not show (a
    parameter of unknown dtype, a module passed in), and module classes the file turns half.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        feats = self.backbone(images)
    self.bank[idx] = feats            # float32 buffer
    logits = self.head(feats)         # float32 nn.Linear outside autocast
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        feats = self.backbone(images)
    self.bank[idx] = feats.float()
    logits = self.head(feats.float())
    ```

    ## Fix safety
    No safe fix: whether the value should go on in float32, or the consumer should run under
    autocast too, is the author's call. With `--unsafe-fixes` the use becomes `v.float()`, which
    changes nothing in a float32 run (`.float()` of a float32 tensor is itself) and makes the
    mixed-precision run compute that op in float32.
    """

    code = "AMP105"
    name = "autocast-output-escape"
    severity = Severity.ERROR
    fix_safety = "suggestion / unsafe"
    triggers = ("autocast",)

    flag = [
        Flag(  # a float32 head and a memory bank after the region
            "import torch\n"
            "from torch import nn\n"
            "class Memory(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.encoder = nn.Linear(32, 16)\n"
            "        self.head = nn.Linear(16, 10)\n"
            "        self.register_buffer('bank', torch.zeros(1000, 16))\n"
            "    def step(self, x, idx):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            feats = self.encoder(x)\n"
            "        self.bank[idx.long()] = feats.detach()\n"
            "        return self.head(feats)\n",
            fixed="import torch\n"
            "from torch import nn\n"
            "class Memory(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.encoder = nn.Linear(32, 16)\n"
            "        self.head = nn.Linear(16, 10)\n"
            "        self.register_buffer('bank', torch.zeros(1000, 16))\n"
            "    def step(self, x, idx):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            feats = self.encoder(x)\n"
            "        self.bank[idx.long()] = feats.detach().float()\n"
            "        return self.head(feats.float())\n",
            unsafe=True,
            count=2,
        ),
        Flag(  # a matmul result against float32 weights, bf16 too (mm does not promote)
            "import torch\n"
            "w = torch.randn(16, 4)\n"
            "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    sim = q @ k.T\n"
            "out = torch.mm(sim, w)\n",
            fixed="import torch\n"
            "w = torch.randn(16, 4)\n"
            "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "    sim = q @ k.T\n"
            "out = torch.mm(sim.float(), w)\n",
            unsafe=True,
        ),
        Flag(  # a module of the file, then index_add_ into a float32 buffer
            "import torch\n"
            "from torch import nn\n"
            "class Net(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x\n"
            "net = Net()\n"
            "def accumulate(x, index):\n"
            "    total = torch.zeros(10, 8)\n"
            "    with torch.autocast('cuda'):\n"
            "        y = net(x).view(-1, 8)\n"
            "    total.index_add_(0, index, y)\n"
            "    return total\n",
        ),
        Flag(  # maybe-enabled region: the hazard is real in the enabled run; no fix asked
            "import torch\n"
            "from torch import nn\n"
            "proj = nn.Linear(8, 8)\n"
            "head = nn.Linear(8, 2)\n"
            "with torch.autocast('cuda', enabled=use_amp):\n"
            "    h = proj(x)\n"
            "logits = head(h)\n",
        ),
        Flag(  # a method returns a value of its region (BLIP-style retrieval in LAVIS); the
            # caller meets it with another method's float32 Linear output
            "import torch\n"
            "from torch import nn\n"
            "class Retrieval(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.vision_proj = nn.Linear(32, 16)\n"
            "        self.text_proj = nn.Linear(24, 16)\n"
            "    def image_embed(self, pixels):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            return self.vision_proj(pixels)\n"
            "    def text_embed(self, tokens):\n"
            "        return self.text_proj(tokens)\n"
            "def score(pixels, tokens):\n"
            "    model = Retrieval().cuda()\n"
            "    img = model.image_embed(pixels)\n"
            "    txt = model.text_embed(tokens)\n"
            "    return img @ txt.t()\n",
        ),
        Flag(  # the same through `self`, the half value bound after the region ended
            "import torch\n"
            "from torch import nn\n"
            "class Retrieval(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.vision_proj = nn.Linear(32, 16)\n"
            "        self.text_proj = nn.Linear(24, 16)\n"
            "    def image_embed(self, pixels):\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            feats = self.vision_proj(pixels)\n"
            "        return feats\n"
            "    def forward(self, pixels, tokens):\n"
            "        img = self.image_embed(pixels)\n"
            "        txt = self.text_proj(tokens)\n"
            "        return torch.mm(img, txt.t())\n",
        ),
    ]
    clean = [
        # promoting ops and losses only
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "proj = nn.Linear(8, 8)\n"
        "with torch.autocast('cuda'):\n"
        "    h = proj(x)\n"
        "loss = F.cross_entropy(h, y) + (h * 2).sum() + h.float().mean()\n",
        # cast back with .float() first, or rebound
        "import torch\n"
        "from torch import nn\n"
        "proj = nn.Linear(8, 8)\n"
        "head = nn.Linear(8, 2)\n"
        "w = torch.randn(8, 8)\n"
        "with torch.autocast('cuda'):\n"
        "    h = proj(x)\n"
        "    s = h @ h.T\n"
        "logits = head(h.float())\n"
        "h = h.float()\n"
        "out = h @ w\n"
        "s = s.to(torch.float32)\n"
        "o2 = torch.mm(s, w)\n",
        # the use is inside another region, or the region is disabled / float32
        "import torch\n"
        "from torch import nn\n"
        "proj = nn.Linear(8, 8)\n"
        "head = nn.Linear(8, 2)\n"
        "with torch.autocast('cuda'):\n"
        "    h = proj(x)\n"
        "with torch.autocast('cuda'):\n"
        "    logits = head(h)\n"
        "with torch.autocast('cuda', enabled=False):\n"
        "    g = proj(x)\n"
        "head(g)\n",
        # basic slicing converts; unknown operands and modules stay silent
        "import torch\n"
        "from torch import nn\n"
        "proj = nn.Linear(8, 8)\n"
        "bank = torch.zeros(100, 8)\n"
        "def step(model, head, x, w):\n"
        "    with torch.autocast('cuda'):\n"
        "        h = proj(x)\n"
        "        f = model(x)\n"
        "    bank[:4] = h\n"
        "    bank[0] = h[0]\n"
        "    a = head(h)\n"
        "    b = h @ w\n"
        "    c = torch.mm(f, bank)\n",
        # a class the file turns half
        "import torch\n"
        "from torch import nn\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a = nn.Linear(4, 4)\n"
        "        self.b = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda'):\n"
        "            y = self.a(x)\n"
        "        return self.b(y)\n"
        "m = M().cuda().half()\n",
        # the method casts its region's value back before returning it
        "import torch\n"
        "from torch import nn\n"
        "class Retrieval(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.vision_proj = nn.Linear(32, 16)\n"
        "        self.text_proj = nn.Linear(24, 16)\n"
        "    def image_embed(self, pixels):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            return self.vision_proj(pixels).float()\n"
        "    def text_embed(self, tokens):\n"
        "        return self.text_proj(tokens)\n"
        "def score(pixels, tokens):\n"
        "    model = Retrieval().cuda()\n"
        "    return model.image_embed(pixels) @ model.text_embed(tokens).t()\n",
        # the model is turned half: the text side is half too; an instance bound twice is
        # not known
        "import torch\n"
        "from torch import nn\n"
        "class Retrieval(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.vision_proj = nn.Linear(32, 16)\n"
        "        self.text_proj = nn.Linear(24, 16)\n"
        "    def image_embed(self, pixels):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            return self.vision_proj(pixels)\n"
        "    def text_embed(self, tokens):\n"
        "        return self.text_proj(tokens)\n"
        "def score(pixels, tokens, other):\n"
        "    half = Retrieval().cuda().half()\n"
        "    a = half.image_embed(pixels) @ half.text_embed(tokens).t()\n"
        "    model = Retrieval()\n"
        "    if other is not None:\n"
        "        model = other\n"
        "    b = model.image_embed(pixels) @ torch.zeros(16, 4)\n"
        "    return a, b\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        if not any(region.active for _, _, region in facts.regions.explicit_regions()) and not any(
                isinstance(e, EntryParamEscaped) or isinstance(e, EntryReturnsEscaped) and e.kind == "half"
                for e in facts.entries):
            return
        escape = facts.escape
        found: List[Tuple[cst.BaseExpression, Entry, str, Frame]] = []

        def pair(a, b, op, frame):
            for half, other in ((a, b), (b, a)):
                entry = escape.escaped(half, frame)
                if entry is not None and escape.is_float32(other, frame):
                    found.append((half, entry, f"`{op}` with a float32 tensor", frame))
                    return

        for qualified, site in facts.qualified_calls:
            call, frame = site.node, site.frame
            if facts.active_region(frame) is not None:
                continue
            func = call.func
            if qualified in PAIR_FUNCTIONS:
                first, second = PAIR_FUNCTIONS[qualified]
                a, b = argument(call, first, "input"), argument(call, second, "weight")
                if a is not None and b is not None:
                    pair(a.value, b.value, qualified, frame)
            elif qualified is None and isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in PAIR_METHODS and call.args and call.args[0].keyword is None:
                    pair(func.value, call.args[0].value, f".{method}", frame)
                elif method in WRITE_METHODS and escape.is_float32(func.value, frame):
                    source = argument(call, *WRITE_METHODS[method])
                    if source is not None:
                        entry = escape.escaped(source.value, frame)
                        if entry is not None:
                            found.append(
                                (source.value, entry, f"`.{method}` into a float32 buffer", frame)
                            )
                elif escape.float32_module(func, frame):
                    self._module_use(call, escape, frame, found)
            elif qualified is None and escape.float32_module(func, frame):
                self._module_use(call, escape, frame, found)
        for node, frame in escape.matmuls:
            if facts.active_region(frame) is None:
                pair(node.left, node.right, "@", frame)
        for assign in facts.tree.assigns:
            frame = assign.frame
            if len(assign.targets) != 1 or facts.active_region(frame) is not None:
                continue
            target = assign.targets[0]
            if not isinstance(target, cst.Subscript) or not _advanced(target, escape):
                continue
            entry = escape.escaped(assign.value, frame)
            if entry is not None and escape.is_float32(target.value, frame):
                found.append((assign.value, entry, "an indexed write into a float32 buffer", frame))
        seen = set()
        for node, entry, use, frame in found:
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield self._diagnostic(ctx, node, entry, use)

    @staticmethod
    def _module_use(call, escape, frame, found) -> None:
        if call.args and call.args[0].keyword is None and not call.args[0].star:
            value = call.args[0].value
            entry = escape.escaped(value, frame)
            if entry is not None:
                found.append((value, entry, "a float32 module called outside autocast", frame))

    def _diagnostic(self, ctx, node, entry: Entry, use: str) -> Diagnostic:
        region = entry.region
        error = next((text for method, text in WRITE_ERRORS.items() if f"`.{method}`" in use), None) or (
            "Index put requires the source and destination dtypes match"
            if "buffer" in use else "expected mat1 and mat2 to have the same dtype"
        )
        text = ctx.module.code_for_node(node).strip()
        if len(text) > 40:
            text = text[:37] + "..."
        text = text.replace("{", "{{").replace("}", "}}")
        if region is None:  # returned by a function of another file (facts.returned_escapes)
            where = entry.cite.replace("{", "{{").replace("}", "}}")
            related = {}
        else:
            dtype = region.dtype or "half (float16 or bfloat16)"
            where = (f"{dtype} from the autocast region at line {{region_line}} (produced at "
                     f"line {{produced_line}})")
            related = {"region_line": region.root.origin, "produced_line": entry.node}
        message = (
            f"`{text}` is {where} and is used after the region in {use}: 'RuntimeError: "
            f"{error}'; cast it back with `.float()` after the region"
        )
        fix = self.fix(
            Applicability.UNSAFE,
            "cast it to float32 with `.float()`",
            {node: method_call(node, "float")},
        )
        return self.report(node, message, fix=fix, related=related)


def _advanced(target: cst.Subscript, escape) -> bool:
    """An index that is visibly a tensor (a mask, a comparison, a call other than `slice`, a
    local assigned from one): the write goes through index_put_, which needs equal dtypes."""
    if len(target.slice) != 1:
        return False
    index = target.slice[0].slice
    return isinstance(index, cst.Index) and _tensor_index(index.value, escape, 0)


def _tensor_index(value: cst.BaseExpression, escape, depth: int) -> bool:
    if depth > 4:
        return False
    if isinstance(value, cst.Name):
        entry = escape.read(value)
        if entry is None or entry.value is None:
            return False
        value = entry.value
    if isinstance(value, cst.Comparison):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.BitInvert):
        return True
    if isinstance(value, cst.BinaryOperation):
        return _tensor_index(value.left, escape, depth + 1) or _tensor_index(
            value.right, escape, depth + 1
        )
    if isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        return name not in ("slice", "int", "len", "range", "min", "max", "item", "size")
    return False
