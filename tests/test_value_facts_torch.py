"""The value facts of round 8 proven by execution (torch on CPU): what amplint reports is what
torch raises, and the safe fix runs and keeps the float32 computation.

- a property returning `next(self.parameters()).dtype` is float32 for a float32 module inside an
  autocast region, where the module's matmul output is in the region's dtype
  (facts/property_dtypes.py, AMP111);
- a `torch.device` object as an autocast's device type raises, its `.type` does not
  (facts/device_values.py, AMP131)."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROPERTY = (
    "import torch\n"
    "from torch import nn\n"
    "class Mixin:\n"
    "    @property\n"
    "    def dtype(self):\n"
    "        return next(self.parameters()).dtype\n"
    "class Attention(nn.Module, Mixin):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.q = nn.Linear(8, 8)\n"
    "    @property\n"
    "    def dtype(self):\n"
    "        return next(self.parameters()).dtype\n"
    "    def forward(self, x, mask, region):\n"
    "        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=region):\n"
    "            s = self.q(x) @ x.transpose(-1, -2)\n"
    "            seen.append((self.dtype, s.dtype))\n"
    "            return s.masked_fill(mask, torch.finfo(self.dtype).min)\n"
)


def _run(source: str, region: bool):
    scope = {"seen": []}
    exec(compile(source, "program.py", "exec"), scope)
    torch.manual_seed(0)
    model = scope["Attention"]()
    x = torch.randn(2, 4, 8)
    mask = torch.rand(2, 4, 4) > 0.5
    return model(x, mask, region), scope["seen"]


def test_the_parameters_dtype_property_is_float32_under_autocast_and_the_fill_raises():
    result = lint_source("program.py", PROPERTY, Settings.default())
    (finding,) = [d for d in result.diagnostics if d.code == "AMP111"]
    assert "bfloat16" in finding.message
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::BFloat16 without overflow"):
        _run(PROPERTY, True)
    scope = {"seen": []}
    exec(compile(PROPERTY, "program.py", "exec"), scope)
    model = scope["Attention"]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model.dtype == torch.float32  # what the fact says the property holds
        assert (model.q(torch.randn(2, 8)) @ torch.randn(8, 2)).dtype == torch.bfloat16


def test_the_safe_fix_runs_in_the_region_and_keeps_the_float32_result():
    fixed = lint_source("program.py", PROPERTY, Settings.default(), fix=True).fixed_source
    assert fixed is not None and "torch.finfo(s.dtype).min" in fixed
    out, seen = _run(fixed, True)
    assert out.dtype == torch.bfloat16 and seen == [(torch.float32, torch.bfloat16)]
    before, _ = _run(PROPERTY, False)
    after, _ = _run(fixed, False)
    assert torch.equal(before, after)


def test_a_device_object_as_device_type_raises_and_its_type_does_not():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        with torch.autocast(device_type=torch.device("cpu"), enabled=False):
            pass
    with torch.autocast(device_type=torch.device(torch.device("cpu")).type, enabled=False):
        pass
    with torch.autocast(device_type=torch.device("cpu").type, enabled=False):
        pass
