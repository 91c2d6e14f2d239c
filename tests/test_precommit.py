"""pre-commit for real: the hooks in .pre-commit-hooks.yaml, run by the `pre-commit` binary
against a copy of this working tree (committed into a temporary git repository, so the test
does not depend on what is committed) on a small project with hazards. pre-commit builds its
own virtualenv and pip-installs amplint from that copy, so these tests need the package
registry for amplint's dependencies; they use a private pre-commit cache in a temp folder,
shared by the module's tests (as a user's ~/.cache/pre-commit is): the hook environment is
built once. `pre-commit try-repo` always builds a fresh one in a store of its own, so one test
runs it as a newcomer would and the others run the same hooks with `pre-commit run` and a
configuration naming this copy at its commit (what try-repo writes and runs itself).

Also: the README's `.pre-commit-config.yaml` snippet and its GitHub Actions job, as far as
they can run here (the amplint commands of the job, and the SARIF file it uploads)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
FACTORY = """\
import torch
def step(x, idx, n):
    model = torch.nn.Linear(8, 8)
    with torch.autocast('cuda'):
        h = model(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
"""
FACTORY_FIXED = FACTORY.replace(
    "torch.zeros(n, h.shape[-1], device=h.device)", "h.new_zeros(n, h.shape[-1])")
NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["%matplotlib inline\n", "import torch"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": FACTORY.splitlines(True)[1:]},
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}
# What the README is expected to show (used when the README does not have it yet).
PRECOMMIT_SNIPPET = """\
repos:
  - repo: https://github.com/amplint/amplint
    rev: v0.1.0
    hooks:
      - id: amplint-fix   # apply safe fixes (the commit fails when a file was changed)
      - id: amplint       # then report what is left
"""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "amplint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "amplint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory) -> tuple:
    """This working tree (tracked and untracked-but-not-ignored files) committed into a
    fresh repository: (path, commit)."""
    target = tmp_path_factory.mktemp("hooks") / "amplint"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = ROOT / relative
        if not source.is_file() or relative.startswith("shared/"):
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    git("commit", "-q", "-m", "amplint under test", cwd=target)
    return target, git("rev-parse", "HEAD", cwd=target).strip()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-cache")


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "legacy").mkdir()
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.amplint]\nextend-exclude = [\"legacy\"]\n")
    (root / "src" / "train.py").write_text(FACTORY)
    (root / "src" / "clean.py").write_text("import torch\nx = torch.zeros(3, dtype=torch.half)\n")
    (root / "legacy" / "old.py").write_text(FACTORY)
    (root / "explore.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (root / "README.md").write_text("torch.zeros(3) in prose is not Python\n")
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    return root


def pre_commit(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(cache), "PRE_COMMIT_COLOR": "never",
           "SKIP": ""}
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    if "Could not find a version that satisfies" in proc.stdout + proc.stderr:
        pytest.fail("pre-commit could not install amplint's dependencies: no package registry?\n"
                    + proc.stdout[-2000:])
    return proc


def run_hook(hook: str, *args: str, hooks_repo: tuple, cwd: Path, cache: Path
             ) -> subprocess.CompletedProcess:
    """`pre-commit try-repo REPO HOOK ARGS` as try-repo does it (a configuration with only that
    hook of REPO at its commit, written outside the project), but in the shared store."""
    repo, commit = hooks_repo
    config = cache / f"try-{hook}.yaml"
    config.write_text(yaml.safe_dump(
        {"repos": [{"repo": str(repo), "rev": commit, "hooks": [{"id": hook}]}]}))
    return pre_commit("run", hook, "--config", str(config), *args, cwd=cwd, cache=cache)


def test_hooks_file_declares_check_and_fix_hooks():
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"amplint", "amplint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi", "jupyter"]
        assert "--force-exclude" in hook["entry"]
        # one process: the staged files are linted in their project's context, which every
        # chunk would otherwise read again (and --fix chunks would race on the files)
        assert hook["require_serial"] is True
    assert "--fix" in hooks["amplint-fix"]["entry"] and "--fix" not in hooks["amplint"]["entry"]


def test_try_repo_check_hook_fails_on_hazards(hooks_repo, cache, project):
    repo, _ = hooks_repo
    proc = pre_commit("try-repo", str(repo), "amplint", "--all-files", cwd=project, cache=cache)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert re.search(r"amplint\.+Failed", output), output
    assert "src/train.py:6:15: AMP101" in output
    assert "explore.ipynb:cell 2:5:15: AMP101" in output
    assert "legacy/old.py" not in output  # extend-exclude applies to the files pre-commit passes
    assert "clean.py" not in output and "README.md" not in output
    assert (project / "src" / "train.py").read_text() == FACTORY  # the check hook writes nothing


def test_config_snippet_fix_then_check(hooks_repo, cache, project):
    repo, commit = hooks_repo
    (project / ".pre-commit-config.yaml").write_text(_localize(_readme_snippet(), repo, commit))
    git("add", ".pre-commit-config.yaml", cwd=project)
    first = pre_commit("run", "--all-files", cwd=project, cache=cache)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert re.search(r"amplint \(fix\)\.+Failed", output), output
    assert "files were modified by this hook" in output
    assert (project / "src" / "train.py").read_text() == FACTORY_FIXED
    notebook = json.loads((project / "explore.ipynb").read_text())
    assert "h.new_zeros(n, h.shape[-1])" in "".join(notebook["cells"][1]["source"])
    assert (project / "legacy" / "old.py").read_text() == FACTORY
    git("add", "-A", cwd=project)
    second = pre_commit("run", "--all-files", cwd=project, cache=cache)
    output = second.stdout + second.stderr
    assert second.returncode == 0, output
    assert re.search(r"amplint \(fix\)\.+Passed", output), output
    assert re.search(r"amplint\.+Passed", output), output


def _readme_yaml_blocks():
    readme = ROOT / "README.md"
    text = readme.read_text() if readme.exists() else ""
    return re.findall(r"```ya?ml\n(.*?)```", text, re.S)


def _readme_snippet() -> str:
    for block in _readme_yaml_blocks():
        if "repos:" in block and "id: amplint" in block:
            return block
    return PRECOMMIT_SNIPPET


def _localize(snippet: str, repo: Path, commit: str) -> str:
    document = yaml.safe_load(snippet)
    for entry in document["repos"]:
        if any(hook["id"].startswith("amplint") for hook in entry["hooks"]):
            entry["repo"], entry["rev"] = str(repo), commit
    return yaml.safe_dump(document, sort_keys=False)


def test_readme_has_the_pre_commit_snippet():
    block = _readme_snippet()
    if block is PRECOMMIT_SNIPPET:
        pytest.skip("README.md has no .pre-commit-config.yaml snippet yet")
    document = yaml.safe_load(block)
    ids = {hook["id"] for entry in document["repos"] for hook in entry["hooks"]}
    assert ids <= {"amplint", "amplint-fix"} and ids


def test_readme_github_actions_job_produces_valid_sarif(tmp_path, sarif_schema):
    """Runs the amplint commands of the README's workflow (not the `uses:` actions nor the
    installation) in a project with a hazard, and validates the SARIF file it uploads."""
    jsonschema = pytest.importorskip("jsonschema")
    workflow = next((yaml.safe_load(b) for b in _readme_yaml_blocks() if "upload-sarif" in b), None)
    if workflow is None:
        pytest.skip("README.md has no GitHub Actions workflow with upload-sarif yet")
    (job,) = workflow["jobs"].values()
    assert job.get("permissions", {}).get("security-events") == "write"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(FACTORY)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    sarif_file = None
    results = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if "upload-sarif" in uses:
            sarif_file = step["with"]["sarif_file"]
        command = step.get("run", "")
        if "amplint" in command and "pip install" not in command:
            results.append(subprocess.run(command, shell=True, cwd=tmp_path, env=env,
                                          capture_output=True, text=True))
    assert sarif_file and results
    document = json.loads((tmp_path / sarif_file).read_text())
    jsonschema.Draft4Validator(sarif_schema).validate(document)
    assert document["runs"][0]["results"][0]["ruleId"] == "AMP101"
    assert results[-1].returncode == 1  # the gate step fails the job on findings


# -- a partial commit is linted in its project's context ---------------------------------------
LOSSES_CLEAN = """\
import torch
import torch.nn.functional as F
from torch import nn


