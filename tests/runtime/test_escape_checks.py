"""AMP105 (a region's half output meets float32 after the region) and AMP111 (another dtype's
finfo bound filled into a half tensor) at run time, on CPU autocast: each found at the user's
line, silent on the correct recipes."""

import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from rt_helpers import line_of, where  # noqa: E402

HERE = os.path.basename(__file__)
FP16, BF16 = torch.float16, torch.bfloat16


# -- AMP105 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [FP16, BF16])
def test_amp105_head_outside_the_region(dtype):
    torch.manual_seed(0)
    backbone, head = nn.Linear(8, 16), nn.Linear(16, 3)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=dtype):
            emb = F.relu(backbone(torch.randn(4, 8)))  # amp105-made
        with pytest.raises(RuntimeError, match="same dtype"):
            head(emb)  # amp105-head
    assert where(m.findings, "AMP105") == [(HERE, line_of("amp105-head"))]
    finding = m.findings[0]
    assert finding.extra["produced_at"].endswith(f"{HERE}:{line_of('amp105-made')}")
    assert "after the region" in finding.message


def test_amp105_mm_and_memory_bank():
    torch.manual_seed(0)
    q, w = torch.randn(4, 8), torch.randn(4, 2)
    bank = torch.zeros(10, 4)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            sim = q @ q.T
        with pytest.raises(RuntimeError):
            torch.mm(sim, w)  # amp105-mm
        with pytest.raises(RuntimeError, match="Index put requires"):
            bank[torch.tensor([1, 3, 5, 7])] = sim.detach()  # amp105-bank
    assert where(m.findings, "AMP105") == [(HERE, line_of("amp105-mm")), (HERE, line_of("amp105-bank"))]
    # the index-put error is not also translated into AMP101: AMP105 saw it first
    assert m.codes == ["AMP105"]


def test_amp105_silent_on_the_correct_recipes():
    torch.manual_seed(0)
    backbone, head = nn.Linear(8, 16), nn.Linear(16, 3)
    bank = torch.zeros(10, 16)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            emb = backbone(torch.randn(4, 8))
            inside = head(emb)  # under autocast: cast for it
        head(emb.float())
        bank[:4] = emb  # basic slicing converts
        bank[torch.tensor([0, 1, 2, 3])] = emb.float()
        (emb * 2).sum()  # promoting ops
        x32 = torch.randn(4, 8)
        head(backbone(x32))  # never in a region
        with torch.autocast("cpu", dtype=FP16):
            head(emb)  # back inside a region
    assert inside.dtype == FP16
    assert m.findings == []


# -- AMP111 --------------------------------------------------------------------------------------
def hardest(embeddings, ref, same):
    mat = embeddings @ ref.T
    pos = mat.masked_fill(~same, torch.finfo(embeddings.dtype).max)  # amp111-fill
    return pos.min(dim=1).values


@pytest.mark.parametrize("dtype", [FP16, BF16])
def test_amp111_metric_learning_miner(dtype):
    embeddings = torch.randn(6, 8)
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    same = labels[:, None] == labels[None, :]
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=dtype), pytest.raises(RuntimeError, match="without overflow"):
            hardest(embeddings, embeddings, same)
    assert where(m.findings, "AMP111") == [(HERE, line_of("amp111-fill"))]
    assert m.codes == ["AMP111"]  # not AMP110 as well
    assert m.findings[0].extra["source"] == "float32"


def test_amp111_silent_on_own_dtype_and_amp110_keeps_literals():
    embeddings = torch.randn(6, 8)
    same = torch.eye(6, dtype=torch.bool)
    with ar.monitor() as m:
        with torch.autocast("cpu", dtype=FP16):
            mat = embeddings @ embeddings.T
            mat.masked_fill(same, torch.finfo(mat.dtype).max)
            mat.clone().fill_diagonal_(torch.finfo(mat.dtype).min)
        embeddings.masked_fill(same[:, :1].expand(6, 8), torch.finfo(embeddings.dtype).max)
    assert m.findings == []
    with ar.monitor() as m:
        with pytest.raises(RuntimeError):
            mat.masked_fill(same, -1e9)  # amp110-literal
    assert m.codes == ["AMP110"]


def test_amp111_only_with_its_check_enabled():
    mat = torch.zeros(3, 3, dtype=FP16)
    with ar.monitor(checks=["AMP110"]) as m:
        with pytest.raises(RuntimeError):
            mat.fill_(torch.finfo(torch.float32).min)
    assert m.codes == ["AMP110"]
