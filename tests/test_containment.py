"""Never die on one file (issue 20): an unexpected exception while analysing one file becomes
that file's internal error, in every output format; the other files are still reported, and
the exit status is 2."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

import amplint.analysis.facts as facts
from amplint.cli.main import cli

# The twelve-line repro: an alias defined through another alias set in a later method.
REPRO = textwrap.dedent("""\
    import contextlib, functools, torch

    class R:
        def setup(self, amp):
            self.autocast = contextlib.nullcontext
            if amp:
                self.autocast = functools.partial(torch.amp.autocast, device_type="cuda")

        def run(self, flag):
            ctx = self.autocast() if flag else contextlib.nullcontext()
            with ctx:
                pass
    """)

HAZARD = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F

    def step(model, x, y):
        with torch.autocast("cuda"):
            loss = F.binary_cross_entropy(torch.sigmoid(model(x)), y)
        return loss
    """)

POISON = "# amplint-test: poison\n"


def invoke(*args):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_repro_lints_cleanly_and_a_neighbour_hazard_is_reported(project):
    (project / "bench.py").write_text(REPRO)
    (project / "train.py").write_text(HAZARD)
    result = invoke("--no-cache", "--jobs", "1", ".")
    assert "Traceback" not in result.output + result.stderr
    assert "internal error" not in result.stderr
    assert "train.py:6:" in result.output and "AMP102" in result.output
    assert result.exit_code == 1


def test_alias_defined_through_a_later_alias_opens_a_maybe_region(project):
    # The region behind `ctx` exists on one path only: a backward inside it is reported.
    source = REPRO.replace("            pass\n", "            loss = model(x)\n            loss.backward()\n")
    source = source.replace("def run(self, flag):", "def run(self, flag, model, x):")
    (project / "bench.py").write_text(source)
    result = invoke("--no-cache", "--isolated-files", "bench.py")
    assert "AMP104" in result.output, result.output


@pytest.fixture
def poisoned(monkeypatch):
    """The facts raise for any file holding the POISON marker (an injected analysis bug)."""
    real = facts.FileFacts.__init__

    def init(self, module, *args, **kwargs):
        if POISON.strip() in module.code:
            raise KeyError("injected failure")
        real(self, module, *args, **kwargs)

    monkeypatch.setattr(facts.FileFacts, "__init__", init)


@pytest.mark.parametrize("isolated", [False, True])
def test_injected_failure_is_contained(project, poisoned, isolated):
    (project / "bad.py").write_text(POISON + HAZARD)
    (project / "train.py").write_text(HAZARD)
    extra = ["--isolated-files"] if isolated else []
    result = invoke("--no-cache", "--jobs", "1", *extra, ".")
    assert result.exit_code == 2
    assert "train.py:6:" in result.output  # the run went on
    errors = [line for line in result.stderr.splitlines() if "bad.py" in line]
    assert len(errors) == 1 and "internal error: KeyError" in errors[0], result.stderr
    assert "please report" in errors[0]
    assert "Traceback" not in result.stderr
    verbose = invoke("--no-cache", "--jobs", "1", "--verbose", *extra, ".")
    assert "Traceback" in verbose.stderr and "injected failure" in verbose.stderr


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github"])
def test_internal_error_is_in_every_format(project, poisoned, fmt):
    (project / "bad.py").write_text(POISON + HAZARD)
    (project / "train.py").write_text(HAZARD)
    result = invoke("--no-cache", "--jobs", "1", "--output-format", fmt, ".")
    assert result.exit_code == 2
    assert "internal error: KeyError" in result.stdout  # in the report itself, not only stderr
    assert "train.py" in result.stdout
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)


def test_fix_goes_on_past_an_internal_error(project, poisoned):
    source = HAZARD.replace("    return loss\n", "    loss.backward()\n    return loss\n")
    (project / "bad.py").write_text(POISON + source)
    (project / "train.py").write_text(source)
    result = invoke("--no-cache", "--jobs", "1", "--fix", ".")
    assert result.exit_code == 2
    assert (project / "bad.py").read_text() == POISON + source  # untouched
    assert (project / "train.py").read_text() != source  # fixed


def test_project_pass_failure_is_contained(project, monkeypatch):
    import amplint.analysis.project as project_pass

    def broken(*args, **kwargs):
        raise RuntimeError("project pass bug")

    monkeypatch.setattr(project_pass.ProjectFacts, "__init__", broken)
    (project / "train.py").write_text(HAZARD)
    (project / "other.py").write_text("import torch\n")
    result = invoke("--no-cache", "--jobs", "1", ".")
    assert result.exit_code == 2
    assert "train.py:6:" in result.output
    assert "project pass: internal error: RuntimeError: project pass bug" in result.stderr
