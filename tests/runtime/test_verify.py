"""The verifier on its own small before/after pairs (one per tier-1 hazard the monitor knows),
written into tmp dirs, through the Python API and the ``verify`` command."""

import json

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402
from amplint.runtime.__main__ import main  # noqa: E402
from amplint.runtime.fixtures import discover, verify_fixture_pair  # noqa: E402
from rt_pairs import COMMON, PAIRS, write_pair  # noqa: E402

FP16, BF16 = torch.float16, torch.bfloat16


@pytest.mark.parametrize("code", sorted(PAIRS))
def test_each_pair_verifies(tmp_path, code):
    write_pair(tmp_path, code)
    [case] = discover(tmp_path)
    assert case.runnable and case.code == code
    result = verify_fixture_pair(case)
    assert result.verified, result.summary()
    assert result.device == "cpu" and [r.dtype for r in result.dtypes] == [FP16, BF16]
    fp16 = result.dtypes[0]
    assert fp16.hazard and code in fp16.before.codes  # the before shows its own code in fp16
    for r in result.dtypes:
        assert r.after.clean and all(c.ok for c in r.after_vs_reference)
        assert r.after_vs_reference and all(c.max_abs < 0.05 for c in r.after_vs_reference)
    assert any("CUDA kernels were not run" in s for s in result.skipped)
    if code == "AMP102":
        assert any("only under CUDA autocast" in s for s in result.skipped)
    if code == "AMP110":  # float16-only hazard: bfloat16 holds -1e9
        assert result.dtypes[1].hazard is None and result.dtypes[1].before.clean


def test_before_raise_is_reported_with_its_error(tmp_path):
    write_pair(tmp_path, "AMP110")
    result = verify_fixture_pair(discover(tmp_path)[0], dtypes=[FP16])
    assert "without overflow" in result.dtypes[0].before.error
    assert "AMP110" in result.summary() and "PASS" in result.summary()


def _runner(source, name="amplint_run"):
    namespace = {}
    exec(compile(COMMON + source, "<pair>", "exec"), namespace)
    return namespace[name]


def test_after_that_keeps_the_hazard_fails():
    before, _, run = PAIRS["AMP104"]
    fn = _runner(before + run)
    result = ar.verify(fn, fn, code="AMP104", dtypes=[BF16])
    assert not result.verified
    assert any("the after is not clean" in p and "AMP104" in p for p in result.problems)


def test_after_with_wrong_numbers_fails():
    _, after, run = PAIRS["AMP104"]
    good = _runner(after + run)

    def drifted(device, dtype):
        out = good(device, dtype)
        if dtype is not None:
            out["loss"] = out["loss"] * 1.2
        return out

    result = ar.verify(_runner(PAIRS["AMP104"][0] + run), drifted, code="AMP104", dtypes=[FP16])
    assert not result.verified
    assert any("leaves the tolerance" in p and "loss" in p for p in result.problems)
    [loss] = [c for c in result.dtypes[0].after_vs_reference if c.name == "loss"]
    assert 0.15 < loss.max_rel < 0.25


def test_before_without_hazard_fails_unless_not_required():
    _, after, run = PAIRS["AMP104"]
    fn = _runner(after + run)
    result = ar.verify(fn, fn, code="AMP104", dtypes=[BF16])
    assert not result.verified and "shows its hazard AMP104 in no dtype" in result.problems[-1]
    assert ar.verify(fn, fn, dtypes=[BF16], require_hazard=False).verified


def test_silent_wrong_numbers_count_as_the_hazard():
    _, after, run = PAIRS["AMP104"]
    good = _runner(after + run)

    def lossy(device, dtype):  # e.g. clipping that never fires: no error, no finding, off numbers
        out = good(device, dtype)
        if dtype is not None:
            out = {k: v * 2 for k, v in out.items()}
        return out

    result = ar.verify(lossy, good, code="AMP120", dtypes=[FP16])
    assert result.verified and result.dtypes[0].hazard.startswith("silent wrong numbers")


def test_modules_with_inputs():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = torch.randn(8, 8)
    half = nn.Sequential(*[m for m in __import__("copy").deepcopy(model)]).half()
    result = ar.verify(half, model, inputs=(x,), code="AMP103")
    assert result.verified, result.summary()
    assert all("AMP103" in r.before.codes for r in result.dtypes)
    assert {"output", "loss", "grad.0.weight", "grad.2.bias"} <= set(result.reference.outputs)


def test_clean_case(tmp_path):
    (tmp_path / "clean").mkdir()
    _, after, run = PAIRS["AMP101"]
    (tmp_path / "clean" / "scatter.py").write_text(COMMON + after + run)
    [case] = discover(tmp_path)
    assert case.before is None and case.runnable
    result = verify_fixture_pair(case)
    assert result.verified and all(r.before is None for r in result.dtypes)


def test_command(tmp_path, capsys):
    for code in ("AMP102", "AMP104"):
        write_pair(tmp_path, code)
    lint_only = tmp_path / "AMP130"
    lint_only.mkdir()
    (lint_only / "old_api.py").write_text("import torch\nctx = torch.cuda.amp.autocast()\n")
    (lint_only / "old_api.fixed.py").write_text("import torch\nctx = torch.amp.autocast('cuda')\n")

    assert main(["verify", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS AMP102/case [AMP102] on cpu" in out and "PASS AMP104/case" in out
    assert "SKIP AMP130/old_api: not runnable (no amplint_run() in old_api.py, old_api.fixed.py)" in out
    assert "2 verified, 0 failed, 1 not runnable" in out

    assert main(["verify", str(tmp_path / "AMP104"), "--dtype", "bf16", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] == 1 and doc["dtypes"] == ["bfloat16"]
    assert doc["results"][0]["dtypes"][0]["before"]["codes"] == ["AMP104"]

    bad = tmp_path / "AMP104" / "case.fixed.py"
    bad.write_text(bad.read_text().replace("    loss.backward()\n    return loss",
                                           "        loss.backward()\n    return loss"))
    assert main(["verify", str(tmp_path / "AMP104")]) == 1
    assert "FAIL AMP104/case" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "missing")]) == 2
