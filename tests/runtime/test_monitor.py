"""The monitor finds each hazard at the user's line in small training loops, and is silent on the
correct AMP recipes (CPU autocast; CUDA variants are in test_cuda.py)."""

import os
import warnings

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from rt_helpers import line_of, where  # noqa: E402

HERE = os.path.basename(__file__)
FP16, BF16 = torch.float16, torch.bfloat16


def mlp(d_out=4):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, d_out))


def batch(n=16, d_out=4):
    return torch.randn(n, 8), torch.randn(n, d_out)


# -- AMP104 --------------------------------------------------------------------------------------
def test_amp104_backward_inside_autocast():
    model, (x, y) = mlp(), batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with ar.monitor() as m:
        for _ in range(3):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=BF16):
                loss = F.mse_loss(model(x).float(), y)
                loss.backward()  # amp104-a
            opt.step()
    assert where(m.findings, "AMP104") == [(HERE, line_of("amp104-a"))]
    assert m.findings[0].extra["count"] == 3
    assert m.codes == ["AMP104"]


def test_amp104_scaled_backward_and_autograd_grad():
    model, (x, y) = mlp(), batch()
    scaler = torch.amp.GradScaler("cpu")
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            loss = F.mse_loss(model(x).float(), y)
            (g,) = torch.autograd.grad(loss, [model[0].weight], retain_graph=True)  # amp104-grad
            scaler.scale(loss).backward()  # amp104-scaled
    assert where(m.findings, "AMP104") == [(HERE, line_of("amp104-grad")), (HERE, line_of("amp104-scaled"))]


def test_amp104_silent_after_block_and_in_disabled_region():
    model, (x, y) = mlp(), batch()
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=BF16):
            loss = F.mse_loss(model(x).float(), y)
            with torch.autocast("cpu", enabled=False):
                torch.autograd.grad(loss, [model[0].weight], retain_graph=True)
        loss.backward()
    assert m.findings == []


# -- AMP102 --------------------------------------------------------------------------------------
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(d_out=1)
        self.crit = nn.BCELoss()

    def forward(self, x, y):
        p = torch.sigmoid(self.net(x))
        return self.crit(p, y)  # amp102-module


def test_amp102_bce_module_and_functional():
    model = Detector()
    x, y = torch.randn(16, 8), torch.rand(16, 1)
    with ar.monitor(stand_in_for_cuda=True) as m:
        with torch.autocast("cpu", dtype=BF16):
            loss = model(x, y)
            loss2 = F.binary_cross_entropy(torch.sigmoid(model.net(x)), y)  # amp102-functional
        (loss + loss2).backward()
    assert where(m.findings, "AMP102") == [(HERE, line_of("amp102-module")),
                                           (HERE, line_of("amp102-functional"))]
    assert "raises under CUDA autocast" in m.findings[0].message
    assert m.codes == ["AMP102"]


def test_amp102_cpu_autocast_alone_is_not_a_hazard_for_monitor_and_linter():
    # One semantics on both sides: BCE runs in fp32 under CPU autocast, so neither reports it.
    from amplint.analysis.engine import Settings, lint_source

    model = Detector()
    x, y = torch.randn(16, 8), torch.rand(16, 1)
    with ar.monitor() as m, torch.autocast("cpu", dtype=BF16):
        F.binary_cross_entropy(torch.sigmoid(model.net(x)), y)
    assert m.codes == []
    source = (
        "import torch\nimport torch.nn.functional as F\n"
        "def step(net, x, y):\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "        return F.binary_cross_entropy(torch.sigmoid(net(x)), y)\n"
    )
    assert [d.code for d in lint_source("step.py", source, Settings.default()).diagnostics] == []


def test_amp102_silent_on_logits_island_and_fp32():
    net = mlp(d_out=1)
    x, y = torch.randn(16, 8), torch.rand(16, 1)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=BF16):
            logits = net(x)
            a = nn.BCEWithLogitsLoss()(logits, y)
            b = F.binary_cross_entropy_with_logits(logits, y)
            with torch.autocast("cpu", enabled=False):
                c = F.binary_cross_entropy(torch.sigmoid(logits.float()), y)
        d = F.binary_cross_entropy(torch.sigmoid(net(x)), y)
        (a + b + c + d).backward()
    assert m.findings == []


