"""The class flow asks the call sites of a function only where a site can bind (issue 34):
counted (files summarised), not timed.

A project laid out like huggingface/transformers: Llama4's image processor overrides
`rescale_and_normalize(self, images, ...)` and casts `images.to(dtype=torch.bfloat16)` in it,
so the class flow asks what `images` may hold, i.e. every call site of `rescale_and_normalize`.
Every other image processor calls it as `self.rescale_and_normalize(images, ...)` (transformers
has ~150 of them). Such a callee holds what the caller's class stores under that attribute
(`_stores`), and no file of the project stores one: the sites bind nothing, and the files that
hold only such sites are no longer summarised for the question. The half set (a vision model
turned bfloat16 by an example script) and its finding are the same; the clean twin is silent."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.site_files import SiteFiles
from amplint.analysis.project.call_arguments import filled_slots

SETTINGS = Settings.default()
ROOT = "transformers/src/transformers"

BASE = """import torch


class BaseImageProcessor:
    def normalize(self, images, mean, std):
        return (images - mean) / std

    def rescale_and_normalize(self, images, do_rescale, rescale_factor, image_mean, image_std):
        if do_rescale:
            images = images * rescale_factor
        return self.normalize(images, image_mean, image_std)
"""
LLAMA4_PROCESSOR = """import torch

from ...image_processing_utils import BaseImageProcessor


class Llama4ImageProcessor(BaseImageProcessor):
    def rescale_and_normalize(self, images, do_rescale, rescale_factor, image_mean, image_std):
        # the original implementation rescales in bfloat16
        images = images.to(dtype=torch.bfloat16) * rescale_factor
        return self.normalize(images, image_mean, image_std)

    def _preprocess(self, images, rescale_factor, image_mean, image_std):
        return self.rescale_and_normalize(images, True, rescale_factor, image_mean, image_std)
"""
PROCESSOR = """import torch

from ...image_processing_utils import BaseImageProcessor


class {name}ImageProcessor(BaseImageProcessor):
    def _preprocess(self, images, do_rescale, rescale_factor, image_mean, image_std):
        stacked = torch.stack(images)
        return self.rescale_and_normalize(stacked, do_rescale, rescale_factor, image_mean, image_std)
"""
MODELING = """import torch
import torch.nn as nn


class Llama4VisionAttention(nn.Module):
    def forward(self, scores, mask):
        return scores.masked_fill(mask, -1e9).softmax(-1)


class Llama4VisionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Llama4VisionAttention()

    def forward(self, scores, mask):
        return self.attention(scores, mask)
"""
EXAMPLE = """import torch

from transformers.models.llama4.modeling_llama4 import Llama4VisionModel


def main():
    model = Llama4VisionModel().to(torch.bfloat16)
    return model
"""
NAMES = ["Vit", "Clip", "Siglip", "Dinov2", "Beit", "Deit", "Swin", "Sam"]


def _files(processors: int, finfo: bool = False):
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/models/__init__.py": "",
        f"{ROOT}/image_processing_utils.py": BASE,
        # named outside its class statement (transformers' auto mappings name it too), or no
        # value could hold one and its method's sites would not be asked at all (class_named)
        f"{ROOT}/models/llama4/__init__.py": "from .image_processing_llama4 import Llama4ImageProcessor\n",
        f"{ROOT}/models/llama4/image_processing_llama4.py": LLAMA4_PROCESSOR,
        f"{ROOT}/models/llama4/modeling_llama4.py":
            MODELING.replace("-1e9", "torch.finfo(scores.dtype).min") if finfo else MODELING,
        "transformers/examples/run_llama4_vision.py": EXAMPLE,
    }
    for name in NAMES[:processors]:
        folder = f"{ROOT}/models/{name.lower()}"
        files[f"{folder}/__init__.py"] = ""
        files[f"{folder}/image_processing_{name.lower()}.py"] = PROCESSOR.format(name=name)
    return files


def _processors(paths):
    return sorted(p for p in paths if "image_processing_" in p and "llama4" not in p and "utils" not in p)


def test_self_calls_of_an_attribute_nothing_stores_are_not_summarised():
    files = _files(6)
    project = build(files)
    half = {cls for (_, cls) in project.flow.half_instances()}
    assert half == {"Llama4VisionModel", "Llama4VisionAttention"}
    assert _processors(files) and _processors(project.parsed) == []
    # what a question costs does not grow with the processors that cannot answer it
    assert len(build(_files(2)).parsed) == len(project.parsed)


def test_the_finding_is_the_same_and_the_clean_twin_is_silent():
    found = lint_project(_files(6), SETTINGS)
    codes = [(p.rsplit("/", 1)[1], d.code) for p, r in found.items() for d in r.diagnostics if d.code != "AMP130"]
    assert codes == [("modeling_llama4.py", "AMP110")]
    clean = lint_project(_files(6, finfo=True), SETTINGS)
    assert not [d.code for r in clean.values() for d in r.diagnostics if d.code != "AMP130"]


def test_a_store_of_the_attribute_anywhere_keeps_the_files():
    """`self.rescale_and_normalize = ...` in any class may give such a site a value."""
    files = _files(3)
    files[f"{ROOT}/models/vit/image_processing_vit_fast.py"] = (
        "from ...image_processing_utils import BaseImageProcessor\n\n\n"
        "class VitImageProcessorFast(BaseImageProcessor):\n"
        "    def __init__(self, fn):\n        self.rescale_and_normalize = fn\n"
    )
    project = build(files)
    project.flow.half_instances()
    assert set(_processors(files)) - {f"{ROOT}/models/vit/image_processing_vit_fast.py"} <= set(project.parsed)


class _Project:
    def __init__(self, texts):
        self.files = {f"m{i}.py": text for i, text in enumerate(texts)}
        self.python = sorted(self.files)


class _Flow:
    def __init__(self, texts):
        self.p = _Project(texts)


@pytest.mark.parametrize("text, stored", [
    ("class A:\n    def m(self, x):\n        return self.m (x)\n", False),
    ("y = obj.m(\n    x)\n", False),
    ("self.m = fn\n", True),
    ("self.a, self.m = f, g\n", True),
    ("self.m: Callable = fn\n", True),
    ("self.m.append(x)\n", True),
    ("class A:\n    m = staticmethod(fn)\n", True),
    ("@dataclass\nclass C:\n    m: Callable\n", True),
    ("f(m=x)\n", True),
    ("# m is set elsewhere\n", True),  # comments and strings count: conservative
    ("self.mm = 1\nself.m_ = 2\ndef m(x):\n    pass\n", False),
])
def test_what_counts_as_a_store_of_an_attribute(text, stored):
    assert SiteFiles(_Flow([text]), None)._stored_anywhere("m") is stored


# huggingface/transformers' modeling_utils.py: a setter whose `value` the class stores; each
# model calls `self.loss_function(logits=logits, labels=labels, ...)` by keyword only, which
# cannot fill the setter's `value` (position 1, or 0 past `self`)
MODELING_UTILS = """import torch
import torch.nn as nn


class PreTrainedModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    @property
    def loss_function(self):
        return self._loss_function

    @loss_function.setter
    def loss_function(self, value):
        self._loss_function = value
"""
MODEL = """import torch
import torch.nn as nn

from ...modeling_utils import PreTrainedModel


class {name}ForCausalLM(PreTrainedModel):
    def forward(self, hidden, labels=None):
        logits = hidden @ self.get_output_embeddings().weight.T
        loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size)
        return loss, logits
"""
QUANTIZE = """import torch

from transformers.modeling_utils import PreTrainedModel


def prepare_for_half(model: PreTrainedModel):
    model.half()
    return model
"""


def _models(count: int):
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/models/__init__.py": "",
        f"{ROOT}/modeling_utils.py": MODELING_UTILS,
        f"{ROOT}/integrations/quantize.py": QUANTIZE,
    }
    for name in NAMES[:count]:
        folder = f"{ROOT}/models/{name.lower()}"
        files[f"{folder}/__init__.py"] = ""
        files[f"{folder}/modeling_{name.lower()}.py"] = MODEL.format(name=name)
    return files


def test_sites_that_cannot_fill_the_parameter_are_not_summarised():
    files = _models(6)
    project = build(files)
    assert {cls for (_, cls) in project.flow.half_instances()} == {"PreTrainedModel"}
    models = sorted(p for p in files if "/modeling_" in p and "utils" not in p)
    assert models and not set(models) & set(project.parsed)
    assert len(build(_models(2)).parsed) == len(project.parsed)


def test_a_site_that_fills_the_parameter_keeps_its_file():
    files = _models(3)
    files[f"{ROOT}/trainer.py"] = (
        "from transformers.models.vit.modeling_vit import VitForCausalLM\n\n\n"
        "def setup(model: VitForCausalLM, loss):\n    model.loss_function = loss\n"
        "    model.loss_function(loss)\n    return model\n"
    )
    project = build(files)
    project.flow.half_instances()
    assert f"{ROOT}/trainer.py" in project.parsed


@pytest.mark.parametrize("args, slots", [
    ("x, y", {0, 1}), ("logits=logits, labels=labels", {"logits", "labels"}),
    ("*args, value=v", set()), ("x, 0.5, None", {0}), ('"", x', {1}), ("a, **kw", {0}),
    ("f(a, b), k=[1, 2]", {0}), ("x == y, z", {0, 1}), ("ü=a, b", {"ü", 1}), ("a, ü", {0, 1}),
    # commas that do not separate arguments: an f-string's text (CodeText keeps it), a lambda's
    ('f"{h}, {w}, {c}", 0, True, model', None), ("lambda a, b, c: a, 0, True, model", None),
])
def test_which_slots_a_call_fills(args, slots):
    assert filled_slots(args) == slots
