"""A method that returns a value of its autocast region (facts/escape.py `_method_return`): the
caller's `img @ txt.t()` against another method's float32 Linear output raises, as AMP105 says.
Proven by execution on CPU with bfloat16 autocast; the twin that casts back runs."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RETRIEVAL = (
    "import torch\n"
    "from torch import nn\n"
    "class Retrieval(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.vision_proj = nn.Linear(32, 16)\n"
    "        self.text_proj = nn.Linear(24, 16)\n"
    "    def image_embed(self, pixels):\n"
    "        with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    "            feats = self.vision_proj(pixels)\n"
    "        return feats\n"
    "    def text_embed(self, tokens):\n"
    "        return self.text_proj(tokens)\n"
    "def score(pixels, tokens):\n"
    "    model = Retrieval().cpu()\n"
    "    img = model.image_embed(pixels)\n"
    "    txt = model.text_embed(tokens)\n"
    "    return img @ txt.t()\n"
)


def _codes(source: str):
    return [d.code for d in lint_source("retrieval.py", source, Settings(frozenset({"AMP105"}))).diagnostics]


def _run(source: str):
    scope = {}
    exec(compile(source, "retrieval.py", "exec"), scope)
    return scope["score"](torch.randn(2, 32), torch.randn(3, 24))


def test_a_returned_region_value_meets_a_float32_linear_output_and_raises():
    assert _codes(RETRIEVAL) == ["AMP105"]
    with pytest.raises(RuntimeError, match="same dtype"):
        _run(RETRIEVAL)


def test_the_method_that_casts_back_is_silent_and_runs():
    source = RETRIEVAL.replace("        return feats\n", "        return feats.float()\n")
    assert _codes(source) == []
    assert _run(source).dtype == torch.float32


HELPER = (
    "import torch\n"
    "from torch import nn\n"
    "def embed(pixels, projection):\n"
    "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    "        return pixels @ projection\n"
    "def score(pixels, tokens):\n"
    "    head = nn.Linear(16, 4)\n"
    "    return head(embed(pixels, torch.randn(32, 16)))\n"
)


def test_a_module_function_returning_its_region_value_into_a_float32_linear_raises():
    """`f(...)` of a module-level function of the file, used directly as the argument."""
    assert _codes(HELPER) == ["AMP105"]
    with pytest.raises(RuntimeError, match="same dtype"):
        _run(HELPER)


def test_the_module_function_that_casts_back_is_silent_and_runs():
    source = HELPER.replace("        return pixels @ projection\n", "        return (pixels @ projection).float()\n")
    assert _codes(source) == []
    assert _run(source).dtype == torch.float32


def test_a_module_function_name_a_scope_rebinds_is_not_followed():
    source = HELPER.replace("    head = nn.Linear(16, 4)\n",
                            "    head = nn.Linear(16, 4)\n    embed = lambda p, w: (p @ w).float()\n")
    assert _codes(source) == []
    assert _run(source).dtype == torch.float32