# -- AMP103 --------------------------------------------------------------------------------------
def test_amp103_half_model_under_autocast():
    model, (x, y) = mlp().half(), batch()
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            out = model(x.half())  # amp103-call
        F.mse_loss(out.float(), y).backward()
    assert where(m.findings, "AMP103") == [(HERE, line_of("amp103-call"))]
    assert m.findings[0].extra["param_dtype"] == "float16"


def test_amp103_grad_scaler_unscale_fp16_grads():
    model, (x, y) = mlp().half(), batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        with ar.monitor() as m:
            loss = F.mse_loss(model(x.half()).float(), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)  # amp103-unscale
    assert where(m.findings, "AMP103") == [(HERE, line_of("amp103-unscale"))]
    assert m.findings[0].extra["error"] == "ValueError"


def test_amp103_silent_on_half_inference_without_autocast():
    model, (x, _) = mlp().half(), batch()
    with ar.monitor() as m, torch.no_grad():
        model(x.half())
    assert m.findings == []


# -- AMP101 --------------------------------------------------------------------------------------
class Pool(nn.Module):
    def __init__(self, fresh_buffer):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.fresh_buffer = fresh_buffer

    def forward(self, x, idx):
        h = self.fc(x)
        if self.fresh_buffer:
            out = torch.zeros(x.shape[0], 4)  # amp101-factory
        else:
            out = h.new_zeros(x.shape[0], 4)
        out[idx] = h[idx]  # amp101-use
        return out


def test_amp101_factory_in_half_forward():
    model, idx = Pool(fresh_buffer=True).half(), torch.tensor([0, 3])
    with ar.monitor() as m:
        with pytest.raises(RuntimeError, match="Index put requires"):
            model(torch.randn(5, 8).half(), idx)
    [f] = m.findings
    assert (f.code, os.path.basename(f.filename), f.line) == ("AMP101", HERE, line_of("amp101-factory"))
    assert f.extra["used_at"].endswith(f"{HERE}:{line_of('amp101-use')}")
    assert "half module's forward" in f.message


def test_amp101_factory_in_autocast_region():
    model, idx = Pool(fresh_buffer=True), torch.tensor([0, 3])
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=BF16), pytest.raises(RuntimeError, match="Index put"):
            model(torch.randn(5, 8), idx)
    assert where(m.findings, "AMP101") == [(HERE, line_of("amp101-factory"))]
    assert "autocast region" in m.findings[0].message


def test_amp101_silent_on_new_zeros_and_explicit_dtype():
    idx = torch.tensor([0, 3])
    with ar.monitor() as m:
        Pool(fresh_buffer=False).half()(torch.randn(5, 8).half(), idx)
        with torch.autocast("cpu", dtype=BF16):
            h = nn.Linear(8, 4)(torch.randn(5, 8))
            buf = torch.zeros(5, 4, dtype=h.dtype)
            buf[idx] = h[idx]
            counts = torch.zeros(5)  # fp32 accumulator that never meets half in a strict op
            counts += 1
            torch.zeros_like(h)[idx] = h[idx]
    assert m.findings == []


# -- AMP110 --------------------------------------------------------------------------------------
def attention(x, proj, fill):
    q, k, v = proj(x).chunk(3, dim=-1)
    scores = q @ k.transpose(-1, -2)
    mask = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)
    scores = scores.masked_fill(mask, fill)  # amp110-fill
    return torch.softmax(scores.float(), -1) @ v.float()


def test_amp110_masked_fill_overflow_under_fp16_autocast():
    proj = nn.Linear(8, 24)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16), pytest.raises(RuntimeError, match="without overflow"):
            attention(torch.randn(2, 5, 8), proj, -1e9)
    assert where(m.findings, "AMP110") == [(HERE, line_of("amp110-fill"))]
    assert m.findings[0].extra["dtype"] == "float16"


def test_amp110_setitem_and_full_and_where():
    h = torch.zeros(4, dtype=FP16)
    with ar.monitor() as m:
        h[0] = 1e10  # amp110-setitem
        torch.where(h > 0, h, -1e9)  # amp110-where
        with pytest.raises(RuntimeError):
            torch.full((2,), -1e9, dtype=FP16)  # amp110-full
    assert where(m.findings, "AMP110") == [(HERE, line_of("amp110-setitem")), (HERE, line_of("amp110-where")),
                                           (HERE, line_of("amp110-full"))]
    assert "silently becomes inf" in m.findings[0].message