class FocalLoss(nn.Module):
    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target)
"""
LOSSES_HAZARD = """\
import torch
import torch.nn.functional as F
from torch import nn


class FocalLoss(nn.Module):
    def forward(self, logits, target):
        probs = torch.sigmoid(logits)
        return F.binary_cross_entropy(probs, target)
"""
TRAIN = """\
import torch

from losses import FocalLoss


def train(model, loader, optimizer):
    crit = FocalLoss()
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = crit(model(x), y)
        loss.backward()
        optimizer.step()
"""


@pytest.fixture
def crossfile(tmp_path) -> Path:
    """A committed project whose loss runs under an autocast region in train.py, with enough
    other files that pre-commit splits `--all-files` into several chunks."""
    root = tmp_path / "crossfile"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.amplint]\n")
    (root / "losses.py").write_text(LOSSES_CLEAN)
    (root / "train.py").write_text(TRAIN)
    for number in range(40):
        (root / f"util_{number:02d}.py").write_text(f"def helper_{number}(x):\n    return x + 1\n")
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "clean", cwd=root)
    return root


def test_staged_change_to_one_file_is_linted_in_its_project(hooks_repo, cache, crossfile):
    (crossfile / "losses.py").write_text(LOSSES_HAZARD)
    git("add", "losses.py", cwd=crossfile)  # the commit touches losses.py only
    check = run_hook("amplint", hooks_repo=hooks_repo, cwd=crossfile, cache=cache)
    output = check.stdout + check.stderr
    assert check.returncode == 1, output
    assert re.search(r"losses\.py:9:16: AMP102 .*called at train\.py:10", output), output
    assert (crossfile / "losses.py").read_text() == LOSSES_HAZARD
    fix = run_hook("amplint-fix", hooks_repo=hooks_repo, cwd=crossfile, cache=cache)
    output = fix.stdout + fix.stderr
    assert fix.returncode == 1, output
    assert "files were modified by this hook" in output
    fixed = (crossfile / "losses.py").read_text()
    assert "binary_cross_entropy(" not in fixed.replace("binary_cross_entropy_with_logits(", "")
    git("add", "losses.py", cwd=crossfile)
    again = run_hook("amplint", hooks_repo=hooks_repo, cwd=crossfile, cache=cache)
    assert again.returncode == 0, again.stdout + again.stderr


def test_all_files_finds_the_cross_file_hazard_whatever_the_chunking(hooks_repo, cache, crossfile):
    (crossfile / "losses.py").write_text(LOSSES_HAZARD)
    git("add", "-A", cwd=crossfile)
    check = run_hook("amplint", "--all-files", hooks_repo=hooks_repo, cwd=crossfile, cache=cache)
    output = check.stdout + check.stderr
    assert check.returncode == 1, output
    assert output.count("AMP102") == 1, output
    # one file per invocation (the most any chunking can split): still found
    alone = subprocess.run([sys.executable, "-m", "amplint", "losses.py"], cwd=crossfile,
                           capture_output=True, text=True)
    assert alone.returncode == 1 and "losses.py:9:16: AMP102" in alone.stdout, alone.stdout
