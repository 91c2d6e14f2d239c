"""The run over many files: cache, process pool and the project pass, through the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli

TRAIN = (
    "import torch\n"
    "from losses import FocalLoss\n"
    "crit = FocalLoss()\n"
    "def step(model, x, y):\n"
    "    with torch.autocast('cuda'):\n"
    "        loss = crit(model(x), y)\n"
    "    return loss\n"
)
LOSSES = (
    "import torch.nn.functional as F\n"
    "class FocalLoss:\n"
    "    def __call__(self, p, y):\n"
    "        return F.binary_cross_entropy(p, y)\n"
)
HAZARD = (
    "import torch\n"
    "def step(model, x):\n"
    "    with torch.autocast('cuda'):\n"
    "        loss = model(x)\n"
    "        loss.backward()\n"
)


def invoke(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(old)


def findings(result):
    return [(d["filename"], d["line"], d["code"]) for d in json.loads(result.stdout)]


def test_cross_file_region_is_found_only_when_the_project_is_linted(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "losses.py").write_text(LOSSES)
    whole = invoke("--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert findings(whole) == [("losses.py", 4, "AMP102")]
    message = json.loads(whole.stdout)[0]["message"]
    assert "train.py:6" in message and "train.py:5" in message
    alone = invoke("--no-cache", "--isolated-files", "--output-format", "json", ".", cwd=tmp_path)
    assert findings(alone) == []


def test_declared_autocast_modules_from_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.amplint]\nautocast-modules = ["models/**"]\n'
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "head.py").write_text(
        "import torch\ndef run(loss):\n    loss.backward()\n"
    )
    (tmp_path / "other.py").write_text("import torch\ndef run(loss):\n    loss.backward()\n")
    result = invoke("--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert findings(result) == [("models/head.py", 3, "AMP104")]


def test_bad_declared_region_config_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nautocast-dtype = "int8"\n')
    (tmp_path / "a.py").write_text(HAZARD)
    result = invoke(".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "autocast-dtype" in result.output and "pyproject.toml" in result.output


def test_warm_cache_gives_the_same_report_and_follows_edits(tmp_path):
    for i in range(12):
        (tmp_path / f"m{i:02d}.py").write_text(HAZARD if i % 3 == 0 else "import torch\nx = 1\n")
    cache = tmp_path.parent / (tmp_path.name + "-cache")
    cold = invoke("--cache-dir", str(cache), "--output-format", "json", ".", cwd=tmp_path)
    assert cache.is_dir() and any(cache.rglob("*.json"))
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    warm = invoke("--cache-dir", str(cache), "--output-format", "json", ".", cwd=tmp_path)
    assert warm.stdout == cold.stdout and warm.exit_code == cold.exit_code == 1
    # an edit invalidates that file's entry: its finding goes, the others stay
    (tmp_path / "m00.py").write_text("import torch\nx = 2\n")
    edited = invoke("--cache-dir", str(cache), "--output-format", "json", ".", cwd=tmp_path)
    assert [f for f, _, _ in findings(edited)] == ["m03.py", "m06.py", "m09.py"]


def test_cache_does_not_stop_fix(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    cache = tmp_path.parent / (tmp_path.name + "-cache")
    invoke("--cache-dir", str(cache), ".", cwd=tmp_path)  # fills the cache
    invoke("--cache-dir", str(cache), "--fix", ".", cwd=tmp_path)
    assert "    loss.backward()" in (tmp_path / "a.py").read_text()
    assert "        loss.backward()" not in (tmp_path / "a.py").read_text()


def test_a_project_change_elsewhere_invalidates_the_cached_result(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN.replace("with torch.autocast('cuda'):", "if True:"))
    (tmp_path / "losses.py").write_text(LOSSES)
    cache = tmp_path.parent / (tmp_path.name + "-cache")
    first = invoke("--cache-dir", str(cache), "--output-format", "json", ".", cwd=tmp_path)
    assert findings(first) == []
    (tmp_path / "train.py").write_text(TRAIN)
    second = invoke("--cache-dir", str(cache), "--output-format", "json", ".", cwd=tmp_path)
    assert findings(second) == [("losses.py", 4, "AMP102")]


@pytest.mark.slow
def test_process_pool_output_matches_one_process(tmp_path):
    for i in range(40):
        body = HAZARD if i % 2 else TRAIN.replace("losses", f"losses{i}")
        (tmp_path / f"f{i:02d}.py").write_text(body)
    one = invoke("--no-cache", "--jobs", "1", ".", cwd=tmp_path)
    many = invoke("--no-cache", "--jobs", "2", ".", cwd=tmp_path)
    assert one.stdout == many.stdout
    assert one.stdout.count("AMP104") == 20


PROJECTS = Path(__file__).parent / "projects"


def _copy_projects(tmp_path: Path, names) -> Path:
    import shutil

    root = tmp_path / "tree"
    for name in names:
        shutil.copytree(PROJECTS / name, root / name)
    return root


@pytest.mark.slow
def test_findings_identical_with_and_without_cache_and_for_one_or_many_processes(tmp_path):
    """Several real projects linted as one tree (enough files for the pool): cross-file findings
    through imports, factories, registries and framework settings, the same every way."""
    root = _copy_projects(tmp_path, sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
    cache = str(tmp_path / "cache")
    runs = {
        "no cache, -j1": invoke("--no-cache", "--jobs", "1", "--output-format", "json", ".", cwd=root),
        "no cache, -j2": invoke("--no-cache", "--jobs", "2", "--output-format", "json", ".", cwd=root),
        "cold, -j2": invoke("--cache-dir", cache, "--jobs", "2", "--output-format", "json", ".", cwd=root),
        "warm, -j2": invoke("--cache-dir", cache, "--jobs", "2", "--output-format", "json", ".", cwd=root),
        "warm, -j1": invoke("--cache-dir", cache, "--jobs", "1", "--output-format", "json", ".", cwd=root),
    }
    reference = runs["no cache, -j1"]
    cross_file = [d for d in json.loads(reference.stdout) if "called at " in d["message"]
                  and ".py:" in d["message"].split("called at ", 1)[1]]
    assert len(cross_file) >= 5
    for name, result in runs.items():
        assert result.exit_code == reference.exit_code, name
        assert result.stdout == reference.stdout, name


def test_warm_run_parses_nothing_unchanged(tmp_path, monkeypatch):
    root = _copy_projects(tmp_path, ["reach_factory", "crossfile_bce", "reach_registry"])
    cache = str(tmp_path / "cache")
    cold = invoke("--cache-dir", cache, "--jobs", "1", "--output-format", "json", ".", cwd=root)
    assert findings(cold)

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed on a warm run")

    import libcst

    import amplint.analysis.engine
    import amplint.analysis.parsing
    import amplint.analysis.project.summary
    import amplint.run.project_inputs

    for module in (amplint.analysis.parsing, amplint.analysis.engine, amplint.analysis.project.summary, amplint.run.project_inputs):
        monkeypatch.setattr(module, "parse", no_parse)
    monkeypatch.setattr(libcst, "parse_module", no_parse)
    warm = invoke("--cache-dir", cache, "--jobs", "1", "--output-format", "json", ".", cwd=root)
    assert warm.exit_code == cold.exit_code and warm.stdout == cold.stdout


def test_editing_one_dependency_invalidates_the_cached_cross_file_findings(tmp_path):
    """models/__init__.py holds no finding; it decides (through its factory) that the model
    trained under autocast is `Net`. Drop `Net` from the factory: the findings it caused in
    models/net.py and models/attention.py go, on a warm cache as without one."""
    root = _copy_projects(tmp_path, ["reach_factory"]) / "reach_factory"
    cache = str(tmp_path / "cache")
    before = findings(invoke("--cache-dir", cache, "--output-format", "json", ".", cwd=root))
    assert ("models/net.py", 16, "AMP101") in before
    assert any(f == "models/attention.py" for f, _, _ in before)
    factory = root / "models" / "__init__.py"
    factory.write_text(factory.read_text().replace('"net": Net, ', ""))
    after = invoke("--cache-dir", cache, "--output-format", "json", ".", cwd=root)
    fresh = invoke("--no-cache", "--output-format", "json", ".", cwd=root)
    assert after.stdout == fresh.stdout
    files = [f for f, _, _ in findings(after)]
    assert "models/net.py" not in files and "models/attention.py" not in files
    assert "losses/bce_dice.py" in files