@pytest.mark.parametrize("dtype", [FP16, BF16])
def test_amp110_silent_on_dtype_aware_fills(dtype):
    proj = nn.Linear(8, 24)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=dtype):
            for fill in (float("-inf"), -1e4, torch.finfo(dtype).min):
                attention(torch.randn(2, 5, 8), proj, fill)
        attention(torch.randn(2, 5, 8), proj, -1e9)  # fp32: fits
    assert m.findings == []


# -- overflow locator ----------------------------------------------------------------------------
class Blowup(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        with torch.no_grad():
            self.fc2.weight.mul_(1e4)

    def forward(self, x):
        h = torch.relu(self.fc1(x)) * 100
        return self.fc2(h)  # overflow-line


def test_overflow_locator_points_at_first_overflowing_op():
    model = Blowup()
    x = torch.randn(16, 8)
    with ar.monitor(overflow=True) as m:
        with torch.autocast("cpu", dtype=FP16):
            out = model(x)
        loss = out.float().sum()
    assert torch.isinf(out).any() and not torch.isfinite(loss)
    [f] = m.findings
    assert (f.code, os.path.basename(f.filename), f.line) == ("OVERFLOW", HERE, line_of("overflow-line"))
    assert f.extra["op"] in ("aten.addmm", "aten.mm", "aten.linear") and f.extra["module"] == "Linear"
    assert f.extra["dtype"] == "float16"


def test_overflow_locator_quotes_the_range_of_the_output_dtype():
    """A bfloat16 overflow names bfloat16's range (float32's), never float16's 65504."""
    a = torch.full((4, 4), 1e20)
    with ar.monitor(overflow=True) as m:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = a @ a  # bf16-overflow-line
    assert torch.isinf(out).any()
    [f] = m.findings
    assert f.code == "OVERFLOW" and f.extra["dtype"] == "bfloat16"
    assert "bfloat16 overflows past" in f.message and "65504" not in f.message


def test_overflow_locator_off_by_default_and_silent_on_inf_masks():
    model, x = Blowup(), torch.randn(16, 8)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            model(x)
    assert m.findings == []
    with ar.monitor(overflow=True) as m:
        with torch.autocast("cpu", dtype=FP16):
            attention(torch.randn(2, 5, 8), nn.Linear(8, 24), float("-inf"))
    assert m.findings == []


# -- the correct recipes -------------------------------------------------------------------------
def test_silent_on_the_fp16_grad_scaler_recipe_with_clipping():
    model, (x, y) = mlp(), batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    with ar.monitor(overflow=True) as m:
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=FP16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
    assert m.findings == []


def test_silent_on_bf16_recipe_with_attention_and_bce_with_logits():
    torch.manual_seed(0)
    proj, head = nn.Linear(8, 24), nn.Linear(8, 1)
    opt = torch.optim.AdamW([*proj.parameters(), *head.parameters()], lr=1e-3)
    x, y = torch.randn(2, 5, 8), torch.rand(2, 5, 1)
    with ar.monitor(overflow=True) as m:
        for _ in range(2):
            with torch.autocast("cpu", dtype=BF16):
                q, k, v = proj(x).chunk(3, dim=-1)
                scores = (q @ k.transpose(-1, -2)).masked_fill(
                    torch.ones(5, 5, dtype=torch.bool).triu(1), torch.finfo(q.dtype).min)
                h = torch.softmax(scores, -1) @ v
                loss = F.binary_cross_entropy_with_logits(head(h), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
    assert m.findings == []


# -- modes, decorator, selection, fixture ---------------------------------------------------------
def test_warn_mode_warns_at_user_line():
    model, (x, y) = mlp(), batch()
    with pytest.warns(ar.AmpHazardWarning) as record:
        with ar.monitor(mode="warn"):
            with torch.autocast("cpu", dtype=BF16):
                F.mse_loss(model(x).float(), y).backward()  # warn-line
    [w] = record.list
    assert os.path.basename(w.filename) == HERE and w.lineno == line_of("warn-line")
    assert str(w.message).startswith("AMP104")


def test_raise_mode_raises_before_the_op():
    model, (x, y) = mlp(), batch()
    with pytest.raises(ar.AmpHazardError) as info:
        with ar.monitor(mode="raise"):
            with torch.autocast("cpu", dtype=BF16):
                F.mse_loss(model(x).float(), y).backward()
    assert info.value.finding.code == "AMP104"
    assert all(p.grad is None for p in model.parameters())  # backward never ran


def test_decorator_and_check_selection():
    mon = ar.monitor(checks=["AMP102"], stand_in_for_cuda=True)
    model, (x, y) = mlp(), batch()

    @mon
    def step():
        with torch.autocast("cpu", dtype=BF16):
            F.mse_loss(model(x).float(), y).backward()
            F.binary_cross_entropy(torch.sigmoid(model(x)[:, :1]), y[:, :1].sigmoid())  # deco-bce

    step()
    step()
    assert where(mon.findings, "AMP102") == [(HERE, line_of("deco-bce"))]
    assert mon.codes == ["AMP102"] and mon.findings[0].extra["count"] == 2
    with pytest.raises(ValueError):
        ar.monitor(checks=["AMP999"])
    with pytest.raises(ValueError):
        ar.monitor(mode="loud")


def test_monitor_leaves_no_hooks_or_modes_behind():
    from torch.nn.modules import module as M
    from torch.overrides import _get_current_function_mode_stack

    before = (len(M._global_forward_pre_hooks), len(M._global_forward_hooks),
              len(_get_current_function_mode_stack()))
    with pytest.raises(RuntimeError):
        with ar.monitor(overflow=True):
            raise RuntimeError("boom")
    with ar.monitor(), ar.monitor():
        mlp()(torch.randn(2, 8))
    after = (len(M._global_forward_pre_hooks), len(M._global_forward_hooks),
             len(_get_current_function_mode_stack()))
    assert before == after


def test_pytest_fixture_records(amp_monitor):
    model, (x, y) = mlp(), batch()
    with torch.autocast("cpu", dtype=BF16):
        F.mse_loss(model(x).float(), y).backward()  # fixture-line
    assert where(amp_monitor.findings, "AMP104") == [(HERE, line_of("fixture-line"))]
    with pytest.raises(AssertionError, match="AMP104"):
        amp_monitor.assert_clean()
    amp_monitor.clear()
    amp_monitor.assert_clean()


def test_overflow_locator_reads_back_once_per_block(monkeypatch):
    from amplint.runtime import overflow

    model, x = Blowup(), torch.randn(16, 8)
    reads = []
    for name in ("__bool__", "item", "tolist"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name,
                            lambda self, *a, _o=original, _n=name: (reads.append(_n), _o(self, *a))[1])
    with ar.monitor(overflow=True) as m:
        with torch.autocast("cpu", dtype=FP16):
            for _ in range(3):
                out = model(x)  # batched-line
    monkeypatch.undo()
    # no read per op: one batched read at the end of the block (the monitor's function mode sees
    # the patched tolist as a torch function too, hence possibly twice)
    assert reads and set(reads) == {"tolist"}
    assert m.overflow_mode.syncs == 1
    assert where(m.findings, "OVERFLOW") == [(HERE, line_of("overflow-line"))]
    assert m.findings[0].extra["nonfinite"] == int((~torch.isfinite(out)).sum())

    monkeypatch.setattr(overflow, "BATCH", 4)  # a long block reads back every BATCH records
    with ar.monitor(overflow=True) as m:
        with torch.autocast("cpu", dtype=FP16):
            h = torch.randn(4, 4)
            for _ in range(10):
                h = torch.tanh(h @ h)
    assert m.findings == [] and m.overflow_mode.syncs >= 3


def test_overflow_raise_mode_raises_at_the_op():
    model, x = Blowup(), torch.randn(16, 8)
    with pytest.raises(ar.AmpHazardError) as info:
        with ar.monitor(mode="raise", checks=[], overflow=True):
            with torch.autocast("cpu", dtype=FP16):
                model(x)
    assert info.value.finding.code == "OVERFLOW" and info.value.finding.line == line_of("overflow-line")


def test_a_module_with_none_parameters_is_watched_without_error():
    """nn.MultiheadAttention registers None parameters (bias_k, bias_v, in_proj_weight...)."""
    attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 3, 8)
    with ar.monitor() as m, torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = attn(x, x, x)
    assert out.shape == (2, 3, 8) and m.findings == []
