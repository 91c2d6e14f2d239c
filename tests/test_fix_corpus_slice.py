"""The whole-corpus fix run (benchmarks/fix_corpus.py) on a small deterministic slice of real
PyTorch code, with hazards injected into it: zero crashes, zero broken, zero non-idempotent
files, and every change inside the fixes' region (issue 7).

The slice is read from the installed packages (found with importlib.util.find_spec, never
imported) and copied into a temporary folder: torch's files from the installed torch, the others
from the exact wheels below, installed without their dependencies (reading source needs none).
The files were picked for AMP code (autocast and GradScaler implementations and users,
deprecated `torch.cuda.amp` APIs, FSDP's sharded scaler, half precision plugins) and real
findings: AMP103 (unsafe fix) in `torch/testing/_internal/common_fsdp.py`, AMP132 in
`timm/utils/cuda.py`; `transformers/models/falcon/modeling_falcon.py` once crashed AMP141."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# package -> (pinned version, install command, files by path inside the package)
PACKAGES = {
    "torch": ("2.13.0", "pip install torch==2.13.0", (
        "amp/autocast_mode.py",
        "amp/grad_scaler.py",
        "cpu/amp/autocast_mode.py",
        "cuda/amp/autocast_mode.py",
        "distributed/fsdp/sharded_grad_scaler.py",
        "testing/_internal/common_fsdp.py",
    )),
    "timm": ("1.0.31", "pip install --no-deps timm==1.0.31", (
        "layers/fast_norm.py",
        "utils/agc.py",
        "utils/cuda.py",
    )),
    "lightning": ("2.6.6", "pip install --no-deps lightning==2.6.6", (
        "fabric/plugins/precision/amp.py",
        "fabric/plugins/precision/half.py",
        "pytorch/plugins/precision/amp.py",
    )),
    "transformers": ("5.23.0", "pip install --no-deps transformers==5.23.0", (
        "models/falcon/modeling_falcon.py",
        "models/gptj/modeling_gptj.py",
        "models/llama/modeling_llama.py",
    )),
}


def installed_file(package: str, relative: str) -> str:
    """The path of one file of an installed package, found without importing the package
    (find_spec of a top-level name imports nothing); a skip that names the install command when
    the package, its pinned version or the file is missing."""
    version, install, _ = PACKAGES[package]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed: {install}")
    found = importlib.metadata.version(package).split("+")[0]
    if found != version:
        pytest.skip(f"the slice is pinned to {package}=={version}, found {found}: {install}")
    path = os.path.join(list(spec.submodule_search_locations)[0], *relative.split("/"))
    if not os.path.isfile(path):
        pytest.skip(f"{package} {found} has no {relative}: {install}")
    return path


def slice_files():
    """(installed path, `package/relative` path) of every file of the slice, in a fixed order."""
    return [(installed_file(package, rel), f"{package}/{rel}")
            for package, (_, _, files) in PACKAGES.items() for rel in files]


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


def _digest(paths):
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            h.update(path.encode() + handle.read())
    return h.hexdigest()


@pytest.fixture(scope="module")
def corpus_slice(tmp_path_factory):
    """A folder with a copy of the slice, laid out as `package/relative/path.py`. Its name is
    fixed: the injected hazards' places depend on the paths."""
    folder = tmp_path_factory.mktemp("slice_source") / "corpus_slice"
    for original, relative in slice_files():
        target = folder.joinpath(*relative.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(original, target)
    return str(folder)


@pytest.fixture(scope="module")
def slice_report(tmp_path_factory, corpus_slice):
    originals = [path for path, _ in slice_files()] + [
        os.path.join(d, f) for d, _, fs in sorted(os.walk(corpus_slice)) for f in sorted(fs)]
    before = _digest(originals)
    report = tool.run([corpus_slice], str(tmp_path_factory.mktemp("slice")), jobs=1, plant=True)
    assert _digest(originals) == before, "the tool must never touch the originals"
    return report


def test_slice_is_small():
    """The slice stays small enough for the test to take seconds."""
    size = sum(os.path.getsize(path) for path, _ in slice_files())
    assert size < 300_000


@pytest.mark.slow
def test_slice_fix_run_is_clean(slice_report):
    report = slice_report
    assert report.crashes == []
    for kind in report.GATES:
        assert report.count(kind) == 0, report.summary()
    assert report.problems.get("checker-error") is None, report.summary()
    assert report.ok


@pytest.mark.slow
def test_slice_fix_run_fixes_things(slice_report):
    """Not vacuous: the slice has real findings and the injected hazards, and they are fixed."""
    report = slice_report
    assert report.files == sum(len(files) for _, _, files in PACKAGES.values())
    assert report.codes["AMP103"] == 2 and report.codes["AMP132"] == 1  # real findings
    assert report.fixes_by_code["AMP103"] >= 1  # the real unsafe fix was applied
    assert report.injected_sites >= 20
    assert report.fixes_by_code["AMP102"] >= 20 and report.fixes_by_code["AMP104"] >= 20
    assert report.changed >= 5
    # left after the fix run: only what has no fix (AMP132's suggestion; AMP101's float factory in
    # `NestedWrappedModule.get_input`, fp16 code of torch's half `MixtureOfExperts`, which inherits it)
    assert report.findings_left == report.findings - report.fixable >= report.codes["AMP132"]


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
    path = installed_file("timm", "layers/fast_norm.py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    planted, sites = tool.inject("timm/layers/fast_norm.py", text)
    assert sites >= 1 and tool.compiles(planted)
    assert tool.inject("timm/layers/fast_norm.py", text) == (planted, sites)  # deterministic
    before = tool.engine_before("fast_norm.py", planted)
    # (sites inside an `autocast(enabled=False)` body are no hazards: fast_norm has those)
    assert 1 <= before.codes["AMP102"] <= sites and 1 <= before.codes["AMP104"] <= sites
    assert before.fixable == before.codes["AMP102"] + before.codes["AMP104"]
