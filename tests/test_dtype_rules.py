"""amplint/analysis/data/dtype_rules.py against the installed torch (skipped without torch).

- The CUDA lists equal the macros of the header torch ships (torch/include/ATen/autocast_mode.h),
  at the line numbers the table cites.
- Every CPU autocast entry with a plain Python spelling runs under
  `torch.autocast("cpu", dtype=torch.bfloat16)` and gives the policy's dtype; ops only the CUDA
  lists name keep their input's dtype under CPU autocast; the "keep"/"float" tables keep a
  floating input's dtype.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from amplint.analysis.data import dtype_rules as R

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
F = torch.nn.functional


def _header():
    path = pathlib.Path(torch.__file__).parent / "include" / "ATen" / "autocast_mode.h"
    if not path.exists():
        pytest.skip("this torch ships no ATen headers")
    return path.read_text().splitlines()


def _macro(lines, name):
    start = next(i for i, line in enumerate(lines) if line.startswith(f"#define {name}(_)"))
    ops = set()
    for line in lines[start + 1:]:
        found = re.match(r"\s*_\((?:ADD_NS\()?(\w+)", line)
        if found:
            ops.add(found.group(1))
        if not line.rstrip().endswith("\\"):
            break
    return start + 1, ops


@pytest.mark.parametrize("group,macros", [
    (R.CUDA_LOWER_PRECISION, ["AT_FORALL_LOWER_PRECISION_FP"]),
    (R.CUDA_FP32, ["AT_FORALL_FP32", "AT_FORALL_FP32_SET_OPT_DTYPE",
                   "AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE"]),
    (R.CUDA_PROMOTE, ["AT_FORALL_PROMOTE"]),
])
def test_cuda_lists_are_the_headers(group, macros):
    lines = _header()
    ops = set()
    for macro in macros:
        line, found = _macro(lines, macro)
        assert f":{line} " in group.source or f"h:{line} " in group.source or f":{line}," in group.source \
            or f"{line} {macro}" in group.source, (macro, line, group.source)
        ops |= found
    extra = {"cudnn_convolution", "cudnn_convolution_transpose"}  # registered in the .cpp
    assert group.ops - extra == ops


a = torch.randn(4, 4)
CPU_CALLS = {
    "conv1d": lambda x: F.conv1d(x[None], x[:, :, None]),
    "conv2d": lambda x: F.conv2d(x[None, None], x[None, None]),
    "conv3d": lambda x: F.conv3d(x[None, None, None], x[None, None, None]),
    "bmm": lambda x: torch.bmm(x[None], x[None]), "mm": lambda x: torch.mm(x, x),
    "baddbmm": lambda x: torch.baddbmm(x[None], x[None], x[None]),
    "addmm": lambda x: torch.addmm(x, x, x), "addbmm": lambda x: torch.addbmm(x, x[None], x[None]),
    "linear": lambda x: F.linear(x, x), "matmul": lambda x: x @ x,
    "conv_transpose1d": lambda x: F.conv_transpose1d(x[None], x[:, :, None]),
    "conv_transpose2d": lambda x: F.conv_transpose2d(x[None, None], x[None, None]),
    "prelu": lambda x: F.prelu(x, torch.ones(1)),
    "scaled_dot_product_attention": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
    "prod": lambda x: x.prod(), "mse_loss": lambda x: F.mse_loss(x, x),
    "l1_loss": lambda x: F.l1_loss(x, x), "smooth_l1_loss": lambda x: F.smooth_l1_loss(x, x),
    "huber_loss": lambda x: F.huber_loss(x, x), "kl_div": lambda x: F.kl_div(x, x, reduction="sum"),
    "cross_entropy_loss": lambda x: F.cross_entropy(x, torch.arange(4)),
    "nll_loss": lambda x: F.nll_loss(x, torch.arange(4)),
    "binary_cross_entropy_with_logits": lambda x: F.binary_cross_entropy_with_logits(x, x.sigmoid()),
    "cdist": lambda x: torch.cdist(x, x), "inverse": lambda x: torch.inverse(x + 4 * torch.eye(4)),
    "trace": lambda x: torch.trace(x), "fft_rfft": lambda x: torch.fft.rfft(x).real,
    "cat": lambda x: torch.cat([x, x.float()]), "stack": lambda x: torch.stack([x, x.float()]),
    "einsum": lambda x: torch.einsum("ij,jk->ik", x, x),
}
EXPECT = {"lower": ("float32", "bfloat16"), "fp32": ("bfloat16", "float32"),
          "promote": ("bfloat16", "float32")}


@pytest.mark.parametrize("op", sorted(CPU_CALLS))
def test_cpu_policy_matches_execution(op):
    from amplint.analysis.facts.dtypes import DtypeFacts

    policy = DtypeFacts.policy(type("Region", (), {"device": "cpu"})(), op)
    given, expected = EXPECT[policy]
    x = a.to(getattr(torch, given))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert str(CPU_CALLS[op](x).dtype) == f"torch.{expected}", (op, policy)


def test_cpu_table_has_calls_for_most_entries():
    lower = R.CPU_LOWER_PRECISION.ops & set(CPU_CALLS)
    assert len(lower) >= 14 and len(R.CPU_FP32.ops & set(CPU_CALLS)) >= 12


CUDA_ONLY = {
    "exp": torch.exp, "log": lambda x: x.abs().log(), "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1), "sum": torch.sum, "cumsum": lambda x: x.cumsum(0),
    "pow": lambda x: x ** 2, "layer_norm": lambda x: F.layer_norm(x, (4,)),
    "group_norm": lambda x: F.group_norm(x[None], 2), "norm": lambda x: x.norm(),
    "logsumexp": lambda x: x.logsumexp(0), "rsqrt": lambda x: x.abs().rsqrt(),
    "softplus": F.softplus, "mv": lambda x: torch.mv(x, x[0]), "dot": lambda x: torch.dot(x[0], x[1]),
}
KEEP_CALLS = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "gelu": F.gelu,
    "silu": F.silu, "mean": torch.mean, "var": torch.var, "std": torch.std,
    "view": lambda x: x.view(16), "permute": lambda x: x.permute(1, 0),
    "unsqueeze": lambda x: x.unsqueeze(0), "transpose": lambda x: x.transpose(0, 1),
    "flatten": torch.flatten, "clone": torch.clone, "neg": torch.neg, "abs": torch.abs,
    "amax": lambda x: x.amax(0), "clamp": lambda x: x.clamp(0, 1), "sqrt": lambda x: x.abs().sqrt(),
    "normalize": F.normalize, "bernoulli": lambda x: torch.bernoulli(x.abs().clamp(0, 1)),
}


@pytest.mark.parametrize("op", sorted(CUDA_ONLY) + sorted(KEEP_CALLS))
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float16"])
def test_unlisted_ops_keep_dtype_under_cpu_autocast(op, dtype):
    from amplint.analysis.facts.dtypes import DtypeFacts

    assert DtypeFacts.policy(type("Region", (), {"device": "cpu"})(), op) == "none"
    assert R.op_kind(op) in ("keep", "clamp", "float", "reduce", "same", "binary"), op
    call = CUDA_ONLY.get(op) or KEEP_CALLS[op]
    x = a.to(getattr(torch, dtype))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        try:
            out = call(x)
        except RuntimeError:
            pytest.skip(f"{op} has no {dtype} CPU kernel in this torch")
    assert out.dtype == x.dtype


_MATH_ARGUMENTS = [(0.5,), (2.0,), (4,), (2.0, 3.0), (4, 2)]


@pytest.mark.parametrize("name,kind", [(n, float) for n in sorted(R.MATH_FLOAT)]
                         + [(n, int) for n in sorted(R.MATH_INT)]
                         + [(n, bool) for n in sorted(R.MATH_BOOL)])
def test_math_functions_return_python_numbers(name, kind):
    """The fact values `math.<name>(...)` as a Python number of `kind`, whatever it is given: so
    for one-element tensors of every floating dtype and for Python numbers alike."""
    import math

    function = getattr(math, name)
    seen = set()
    for numbers in _MATH_ARGUMENTS:
        for make in (lambda v: v, lambda v: torch.tensor(v), lambda v: torch.tensor(v).half(),
                     lambda v: torch.tensor(v).bfloat16()):
            try:
                result = function(*(make(v) for v in numbers))
            except (TypeError, ValueError, OverflowError):
                continue
            seen.add(type(result))
    assert seen == {kind}, (name, seen)


def test_math_constants_are_python_floats():
    import math

    assert {type(getattr(math, name)) for name in R.MATH_CONSTANTS} == {float}


@pytest.mark.parametrize("equation,contracts", [
    ("ij,jk->ik", True), ("bij,bjk->bik", True), ("ij,ij->", True), ("i,i", True), ("ij,j->i", True),
    ("i,j->ij", False), ("ij,ij->ij", False), ("ii->i", False), ("ij->", None), ("ij,k->k", None),
])
def test_einsum_contracts_matches_cpu_autocast(equation, contracts):
    """CPU autocast lowers an einsum only through the bmm that a contraction across operands
    runs (R.einsum_contracts): True -> bfloat16, False -> the input's float16 (None: not said)."""
    assert R.einsum_contracts(equation) is contracts
    operands = [torch.rand(*(4 for _ in term)).half() for term in equation.split("->")[0].split(",")]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = torch.einsum(equation, *operands)
    if contracts is not None:
        assert out.dtype == (torch.bfloat16 if contracts else torch.float16), equation


def test_cpu_tensordot_depends_on_its_dims():
    """Why ("cpu", "tensordot") is None: a full contraction keeps float16, one dim runs mm."""
    from amplint.analysis.facts.dtypes import DtypeFacts

    assert DtypeFacts.policy(type("Region", (), {"device": "cpu"})(), "tensordot") is None
    x = torch.rand(4, 4).half()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.tensordot(x, x).dtype == torch.float16
        assert torch.tensordot(x, x, dims=1).dtype == torch.bfloat16
