"""A model moved and halved in one chain (`model.to(device).half()`, `model.cuda().eval().half()`)
is a half model for the shared fp16 fact (facts/fp16.py `_class_cast`): nn.Module's moves return
the module itself. Shaped like ImageBind's demo (`model.eval(); model.to(device)` then a halved
model whose Normalize postprocessor squares the embeddings). Proven on CPU: the float16 sum of
squares overflows to inf and the normalised embedding collapses to 0; the float32 twin is 1."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

EMBED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class Normalize(nn.Module):\n"
    "    def __init__(self, dim):\n"
    "        super().__init__()\n"
    "        self.dim = dim\n"
    "    def forward(self, x):\n"
    "        return x / x.pow(2).sum(dim=self.dim, keepdim=True).sqrt()\n"
    "class Embedder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.head = nn.Linear(1024, 1024)\n"
    "        self.post = Normalize(dim=-1)\n"
    "OWN_TO"
    "    def forward(self, x):\n"
    "        return self.post(self.head(x))\n"
    "def build(device):\n"
    "    model = Embedder()\n"
    "    model = CHAIN\n"
    "    return model\n"
)


def _source(chain: str, own_to: str = "") -> str:
    return EMBED.replace("CHAIN", chain).replace("OWN_TO", own_to)


def _codes(source: str):
    return [d.code for d in lint_source("embed.py", source, Settings(frozenset({"AMP141"}))).diagnostics]


def _norm(source: str) -> float:
    scope = {}
    exec(compile(source, "embed.py", "exec"), scope)
    torch.manual_seed(0)
    model = scope["build"]("cpu")
    with torch.no_grad():
        model.head.weight.fill_(0.0)
        model.head.bias.fill_(10.0)  # embeddings of magnitude 10 over 1024 dims
        x = torch.randn(2, 1024, dtype=next(model.parameters()).dtype)
        out = model(x)
    return float(out.float().norm(dim=-1)[0])


@pytest.mark.parametrize("chain", [
    'model.to(device).half()',
    'model.to("cpu", non_blocking=True).half()',
    'model.cpu().eval().half()',
])
def test_a_model_moved_then_halved_in_one_chain_is_half(chain):
    source = _source(chain)
    assert _codes(source) == ["AMP141"]
    assert _norm(source) == 0.0  # 1024 * 100 > 65504: the float16 sum is inf


def test_the_moved_model_left_float32_is_silent():
    source = _source("model.to(device).eval()")
    assert _codes(source) == []
    assert _norm(source) == pytest.approx(1.0, abs=1e-3)


def test_a_class_with_its_own_to_is_not_read_through():
    # `Embedder.to` is the project's own method: what it returns is not known to be the model
    own_to = "    def to(self, device):\n        return Normalize(dim=-1)\n"
    assert _codes(_source("model.to(device).half()", own_to)) == []
