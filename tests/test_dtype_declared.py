"""Declared library code: the floating tensor parameters of functions under `autocast-modules`
may carry the region's dtype (RULES.md "Dtype of values"), so a loss library declared AMP-safe
gets its findings.

The project (tests/projects/declared_mmdet_losses) is laid out like open-mmlab/mmdetection 3.x
`mmdet/models/losses/`: `gaussian_focal_loss.py` is mmdet's CornerNet/CenterNet loss, with its
`eps = 1e-12` added to the predicted heatmap; `quality_targets.py` writes predictions into a
`torch.zeros` buffer (a GFL-style soft label); `utils.py` is mmdet's `weight_reduce_loss` /
`weighted_loss`. Nothing in the project opens an autocast region: only the declaration does."""

from __future__ import annotations

import os

import libcst as cst
import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.facts import FileFacts
from amplint.analysis.project import build, lint_project

from project_files import PROJECTS, load  # noqa: E402

SETTINGS = Settings.default()
NAME = "declared_mmdet_losses"
LOSSES = f"{NAME}/mmdet/models/losses/"
# the clean twin: an eps float16 holds, and a buffer made from the prediction itself
TWIN = (
    ("eps = 1e-12", "eps = 1e-6"),
    ("logits = pred.flatten(1)", "logits = pred.flatten(1)\n    logits = logits - logits.amax(1, keepdim=True)"),
    ("torch.zeros(pred.shape[0], device=pred.device)", "pred.new_zeros(pred.shape[0])"),
)


def declared(device="cuda", dtype="float16"):
    return (["mmdet/models/losses/**"], device, dtype, os.path.join(PROJECTS, NAME))


def findings(results):
    return sorted(
        (path, d.line, d.code) for path, result in results.items() for d in result.diagnostics
    )


@pytest.fixture(autouse=True)
def _cwd(monkeypatch):
    monkeypatch.chdir(PROJECTS)  # the globs are relative to the project folder


def test_declared_loss_library_gets_its_findings():
    results = lint_project(load(NAME), SETTINGS, declared=declared())
    assert findings(results) == [
        (LOSSES + "gaussian_focal_loss.py", 12, "AMP140"),  # -(pred + eps).log()
        (LOSSES + "gaussian_focal_loss.py", 13, "AMP140"),  # -(1 - pred + eps).log()
        (LOSSES + "quality_targets.py", 7, "AMP101"),  # scores[pos_inds] = pred[...]
    ]
    eps = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP140"]
    assert "may be float16" in eps[0]
    assert 'autocast-modules = ["mmdet/models/losses/**"]' in eps[0]


def test_clean_twin_is_silent():
    assert findings(lint_project(load(NAME, TWIN), SETTINGS, declared=declared())) == []


def test_without_the_declaration_nothing_is_reported():
    assert findings(lint_project(load(NAME), SETTINGS)) == []


def test_bfloat16_declaration_holds_the_eps():
    results = lint_project(load(NAME), SETTINGS, declared=declared("cpu", "bfloat16"))
    assert [f for f in findings(results) if f[2] == "AMP140"] == []


def test_cpu_float16_declaration_reports_the_softmax_of_declared_inputs():
    """CPU float16 autocast runs `exp` in float16 (CUDA runs it in float32, so the CUDA
    declaration above stays silent on it): AMP141 reports the hand-written softmax of a
    declared input as "may be float16"; the max-subtracted twin stays silent."""
    results = lint_project(load(NAME), SETTINGS, declared=declared("cpu", "float16"))
    found = [d for r in results.values() for d in r.diagnostics if d.code == "AMP141"]
    assert [(d.line, d.code) for d in found] == [(11, "AMP141")]
    assert "may be float16" in found[0].message and "autocast-modules = [" in found[0].message
    twin = lint_project(load(NAME, TWIN), SETTINGS, declared=declared("cpu", "float16"))
    assert [d for r in twin.values() for d in r.diagnostics if d.code == "AMP141"] == []


def _facts(files, path):
    project = build(files, declared=declared())
    return FileFacts(cst.parse_module(files[path]), tuple(project.entries_for(path)))


def test_parameters_carry_the_region_dtype_or_float32():
    files = load(NAME)
    path = LOSSES + "gaussian_focal_loss.py"
    facts = _facts(files, path)
    seen = {}

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            value = facts.dtypes.dtype(node)
            if value is not None:
                seen.setdefault(node.value, value)

    facts.module.visit(Names())
    # parameters without a default: the region's float16 or float32, if floating tensors
    assert seen["pred"].options == {"float16", "float32"} and seen["pred"].conditional
    assert seen["gaussian_target"].options == {"float16", "float32"}
    # parameters with a literal default are numbers, not seeded; a local literal stays a number
    assert "alpha" not in seen and seen["eps"].options == {"pyfloat"}
    # `self` of a declared method is not a tensor
    assert "self" not in seen


def test_undeclared_functions_keep_unknown_parameters():
    files = load(NAME)
    path = LOSSES + "gaussian_focal_loss.py"
    facts = FileFacts(cst.parse_module(files[path]))
    names = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            if node.value == "pred" and facts.dtypes.dtype(node) is not None:
                names.append(node)

    facts.module.visit(Names())
    assert names == []


def test_cli_reads_the_declaration_from_pyproject(tmp_path):
    """End to end: the project copied out with a `[tool.amplint] autocast-modules` table, linted
    by the command line as a user runs it."""
    import json
    import subprocess
    import sys

    for path, text in load(NAME).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    root = tmp_path / NAME
    (root / "pyproject.toml").write_text(
        '[tool.amplint]\nautocast-modules = ["mmdet/models/losses/**"]\n', encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    run = subprocess.run(
        [sys.executable, "-m", "amplint", ".", "--output-format", "json", "--no-cache",
         "--exit-zero"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    found = sorted((d["filename"].replace(os.sep, "/").split("losses/")[-1], d["line"], d["code"])
                   for d in json.loads(run.stdout))
    assert found == [("gaussian_focal_loss.py", 12, "AMP140"), ("gaussian_focal_loss.py", 13, "AMP140"),
                     ("quality_targets.py", 7, "AMP101")], run.stderr
