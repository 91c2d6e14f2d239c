"""CUDA autocast emulated on CPU: the policy table against torch's dispatcher, and what the
emulation does to a program written for CUDA."""

import contextlib

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from amplint.runtime import cuda_policy  # noqa: E402
from amplint.runtime.emulate import CudaEmulation, cuda_autocast_ops  # noqa: E402


@pytest.mark.skipif(not torch.__version__.startswith("2.13."),
                    reason="the table is torch 2.13's (2.11 lacks rms_norm and lists the Dimname overloads)")
def test_the_table_is_torchs_cuda_autocast_op_set():
    """Every aten op with an AutocastCUDA kernel in the installed torch is in the table (with a
    policy and a source line), and the table names no op torch does not cast."""
    torch_ops = set(cuda_autocast_ops())
    assert len(torch_ops) > 100
    assert set(cuda_policy.POLICY) == torch_ops
    for name, (policy, line) in cuda_policy.POLICY.items():
        assert policy in {"lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype",
                          "promote", "banned"}
        assert line > 0
    for name, target in cuda_policy.APPEND_TARGET.items():
        op, _, overload = target.partition(".")
        getattr(getattr(torch.ops.aten, op), overload)  # the redispatch overload exists


def _dtype_under(dtype, fn):
    with CudaEmulation(), torch.autocast("cuda", dtype=dtype):
        return fn()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_each_policy_casts_as_cuda_does(dtype):
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    assert _dtype_under(dtype, lambda: a @ b).dtype == dtype  # lower_precision_fp
    assert _dtype_under(dtype, lambda: F.linear(a, b)).dtype == dtype
    h = a.to(dtype)
    assert _dtype_under(dtype, lambda: torch.exp(h)).dtype == torch.float32  # fp32
    assert _dtype_under(dtype, lambda: F.layer_norm(h, (4,))).dtype == torch.float32
    assert _dtype_under(dtype, lambda: torch.softmax(h, -1)).dtype == torch.float32  # set_opt
    assert _dtype_under(dtype, lambda: h.sum()).dtype == torch.float32
    assert _dtype_under(dtype, lambda: h.norm()).dtype == torch.float32  # append_dtype
    assert _dtype_under(dtype, lambda: torch.addcmul(a, h, h)).dtype == torch.float32  # promote
    assert _dtype_under(dtype, lambda: torch.addcmul(h, h, h)).dtype == dtype
    # CPU autocast's own lists are off: reflection_pad1d is on CPU's fp32 list, not on CUDA's
    assert _dtype_under(dtype, lambda: F.pad(h, (1, 1), mode="reflect")).dtype == dtype


def test_plain_cpu_autocast_is_back_after_the_block():
    with CudaEmulation():
        pass
    with torch.autocast("cpu", dtype=torch.bfloat16):
        x = torch.rand(3)
        assert F.binary_cross_entropy(x, x).dtype == torch.float32  # CPU: fp32, no raise
        assert F.pad(torch.randn(2, 4).bfloat16(), (1, 1), mode="reflect").dtype == torch.float32
    assert not torch.cuda.is_available() or torch.cuda.device_count() > 0


def test_what_cuda_raises_is_raised():
    with CudaEmulation(), torch.autocast("cuda"):
        y = nn.Linear(4, 4)(torch.randn(3, 4))
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(torch.sigmoid(y), torch.rand(3, 4))
        with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
            torch.zeros(3, 4).index_put_((torch.tensor([0]),), y[:1])
        with pytest.raises(RuntimeError, match="without overflow"):
            y.masked_fill(y > 0, -1e9)


def test_cuda_code_runs_on_cpu_and_gradients_flow_to_fp32_params():
    with CudaEmulation():
        assert torch.cuda.is_available()
        model = nn.Linear(4, 4).cuda()
        x = torch.randn(3, 4, device="cuda").to("cuda")
        assert x.device.type == "cpu" and model.weight.device.type == "cpu"
        with torch.autocast("cuda"):  # float16 by default, as on CUDA
            assert torch.is_autocast_enabled("cuda") and torch.get_autocast_dtype("cuda") == torch.float16
            out = model(x)
            with torch.autocast("cuda", dtype=torch.float32):  # CUDA's fp32 island
                assert model(out).dtype == torch.float32
        assert out.dtype == torch.float16
        out.float().sum().backward()
        assert model.weight.grad.dtype == torch.float32
        with pytest.raises(ValueError, match="device_type"):
            torch.autocast(torch.device("cuda"))


def test_grad_scaler_cuda_has_cuda_semantics():
    with CudaEmulation():
        model = nn.Linear(4, 4).cuda().half()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 8)
        assert scaler.is_enabled()
        scaler.scale(model(torch.randn(2, 4).half()).float().sum()).backward()
        assert model.weight.grad.abs().max() > 1  # scaled by 256
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
            scaler.step(opt)
        fp32 = nn.Linear(4, 4)
        opt = torch.optim.SGD(fp32.parameters(), lr=0.1)
        before = fp32.weight.detach().clone()
        loss = fp32(torch.full((2, 4), float("inf"))).sum()
        scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 8)
        scaler.scale(loss).backward()
        scaler.step(opt)  # inf gradients: the step is skipped and the scale backs off
        scaler.update()
        assert torch.equal(fp32.weight, before) and scaler.get_scale() == 2.0 ** 7


def test_the_autocast_weight_cache_is_torch_2_13s():
    """A weight cast under no_grad is cached and reused by the later forward with grad in the
    same region; as in torch 2.13 (autocast_mode.cpp, "Fix #158232") the cached cast keeps its
    history, so the gradient still reaches the weight -- as real CPU autocast does here."""
    results = []
    for emulated in (True, False):
        torch.manual_seed(0)
        fc, x = nn.Linear(4, 4), torch.randn(2, 4)
        with (CudaEmulation() if emulated else contextlib.nullcontext()):
            device = "cuda" if emulated else "cpu"
            with torch.autocast(device, dtype=torch.bfloat16):
                with torch.no_grad():
                    fc(x)
                out = fc(x)
            out.float().sum().backward()
        assert out.requires_grad and fc.weight.grad is not None
        results.append(fc.weight.grad)
    assert torch.equal(results[0], results[1])
