"""`.half()` converts the modules a torch container holds (`nn.ModuleDict`, `nn.ModuleList`,
`nn.Sequential` on `self`) as it converts direct submodules; a plain dict's modules are not
registered and keep their dtype. The shared fp16 fact (facts/fp16.py `_submodule_classes`)
follows the same line. Shaped like ImageBind's `modality_postprocessors = nn.ModuleDict(...)`
holding a Normalize per modality, with the model halved. Proven on CPU by converting the model."""

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
    "        self.scale = nn.Linear(1, 1)\n"
    "    def forward(self, x):\n"
    "        return x / x.pow(2).sum(dim=self.dim, keepdim=True).sqrt()\n"
    "class ImageBindModel(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.trunk = nn.Linear(8, 8)\n"
    "        self.post = HOLDER\n"
    "    def forward(self, x):\n"
    "        return self.post['vision'](self.trunk(x))\n"
    "model = ImageBindModel()\n"
    "model.CAST()\n"
)


def _source(holder: str, cast: str = "half") -> str:
    return MODEL.replace("HOLDER", holder).replace("CAST", cast)


def _half_classes(source: str):
    return FileFacts(cst.parse_module(source)).fp16.half_classes


def _held_dtype(source: str):
    scope = {}
    exec(compile(source, "model.py", "exec"), scope)
    return scope["model"].post["vision"].scale.weight.dtype


@pytest.mark.parametrize("holder", [
    "nn.ModuleDict({'vision': Normalize(dim=-1)})",
    "nn.ModuleDict(dict(vision=Normalize(dim=-1)))",
])
def test_a_module_in_a_module_dict_of_a_halved_model_is_half(holder):
    source = _source(holder)
    assert _held_dtype(source) == torch.float16
    assert "Normalize" in _half_classes(source)
    codes = [d.code for d in lint_source("model.py", source, Settings(frozenset({"AMP141"}))).diagnostics]
    assert codes == ["AMP141"]


def test_a_module_in_a_module_list_of_a_halved_model_is_half():
    source = _source("nn.ModuleList([Normalize(dim=-1)])").replace("['vision']", "[0]")
    scope = {}
    exec(compile(source, "model.py", "exec"), scope)
    assert scope["model"].post[0].scale.weight.dtype == torch.float16
    assert "Normalize" in _half_classes(source)


def test_a_plain_dict_is_not_registered_and_not_claimed_half():
    source = _source("{'vision': Normalize(dim=-1)}")
    assert _held_dtype(source) == torch.float32
    assert "Normalize" not in _half_classes(source)


def test_the_module_dict_of_a_model_left_float32_is_silent():
    source = _source("nn.ModuleDict({'vision': Normalize(dim=-1)})", cast="float")
    assert _held_dtype(source) == torch.float32
    assert _half_classes(source) == set()
    assert lint_source("model.py", source, Settings(frozenset({"AMP141"}))).diagnostics == []
