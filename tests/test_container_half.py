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


def test_a_module_passed_through_an_unknown_call_is_not_claimed_held():
    # `pick(...)` may keep nothing of what it is given: here it drops the Normalize, so the
    # ModuleDict holds a float32-free Identity and nothing of this file is made half through it
    source = _source("nn.ModuleDict({'vision': pick(Normalize(dim=-1))})").replace(
        "class ImageBindModel", "def pick(module):\n    return nn.Identity()\nclass ImageBindModel")
    scope = {}
    exec(compile(source, "model.py", "exec"), scope)
    assert isinstance(scope["model"].post["vision"], torch.nn.Identity)
    assert "Normalize" not in _half_classes(source)


def test_a_dict_the_module_defines_is_not_the_builtin():
    source = _source("nn.ModuleDict(dict(vision=Normalize(dim=-1)))").replace(
        "class ImageBindModel", "def dict(**parts):\n    return {'vision': nn.Identity()}\nclass ImageBindModel")
    assert isinstance(_exec_post(source), torch.nn.Identity)
    assert "Normalize" not in _half_classes(source)


def _exec_post(source: str):
    scope = {}
    exec(compile(source, "model.py", "exec"), scope)
    return scope["model"].post["vision"]
