"""``verify --entry``: amplint's fixes verified on a small multi-file project (a training step and
a models package), for the real ``amplint --fix`` and for planted wrong fixes."""

import json

import pytest

torch = pytest.importorskip("torch")

from amplint.runtime.__main__ import main  # noqa: E402
from amplint.runtime.entry import amplint_fix, parse_entry, verify_entry  # noqa: E402

PROJECT = {
    "models/__init__.py": "from .attention import TinyAttention\n",
    "models/attention.py": '''import torch
from torch import nn


class TinyAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, 4)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
        return self.out(torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v)
''',
    "train.py": '''import torch
import torch.nn.functional as F


def train_step(model, x, mask, keep, target, device, dtype):
    with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
        out = model(x, mask)
        picked = torch.zeros(out.shape, device=out.device)
        picked[keep] = out[keep]
        loss = F.mse_loss(picked.float(), target)
        loss.backward()
    return loss
''',
    "smoke.py": '''import torch

from models import TinyAttention
from train import train_step


def step(device, dtype):
    torch.manual_seed(0)
    model = TinyAttention().to(device)
    x = torch.randn(2, 5, 8, device=device)
    mask = torch.ones(5, 5, device=device).triu(1).bool()
    keep = torch.tensor([[True, False, True, True, False]] * 2, device=device)
    target = torch.randn(2, 5, 4, device=device)
    loss = train_step(model, x, mask, keep, target, device, dtype)
    return {"loss": loss, **{f"grad.{n}": p.grad for n, p in model.named_parameters()}}
''',
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    for rel, text in PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_good_fix_passes_and_the_project_is_untouched(project, capsys):
    assert main(["verify", "--entry", f"{project / 'smoke.py'}::step"]) == 0
    out = capsys.readouterr().out
    assert "amplint found 2 finding(s), --fix changed 1 file(s)" in out
    assert "AMP101 train.py:8 (safe)" in out and "AMP104 train.py:11 (safe)" in out
    if not torch.cuda.is_available():  # the default: CUDA autocast emulated on CPU
        assert "PASS" in out and "[AMP101/AMP104] on cuda-emulated" in out
        assert "CUDA autocast was emulated on CPU" in out
    assert "Index put requires the source and destination dtypes match" in out  # the real hazard
    for rel, text in PROJECT.items():
        assert (project / rel).read_text() == text


def _planted(old, new):
    def fixer(root):
        findings = amplint_fix(root)
        path = root / "train.py"
        text = path.read_text()
        assert old in text, text
        path.write_text(text.replace(old, new))
        return findings
    return fixer


def test_planted_wrong_fix_that_changes_the_meaning_fails(project):
    fixer = _planted("picked[keep] = out[keep]", "picked[keep] = torch.sigmoid(out[keep])")
    outcome = verify_entry(f"{project / 'smoke.py'}::step", fixer=fixer)
    assert outcome.status == "FAIL", outcome.summary()
    assert any("computes something else than the before" in p for p in outcome.result.problems)


def test_planted_wrong_fix_under_autocast_only_fails(project):
    fixer = _planted("loss = F.mse_loss(picked.float(), target)",
                     "loss = F.mse_loss(picked.float(), target) * (1.5 if dtype else 1.0)")
    outcome = verify_entry(f"{project / 'smoke.py'}::step", fixer=fixer)
    assert outcome.status == "FAIL", outcome.summary()
    assert all(c.ok for c in outcome.result.fp32_before_vs_after)
    assert any("leaves the noise tolerance of the fp32 reference" in p and "loss" in p
               for p in outcome.result.problems)


def test_before_and_after_never_share_modules(project):
    # a planted change inside the models package (imported by the entry) is seen by the after only
    def fixer(root):
        findings = amplint_fix(root)
        path = root / "models" / "attention.py"
        path.write_text(path.read_text().replace("q.shape[-1] ** 0.5", "q.shape[-1] ** 0.25"))
        return findings

    outcome = verify_entry(f"{project / 'smoke.py'}::step", fixer=fixer, dtypes=[torch.bfloat16])
    assert outcome.status == "FAIL" and "models/attention.py" in outcome.changed
    assert not all(c.ok for c in outcome.result.fp32_before_vs_after)


def test_nothing_to_fix_and_usage_errors(project, capsys):
    (project / "train.py").write_text(PROJECT["train.py"].replace(
        "torch.zeros(out.shape, device=out.device)", "out.new_zeros(out.shape)").replace(
        "        loss.backward()\n", "    loss.backward()\n"))
    assert main(["verify", "--entry", f"{project / 'smoke.py'}::step", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "SKIP" and doc["changed"] == [] and doc["findings"] == []
    assert any("nothing to verify" in n for n in doc["notes"])
    assert main(["verify", "--entry", "smoke.py"]) == 2
    assert main(["verify", "--entry", f"{project / 'missing.py'}::step"]) == 2
    with pytest.raises(ValueError):
        parse_entry("a.py::not an identifier")


def test_module_output_through_a_shape_op_is_found_and_passes(project, capsys):
    """The README's walkthrough as a user writes it (issue 33): the module's output reaches the
    buffer through `.squeeze(-1)`; the linter used to miss AMP101 there and verify said ERROR."""
    train = project / "train.py"
    train.write_text(train.read_text().replace("out = model(x, mask)\n",
                                               "out = model(x, mask).squeeze(-1)\n"))
    assert main(["verify", "--entry", f"{project / 'smoke.py'}::step"]) == 0
    out = capsys.readouterr().out
    assert "AMP101 train.py:8 (safe)" in out and "AMP104 train.py:11 (safe)" in out
    assert "PASS" in out and "[AMP101/AMP104]" in out
