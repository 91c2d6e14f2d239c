"""CUDA-only expectations; skipped cleanly without a GPU."""

import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from amplint.runtime.fixtures import discover, verify_fixture_pair  # noqa: E402
from rt_helpers import line_of, where  # noqa: E402
from rt_pairs import PAIRS, write_pair  # noqa: E402

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
HERE = os.path.basename(__file__)


def test_bce_raises_under_cuda_autocast_and_is_reported():
    net = nn.Linear(8, 1).cuda()
    x, y = torch.randn(4, 8, device="cuda"), torch.rand(4, 1, device="cuda")
    with ar.monitor() as m:
        with torch.autocast("cuda", dtype=torch.float16), pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(torch.sigmoid(net(x)), y)  # cuda-bce
    assert where(m.findings, "AMP102") == [(HERE, line_of("cuda-bce"))]
    assert "raises 'torch.nn.functional.binary_cross_entropy" in m.findings[0].message


def test_grad_scaler_cuda_unscale_fp16_grads():
    model = nn.Linear(8, 4).cuda().half()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    with ar.monitor() as m, pytest.raises(ValueError, match="FP16 gradients"):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.randn(4, 8, device="cuda").half()).float().sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
    assert m.codes == ["AMP103"]


def test_overflow_locator_on_cuda():
    fc = nn.Linear(8, 4).cuda()
    with torch.no_grad():
        fc.weight.mul_(1e5)
    with ar.monitor(overflow=True) as m, torch.autocast("cuda", dtype=torch.float16):
        fc(torch.randn(16, 8, device="cuda") * 100)  # cuda-overflow
    assert where(m.findings, "OVERFLOW") == [(HERE, line_of("cuda-overflow"))]


@pytest.mark.parametrize("code", sorted(PAIRS))
def test_pairs_verify_on_cuda(tmp_path, code):
    write_pair(tmp_path, code)
    result = verify_fixture_pair(discover(tmp_path)[0], device="cuda")
    assert result.verified, result.summary()
    assert not any("CUDA kernels were not run" in s for s in result.skipped)
    if code == "AMP102":  # on CUDA the before really raises
        assert "unsafe to autocast" in (result.dtypes[0].before.error or "")


def test_entry_on_cuda(tmp_path):
    from test_entry import PROJECT

    from amplint.runtime.entry import verify_entry

    for rel, text in PROJECT.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    outcome = verify_entry(f"{tmp_path / 'smoke.py'}::step", device="cuda")
    assert outcome.status == "PASS", outcome.summary()
    assert not outcome.notes  # nothing CUDA could not show


def test_overflow_locator_one_sync_per_block_on_cuda():
    fc = nn.Linear(8, 4).cuda()
    with torch.no_grad():
        fc.weight.mul_(1e5)
    x = torch.randn(16, 8, device="cuda") * 100
    with ar.monitor(overflow=True) as m, torch.autocast("cuda", dtype=torch.float16):
        for _ in range(5):
            fc(x)
    assert m.overflow_mode.syncs == 1 and m.codes == ["OVERFLOW"]


def test_repo_fixture_pairs_on_cuda():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "fixtures"
    from amplint.runtime.fixtures import SkipCase

    results = []
    for case in (c for c in discover(root) if c.runnable):
        try:
            results.append(verify_fixture_pair(case, device="cuda"))
        except SkipCase:
            pass
    failed = [r.summary() for r in results if not r.verified]
    assert not failed, "\n\n".join(failed)
