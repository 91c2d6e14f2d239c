"""A model built by a factory function of the file and then halved (`model = imagebind_huge();
model.half()`) is a half model for the shared fp16 fact: `CallGraph.factory_class` reads a
module-level function every `return` of which gives a new instance of one class of the file.
Shaped like ImageBind's `imagebind_model.imagebind_huge(pretrained=True)` followed by
`model.eval(); model.to(device)` and a halved model. Proven on CPU: the float16 sum of squares of
embeddings of magnitude 10 over 1024 dims is inf and the normalised embedding is 0."""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

MODEL = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class Normalize(nn.Module):\n"
    "    def __init__(self, dim):\n"
    "        super().__init__()\n"
    "        self.dim = dim\n"
    "    def forward(self, x):\n"
    "        return x / x.pow(2).sum(dim=self.dim, keepdim=True).sqrt()\n"
    "class ImageBindModel(nn.Module):\n"
    "    def __init__(self, dim=1024):\n"
    "        super().__init__()\n"
    "        self.head = nn.Linear(dim, dim)\n"
    "        self.post = Normalize(dim=-1)\n"
    "    def forward(self, x):\n"
    "        return self.post(self.head(x))\n"
    "class Other(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "FACTORY"
    "def load(device):\n"
    "    model = imagebind_huge(pretrained=False)\n"
    "    model.eval()\n"
    "    model.CAST\n"
    "    return model\n"
)
FACTORY = (
    "def imagebind_huge(pretrained=False):\n"
    "    model = ImageBindModel(dim=1024)\n"
    "    if pretrained:\n"
    "        model.load_state_dict(torch.load('imagebind_huge.pth'))\n"
    "    return model\n"
)


def _source(factory: str = FACTORY, cast: str = "to(device).half()") -> str:
    return MODEL.replace("FACTORY", factory).replace("CAST", cast)


def _codes(source: str):
    return [d.code for d in lint_source("models.py", source, Settings(frozenset({"AMP141"}))).diagnostics]


def _half_classes(source: str):
    return FileFacts(cst.parse_module(source)).fp16.half_classes


def _norm(source: str) -> float:
    scope = {}
    exec(compile(source, "models.py", "exec"), scope)
    model = scope["load"]("cpu")
    with torch.no_grad():
        model.head.weight.fill_(0.0)
        model.head.bias.fill_(10.0)
        out = model(torch.randn(2, 1024, dtype=model.head.weight.dtype))
    return float(out.float().norm(dim=-1)[0])


@pytest.mark.parametrize("factory", [
    FACTORY,
    "def imagebind_huge(pretrained=False):\n    return ImageBindModel(dim=1024).eval()\n",
])
def test_a_model_from_a_factory_then_halved_is_half(factory):
    source = _source(factory)
    assert _codes(source) == ["AMP141"]
    assert _norm(source) == 0.0


def test_the_factory_model_left_float32_is_silent():
    source = _source(cast="to(device)")
    assert _codes(source) == []
    assert _norm(source) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("factory", [
    # one return gives another class: which one the call builds is not known
    "def imagebind_huge(pretrained=False):\n"
    "    if pretrained:\n        return Other()\n"
    "    return ImageBindModel()\n",
    # the local is rebound by a loop: not only the constructed instance
    "def imagebind_huge(pretrained=False, zoo=()):\n"
    "    net = ImageBindModel()\n"
    "    for net in zoo:\n        pass\n"
    "    return net\n",
    # a parameter passed through
    "def imagebind_huge(pretrained=False, model=None):\n    return model\n",
])
def test_a_factory_whose_result_is_not_one_class_is_not_read(factory):
    assert "ImageBindModel" not in _half_classes(_source(factory))
