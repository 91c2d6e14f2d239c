"""The whole-corpus fix run (benchmarks/fix_corpus.py) on a small deterministic slice of real
PyTorch code (tests/data/corpus_slice), with hazards injected into it: zero crashes, zero broken,
zero non-idempotent files, and every change inside the fixes' region (issue 7)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLICE = os.path.join(REPO, "tests", "data", "corpus_slice")


def _load_tool():
    name = "amplint_fix_corpus_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(REPO, "benchmarks", "fix_corpus.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


tool = _load_tool()


def _digest(folder):
    h = hashlib.sha256()
    for directory, dirnames, filenames in sorted(os.walk(folder)):
        dirnames.sort()
        for name in sorted(filenames):
            with open(os.path.join(directory, name), "rb") as handle:
                h.update(name.encode() + handle.read())
    return h.hexdigest()


@pytest.fixture(scope="module")
def slice_report(tmp_path_factory):
    before = _digest(SLICE)
    report = tool.run([SLICE], str(tmp_path_factory.mktemp("slice")), jobs=1, plant=True)
    assert _digest(SLICE) == before, "the tool must never touch the originals"
    return report


def test_slice_is_small():
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(SLICE) for f in fs)
    assert size < 300_000


def test_slice_fix_run_is_clean(slice_report):
    report = slice_report
    assert report.crashes == []
    for kind in report.GATES:
        assert report.count(kind) == 0, report.summary()
    assert report.problems.get("checker-error") is None, report.summary()
    assert report.ok


def test_slice_fix_run_fixes_things(slice_report):
    """Not vacuous: the slice has real findings and the injected hazards, and they are fixed."""
    report = slice_report
    assert report.files == 10
    assert report.codes["AMP103"] == 2 and report.codes["AMP132"] == 1  # real findings
    assert report.fixes_by_code["AMP103"] >= 1  # the real unsafe fix was applied
    assert report.injected_sites >= 20
    assert report.fixes_by_code["AMP102"] >= 20 and report.fixes_by_code["AMP104"] >= 20
    assert report.changed >= 5
    assert report.findings_left == report.codes["AMP132"]  # suggestion-only left


def test_checks_fail_on_a_broken_or_miswritten_file(tmp_path):
    """The per-file checks can fail: a fix that breaks the file, or a writer that drops the
    BOM or converts newlines, is reported."""
    text = ("import torch\nscaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n"
            "    with torch.autocast('cuda'):\n        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n    scaler.step(opt)\n")
    before = tool.engine_before("t.py", text)
    assert before.fixable == 1
    fixed = text + "    scaler.update()\n"
    good = tool.check_changed("t.py", text.encode(), fixed.encode(), before)
    assert good.problems == {} and good.fixes["AMP121"] == 1
    broken = tool.check_changed("t.py", text.encode(), (fixed + "    )\n").encode(), before)
    assert "broken" in broken.problems
    crlf = tool.check_changed("t.py", text.encode(), fixed.replace("\n", "\r\n").encode(), before)
    assert "mismatch" in crlf.problems
    bom = tool.check_changed("t.py", b"\xef\xbb\xbf" + text.encode(), fixed.encode(), before)
    assert "mismatch" in bom.problems
    again = tool.check_changed("t.py", text.encode(), text.replace("    scaler.step(opt)\n", "")
                               .encode(), before)
    assert "mismatch" in again.problems and "fixable-left" not in again.problems


def test_injection_plants_fixable_hazards_in_real_code():
    path = os.path.join(SLICE, "timm", "layers", "fast_norm.py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    planted, sites = tool.inject("timm/layers/fast_norm.py", text)
    assert sites >= 1 and tool.compiles(planted)
    assert tool.inject("timm/layers/fast_norm.py", text) == (planted, sites)  # deterministic
    before = tool.engine_before("fast_norm.py", planted)
    # (sites inside an `autocast(enabled=False)` body are no hazards: fast_norm has those)
    assert 1 <= before.codes["AMP102"] <= sites and 1 <= before.codes["AMP104"] <= sites
    assert before.fixable == before.codes["AMP102"] + before.codes["AMP104"]
