"""AMP132, AMP133, AMP140, AMP141: what their docs claim torch does (checked on CPU with the
installed torch), and how the rules behave on look-alikes beyond their own examples."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODES = ("AMP132", "AMP133", "AMP140", "AMP141")


def _codes(source: str, *codes: str):
    result = lint_source("example.py", source, Settings(frozenset(codes or CODES)))
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics]


def _squash(text: str) -> str:
    return " ".join(text.split())


# -- the numbers the docs quote -------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def test_tiny_eps_vanishes_in_float16(torch):
    one = torch.tensor([1.0], dtype=torch.half)
    zero = torch.zeros(1, dtype=torch.half)
    assert (one + 1e-8 == 1).item()
    assert (zero + 1e-8).item() == 0.0
    assert (zero + 1e-12).item() == 0.0
    assert (zero + 2.0 ** -25).item() == 0.0  # the rounding boundary AMP140 states
    assert (zero + 5e-8).item() == 2.0 ** -24  # rounds up to the smallest subnormal
    assert torch.isinf(1 / (zero + 5e-8)).item()  # ... whose reciprocal is already inf
    assert torch.isinf(1 / (zero + 1e-8)).item()
    assert (zero + torch.finfo(torch.half).tiny).item() > 0  # the suggested eps survives
    assert torch.isfinite(1 / (zero + torch.finfo(torch.half).tiny)).item()
    # F.normalize's default eps=1e-12: an all-zero row is NaN in float16, 0 in float32
    zeros = torch.zeros(1, 4)
    assert torch.isnan(torch.nn.functional.normalize(zeros.half(), dim=-1)).all()
    assert (torch.nn.functional.normalize(zeros, dim=-1) == 0).all()
    # nn.LayerNorm(eps=1e-12) adds eps in float32: a constant half row gives 0, not NaN
    norm = torch.nn.LayerNorm(4, eps=1e-12).half()
    assert (norm(torch.ones(2, 4, dtype=torch.half)) == 0).all()
    # bfloat16 has float32's range: 1e-8 survives there (AMP140 ignores bfloat16)
    assert (torch.zeros(1, dtype=torch.bfloat16) + 1e-8).item() > 0


def test_adam_default_eps_over_half_parameters(torch):
    def step(**kwargs):
        p = torch.nn.Parameter(torch.zeros(4, dtype=torch.half))
        opt = torch.optim.Adam([p], lr=1e-3, **kwargs)
        p.grad = torch.full((4,), 1e-5, dtype=torch.half)
        opt.step()
        return p.detach()

    assert torch.isinf(step()).all()  # default eps=1e-8, foreach
    assert torch.isinf(step(foreach=False)).all()
    assert torch.isfinite(step(fused=True)).all()  # fused updates in float32
    assert torch.isfinite(step(eps=1e-4)).all()
    # fp32 parameters (the AMP recipe) are fine with the default eps
    p = torch.nn.Parameter(torch.zeros(4))
    opt = torch.optim.Adam([p], lr=1e-3)
    p.grad = torch.full((4,), 1e-5)
    opt.step()
    assert torch.isfinite(p).all()


def test_float16_reduction_overflows(torch):
    half = torch.half
    assert torch.isinf(torch.full((4096,), 20.0, dtype=half).sum()).item()
    assert torch.isinf(torch.full((8,), 300.0, dtype=half).pow(2).mean()).item()
    assert torch.isfinite(torch.full((8,), 300.0, dtype=half).float().pow(2).mean()).item()
    assert torch.isinf(torch.tensor([-300.0, 300.0] * 50, dtype=half).var()).item()
    exp = torch.tensor([11.0, 11.1], dtype=half).exp()
    assert torch.isfinite(exp[0]).item() and torch.isinf(exp[1]).item()
    x = torch.tensor([[12.0, 1.0, 0.0]], dtype=half)
    assert torch.isnan(x.exp() / x.exp().sum(-1, keepdim=True)).any().item()
    fixed = torch.softmax(x, -1, dtype=torch.float32).to(x.dtype)
    assert torch.isfinite(fixed).all().item()


def test_what_amp141_leaves_alone_does_not_overflow(torch):
    half = torch.half
    # mean accumulates in float32: it cannot leave the inputs' range
    assert torch.full((10000,), 60000.0, dtype=half).mean().item() == 60000.0
    # torch.norm is computed in float32 internally
    assert torch.tensor([300.0, 0.0], dtype=half).norm().item() == 300.0
    # F.softmax on float16 is bit-identical to the float32 softmax cast to float16
    torch.manual_seed(0)
    x = (torch.randn(16, 1024) * 8).half()
    ours = torch.nn.functional.softmax(x, -1)
    reference = torch.nn.functional.softmax(x.float(), -1).half()
    assert torch.equal(ours, reference)


def test_cpu_autocast_float32_warning_is_quoted(torch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast("cpu", dtype=torch.float32):
            enabled = torch.is_autocast_enabled("cpu")
    assert not enabled
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert messages, "torch no longer warns"
    docs = _squash(all_rules()["AMP133"].docs())
    assert _squash(messages[0]) in docs


def test_cpu_float32_island_in_bfloat16_region_raises(torch):
    linear = torch.nn.Linear(4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast("cpu", dtype=torch.bfloat16):
            s = linear(torch.randn(2, 4))
            with torch.autocast("cpu", dtype=torch.float32):
                with pytest.raises(RuntimeError) as raised:
                    linear(s)
    assert "mat1 and mat2 must have the same dtype" in str(raised.value)
    assert "mat1 and mat2 must have the same dtype, but got BFloat16 and Float" in _squash(
        all_rules()["AMP133"].docs()
    )


# -- the rules on look-alikes ---------------------------------------------------------------

@pytest.mark.parametrize(
    "path", sorted(FIXTURES.glob("clean/amp1[34][0-9]_*.py")), ids=lambda p: p.stem
)
def test_clean_fixtures_silent_with_tier2_selected(path):
    """The fixtures test runs only the default rules on clean files; select these explicitly."""
    assert _codes(path.read_text()) == []


def test_amp140_flow_sees_float32_reassignment():
    source = (
        "import torch\n"
        "def stats(x):\n"
        "    h = x.half()\n"
        "    h = h.float()\n"
        "    return h / (h.sum() + 1e-8)\n"
    )
    assert _codes(source, "AMP140", "AMP141") == []
    flagged = source.replace("    h = h.float()\n", "")
    assert _codes(flagged, "AMP140", "AMP141") == ["AMP140", "AMP141"]


def test_amp141_caller_casts_to_float32():
    """Gemma/nanochat RMSNorm: `_norm` squares `x`, but every caller passes `x.float()`."""
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class RMSNorm(nn.Module):\n"
        "    def _norm(self, x):\n"
        "        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)\n"
        "    def forward(self, x):\n"
        "        return self._norm(x.float()).type_as(x)\n"
        "norm = RMSNorm().half()\n"
    )
    assert _codes(source, "AMP141") == []
    assert _codes(source.replace("x.float()", "x"), "AMP141") == ["AMP141"]


def test_amp140_eps_only_when_other_operand_is_float16():
    half_module = (
        "import torch\n"
        "from torch import nn\n"
        "class M(nn.Module):\n"
        "    def forward(self, x, temperature=1.0):\n"
        "        a = temperature + 1e-8\n"
        "        b = x.shape[-1] + 1e-8\n"
        "        c = x.size(0) + 1e-12\n"
        "        return x / (x.abs().sum(-1, keepdim=True) + 1e-8) * a * b * c\n"
        "m = M().cuda().half()\n"
    )
    assert _codes(half_module, "AMP140") == ["AMP140"]


def test_amp140_under_autocast_in_half_module_is_silent():
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class M(nn.Module):\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda'):\n"
        "            return x / (x.norm(dim=-1, keepdim=True) + 1e-8)\n"
        "m = M().half()\n"
    )
    assert _codes(source, "AMP140") == []


def test_amp133_positional_and_partial_spellings():
    assert _codes("import torch\nwith torch.autocast('cpu', torch.float32):\n    pass\n") == [
        "AMP133"
    ]
    assert _codes("import torch\nwith torch.autocast('cuda', torch.float32):\n    pass\n") == []
    assert _codes(
        "import torch\nwith torch.autocast('cpu', torch.float32, False):\n    pass\n"
    ) == []


def test_amp132_counts_one_finding_per_entry_point():
    source = (
        "import apex\n"
        "from apex import amp\n"
        "model, opt = amp.initialize(model, opt)\n"
        "with apex.amp.scale_loss(loss, opt) as s:\n"
        "    s.backward()\n"
        "torch.nn.utils.clip_grad_norm_(amp.master_params(opt), 1.0)\n"
    )
    assert _codes(source, "AMP132") == ["AMP132", "AMP132"]
