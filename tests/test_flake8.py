"""The flake8 plugin, through flake8 itself: the `flake8.extension` entry point `AMP`, the same
findings as amplint at the same `path:line:col` (flake8's column convention), flake8's own
select / ignore / noqa, and amplint's [tool.amplint] configuration."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytest.importorskip("flake8")

FACTORY = """\
import torch


def step(x, idx, n):
    with torch.autocast('cuda'):
        h = torch.nn.Linear(8, 8)(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
"""
BACKWARD = """\


def g(model, x, opt):
    with torch.autocast('cuda'):
        loss = model(x).mean()
        loss.backward()
        opt.step()
"""


def flake8(*args: str, cwd):
    return subprocess.run([sys.executable, "-m", "flake8", *args], capture_output=True,
                          text=True, cwd=cwd)


def amplint(*args: str, cwd):
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "a.py").write_text(FACTORY + BACKWARD)
    return tmp_path


def test_entry_point_is_registered():
    found = [ep for ep in entry_points(group="flake8.extension") if ep.name == "AMP"]
    assert found, "reinstall amplint (pip install -e .) to register the flake8 entry point"
    from amplint.cli.flake8_plugin import AmplintChecker

    assert found[0].load() is AmplintChecker


def test_flake8_reports_what_amplint_reports_at_the_same_positions(project):
    through_flake8 = flake8("--select", "AMP", "a.py", cwd=project)
    assert through_flake8.returncode == 1, through_flake8.stderr
    native = amplint("--output-format", "text", "a.py", cwd=project)
    expected = [line.replace(" [*]", "") for line in native.stdout.splitlines() if ": AMP" in line]
    assert through_flake8.stdout.splitlines() == expected
    assert expected[0].startswith("a.py:7:15: AMP101 ")
    assert expected[1].startswith("a.py:14:9: AMP104 ")


def test_flake8_select_ignore_and_noqa_apply(project):
    only = flake8("--select", "AMP101", "a.py", cwd=project)
    assert [line.split()[1] for line in only.stdout.splitlines()] == ["AMP101"]
    ignored = flake8("--select", "AMP", "--extend-ignore", "AMP104", "a.py", cwd=project)
    assert [line.split()[1] for line in ignored.stdout.splitlines()] == ["AMP101"]
    (project / "a.py").write_text(
        (FACTORY + BACKWARD).replace("loss.backward()", "loss.backward()  # noqa: AMP104"))
    noqa = flake8("--select", "AMP", "a.py", cwd=project)
    assert [line.split()[1] for line in noqa.stdout.splitlines()] == ["AMP101"]


def test_flake8_default_selection_includes_the_plugin(project):
    result = flake8("a.py", cwd=project)
    assert "a.py:7:15: AMP101 " in result.stdout


def test_amplint_configuration_applies_under_flake8(project):
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.amplint]\nignore = [\"AMP101\"]\n")
    result = flake8("--select", "AMP", "a.py", cwd=project)
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["AMP104"]


def test_clean_file_is_silent(project):
    (project / "ok.py").write_text("import torch\n\nx = torch.zeros(3, dtype=torch.float16)\n")
    result = flake8("--select", "AMP", "ok.py", cwd=project)
    assert result.returncode == 0 and result.stdout == ""


def test_a_file_with_no_project_above_it_is_linted_alone(tmp_path, monkeypatch):
    """A script straight in the temporary folder (or the home folder) has no project: the
    flake8 plugin lints it alone, as `amplint FILE` does, instead of running the project pass
    over everything else in that folder."""
    import tempfile

    from amplint.run import file_context
    from amplint.workspace.config import load

    (tmp_path / "losses.py").write_text(
        "import torch.nn.functional as F\n\n\ndef loss(p, y):\n"
        "    return F.binary_cross_entropy(p, y)\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom losses import loss\n\n\ndef step(m, x, y):\n"
        "    with torch.autocast('cuda'):\n        return loss(m(x), y)\n")
    path = str(tmp_path / "losses.py")
    # the same two files inside a project folder do get the region train.py puts around loss()
    assert file_context.entries_for(path, load(None), cache_dir=None) != ()
    file_context._project_entries.cache_clear()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(file_context, "discover", lambda *a, **k: pytest.fail("walked the folder"))
    assert file_context.entries_for(path, load(None), cache_dir=None) == ()
