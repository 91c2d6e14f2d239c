"""The project pass: regions that cross files (tests/projects/*), order independence, the
single-file fallback, dependencies, and the cost of the first pass."""

from __future__ import annotations

import os
import random

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project import build, declared_matches, lint_project

from project_files import PROJECTS, load  # noqa: E402,F401


def findings(results):
    return sorted(
        (path, d.line, d.code) for path, result in results.items() for d in result.diagnostics
    )


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


SETTINGS = Settings.default()


def test_loss_module_called_under_autocast_in_another_file():
    results = lint_project(load("crossfile_bce"), SETTINGS)
    assert findings(results) == [("crossfile_bce/losses.py", 14, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert "(called at train.py:19 under the autocast region at train.py:17)" in message
    assert not any(result.errors for result in results.values())


def test_no_region_no_findings():
    files = load("crossfile_bce", [("dtype=torch.float16)", "dtype=torch.float16, enabled=False)")])
    assert findings(lint_project(files, SETTINGS)) == []
    assert build(files).entries_for("crossfile_bce/losses.py") == ()


def test_entries_name_the_functions_and_the_region():
    project = build(load("crossfile_bce"))
    entries = {e.target: e for e in project.entries_for("crossfile_bce/losses.py") if hasattr(e, "target")}
    assert set(entries) == {"FocalLoss.forward", "dice_loss"}
    focal = entries["FocalLoss.forward"]
    assert (focal.enabled, focal.device, focal.dtype) == (Enabled.TRUE, "cuda", "float16")
    assert [e.target for e in project.entries_for("crossfile_bce/model.py") if hasattr(e, "target")] == ["UNet.forward"]
    assert project.entries_for("crossfile_bce/train.py") == ()


def test_backward_in_a_helper_of_another_file():
    results = lint_project(load("backward_helper"), SETTINGS)
    assert findings(results) == [("backward_helper/optim_utils.py", 5, "AMP104")]
    (message,) = messages(results, "AMP104")
    assert "called at train.py:12 under the autocast region at train.py:10" in message


def test_relative_imports_and_reexports():
    results = lint_project(load("relative_pkg"), SETTINGS)
    # soft_bce is reached three ways: SoftBCE.forward (from .losses import), losses.soft_bce
    # outside the region in evaluate (not reported through it), `from seg import soft_bce`.
    assert findings(results) == [("relative_pkg/seg/losses.py", 7, "AMP102")]
    project = build(load("relative_pkg"))
    targets = {e.target: e.cite for e in project.entries_for("relative_pkg/seg/losses.py") if hasattr(e, "target")}
    assert targets["SoftBCE.forward"] == (
        "called at seg/engine.py:17 under the autocast region at seg/engine.py:15"
    )
    assert targets["soft_bce"] == (
        "called at tools_train.py:9 under the autocast region at tools_train.py:8"
    )
    assert project.dependencies("relative_pkg/seg/losses.py") == {
        "relative_pkg/seg/engine.py", "relative_pkg/tools_train.py",
    }


def test_region_on_cpu_stays_cpu():
    files = load("crossfile_bce", [('torch.autocast("cuda", dtype=torch.float16)',
                                    'torch.autocast("cpu", dtype=torch.bfloat16)')])
    # CPU autocast runs BCE in float32: AMP102 stays silent across files as it does in one
    # (the GradScaler next to a bfloat16 region is AMP124's business, in train.py)
    assert [f for f in findings(lint_project(files, SETTINGS)) if f[0] != "crossfile_bce/train.py"] == []
    entry = build(files).entries_for("crossfile_bce/losses.py")[0]
    assert (entry.device, entry.dtype) == ("cpu", "bfloat16")


def test_most_hazardous_region_wins():
    files = load("crossfile_bce")
    files["crossfile_bce/evaluate.py"] = (
        "import torch\n"
        "from losses import FocalLoss\n"
        "def evaluate(model, x, y):\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "        return FocalLoss()(model(x), y)\n"
    )
    entry = {e.target: e for e in build(files).entries_for("crossfile_bce/losses.py") if hasattr(e, "target")}
    assert entry["FocalLoss.forward"].device == "cuda"
    assert findings(lint_project(files, SETTINGS)) == [("crossfile_bce/losses.py", 14, "AMP102")]


@pytest.mark.parametrize("name", [
    "crossfile_bce", "relative_pkg", "lightning_seg", "accelerate_cls", "mmdet_custom_loss",
    "d2_roi_heads", "hf_multilabel",
])
def test_order_of_files_does_not_matter(name):
    files = load(name)
    reference = build(files)
    expected = {path: reference.entries_for(path) for path in files}
    deps = {path: reference.dependencies(path) for path in files}
    paths = list(files)
    for seed in range(4):
        random.Random(seed).shuffle(paths)
        project = build({path: files[path] for path in paths})
        assert {path: project.entries_for(path) for path in files} == expected
        assert {path: project.dependencies(path) for path in files} == deps
    assert any(expected.values())


def test_one_file_alone_falls_back_to_its_own_facts():
    files = load("crossfile_bce")
    alone = {"crossfile_bce/losses.py": files["crossfile_bce/losses.py"]}
    results = lint_project(alone, SETTINGS)
    assert findings(results) == [] and not results["crossfile_bce/losses.py"].errors
    plain = lint_source("crossfile_bce/losses.py", alone["crossfile_bce/losses.py"], SETTINGS)
    assert plain.diagnostics == [] and not plain.errors
    # the caller alone: the callee is not there, nothing to resolve, no crash
    caller = {"crossfile_bce/train.py": files["crossfile_bce/train.py"]}
    assert findings(lint_project(caller, SETTINGS)) == []


def test_syntax_error_in_one_file_does_not_stop_the_others():
    files = load("crossfile_bce")
    files["crossfile_bce/broken.py"] = "import torch\nwith torch.autocast('cuda'):\n    x = (\n"
    results = lint_project(files, SETTINGS)
    assert results["crossfile_bce/broken.py"].errors
    assert findings(results) == [("crossfile_bce/losses.py", 14, "AMP102")]


def test_fix_applies_in_the_callee_file():
    files = load("crossfile_bce")
    results = lint_project(files, SETTINGS, fix=True)
    fixed = results["crossfile_bce/losses.py"].fixed_source
    assert fixed is not None
    # probs is read again, unchanged: the with-logits form (issue 15), not an fp32 island
    assert 'F.binary_cross_entropy_with_logits(logits, target, reduction="none")' in fixed
    assert results["crossfile_bce/losses.py"].diagnostics == []
    files["crossfile_bce/losses.py"] = fixed
    assert findings(lint_project(files, SETTINGS)) == []


def test_dependencies_follow_the_chain():
    files = load("lightning_seg")
    project = build(files)
    assert project.dependencies("lightning_seg/losses.py") == {
        "lightning_seg/main.py", "lightning_seg/model.py",
    }
    assert project.dependencies("lightning_seg/model.py") == {"lightning_seg/main.py"}
    assert project.dependencies("lightning_seg/data.py") == set()


def test_first_pass_parses_only_what_the_text_requires():
    files = load("crossfile_bce")
    for index in range(20):  # unrelated modules of a larger project
        files[f"crossfile_bce/utils_{index}.py"] = (
            "import os\n\ndef helper(path):\n    return os.path.basename(path)\n"
        )
    project = build(files)
    assert project.first_pass == ["crossfile_bce/train.py"]
    # the regions reach losses.py and model.py: summarised on demand, once each
    assert project.parsed == [
        "crossfile_bce/losses.py", "crossfile_bce/model.py", "crossfile_bce/train.py",
    ]


def test_declared_regions(monkeypatch):
    monkeypatch.chdir(PROJECTS)  # the paths are then real paths, relative to the globs' base
    files = load("declared")
    declared = (["pkg/models/**"], "cuda", "float16", os.path.join(PROJECTS, "declared"))
    results = lint_project(files, SETTINGS, declared=declared)
    assert findings(results) == [("declared/pkg/models/heads.py", 15, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert 'declared to run under autocast by autocast-modules = ["pkg/models/**"]' in message
    assert findings(lint_project(files, SETTINGS)) == []
    bf16 = (["pkg/models/**"], "cpu", "bfloat16", os.path.join(PROJECTS, "declared"))
    assert findings(lint_project(files, SETTINGS, declared=bf16)) == []


def test_declared_regions_from_config(monkeypatch):
    monkeypatch.chdir(PROJECTS)

    class Config:
        path = os.path.join(PROJECTS, "declared", "pyproject.toml")
        autocast_modules = ["pkg/models/*.py"]
        autocast_device = None
        autocast_dtype = None

    results = lint_project(load("declared"), SETTINGS, config=Config())
    assert findings(results) == [("declared/pkg/models/heads.py", 15, "AMP102")]


@pytest.mark.parametrize("path,globs,expected", [
    ("pkg/models/heads.py", ["pkg/models/**"], "pkg/models/**"),
    ("pkg/models/a/b.py", ["pkg/models/**"], "pkg/models/**"),
    ("pkg/models/a/b.py", ["pkg/models/*.py"], None),
    ("pkg/models/heads.py", ["pkg/models"], "pkg/models"),
    ("pkg/models/heads.py", ["./pkg/models/"], "./pkg/models/"),
    ("pkg/data/heads.py", ["pkg/models/**"], None),
    ("src/pkg/models/heads.py", ["**/models/*.py"], "**/models/*.py"),
    ("pkg/models/heads.py", ["heads.py"], "heads.py"),
    ("pkg/modelsx/heads.py", ["pkg/models"], None),
])
def test_declared_globs(path, globs, expected, tmp_path):
    assert declared_matches(str(tmp_path / path), globs, str(tmp_path)) == expected
