"""Adoption on a large codebase, through the CLI: --write-baseline / --baseline (only new
findings fail the gate; matching survives edits that shift lines) and --add-noqa."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli

FACTORY = """\
import torch
def step(x, idx, n):
    model = torch.nn.Linear(8, 8)
    with torch.autocast('cuda'):
        h = model(x)
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


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(FACTORY + "\n" + BACKWARD)
    return tmp_path


def codes(result):
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()
            if ": AMP" in line]


def test_write_baseline_then_gate_passes(project):
    result = invoke("--write-baseline", "amplint-baseline.json", "src")
    assert result.exit_code == 0, result.output
    assert result.stderr == "Wrote 2 findings to the baseline amplint-baseline.json.\n"
    document = json.loads((project / "amplint-baseline.json").read_text())
    assert document["format"] == "amplint-baseline" and document["version"] == 1
    assert [(e["path"], e["code"], e["line"]) for e in document["findings"]] == [
        ("src/a.py", "AMP101", 6), ("src/a.py", "AMP104", 12)]
    gated = invoke("--baseline", "amplint-baseline.json", "src")
    assert gated.exit_code == 0, gated.output
    assert gated.stdout == "All checks passed!\n2 baselined findings not shown.\n"


def test_baseline_survives_edits_that_shift_lines(project):
    invoke("--write-baseline", "base.json", "src")
    source = project / "src" / "a.py"
    text = source.read_text().replace(
        "def step(", '"""Module docstring."""\n\n\ndef helper():\n    return 1\n\n\ndef step(')
    text = text.replace("        h = model(x)\n", "        x = x * 2\n        h = model(x)\n")
    source.write_text(text)
    assert invoke("src").exit_code == 1
    gated = invoke("--baseline", "base.json", "src")
    assert gated.exit_code == 0, gated.output


def test_only_new_findings_fail_the_gate(project):
    invoke("--write-baseline", "base.json", "src")
    source = project / "src" / "a.py"
    # A second copy of the same hazard (an identical line) is new, and so is a new file's.
    source.write_text(source.read_text() + "\n" + FACTORY.replace("def step", "def step2")
                      .replace("import torch\n", ""))
    (project / "src" / "b.py").write_text("import torch\n" + BACKWARD)
    gated = invoke("--baseline", "base.json", "src")
    assert gated.exit_code == 1
    lines = [line for line in gated.stdout.splitlines() if ": AMP" in line]
    assert [line.split(":")[0:2] for line in lines] == [["src/a.py", "19"], ["src/b.py", "5"]]
    assert "Found 2 findings." in gated.stdout
    assert "2 baselined findings not shown." in gated.stdout
    as_json = json.loads(invoke("--baseline", "base.json", "--output-format", "json", "src").stdout)
    assert [(i["filename"], i["line"]) for i in as_json] == [("src/a.py", 19), ("src/b.py", 5)]


def test_baseline_paths_are_relative_to_the_baseline_file(project, monkeypatch):
    invoke("--write-baseline", "base.json", "src")
    monkeypatch.chdir(project / "src")
    gated = invoke("--baseline", str(project / "base.json"), str(project / "src" / "a.py"))
    assert gated.exit_code == 0, gated.output
    gated = invoke("--baseline", "../base.json", "a.py")
    assert gated.exit_code == 0, gated.output


def test_fixed_findings_leave_the_baseline_harmlessly(project):
    invoke("--write-baseline", "base.json", "src")
    assert invoke("--fix", "src").exit_code == 0
    assert invoke("--baseline", "base.json", "src").exit_code == 0


@pytest.mark.parametrize("content, words", [
    (None, "cannot read baseline"),
    ("{not json", "invalid JSON"),
    ('{"findings": []}', "not an amplint baseline"),
    ('{"format": "amplint-baseline", "version": 99, "findings": []}', "version 99"),
    ('{"format": "amplint-baseline", "version": 1, "findings": [{"path": "x"}]}', "malformed"),
])
def test_bad_baseline_is_exit_2(project, content, words):
    if content is not None:
        (project / "base.json").write_text(content)
    result = invoke("--baseline", "base.json", "src")
    assert result.exit_code == 2
    assert result.stderr.startswith("amplint: error: base.json: ")
    assert words in result.stderr and len(result.stderr.splitlines()) == 1


def test_write_and_read_baseline_together_is_a_usage_error(project):
    assert invoke("--baseline", "a.json", "--write-baseline", "b.json", "src").exit_code == 2


# -- --add-noqa -----------------------------------------------------------------------------

def test_add_noqa_marks_every_finding_and_the_gate_passes(project):
    result = invoke("--add-noqa", "src")
    assert result.exit_code == 0, result.output
    assert result.stderr == "Added 2 noqa directives.\n"
    text = (project / "src" / "a.py").read_text()
    assert "        out = torch.zeros(n, h.shape[-1], device=h.device)  # noqa: AMP101\n" in text
    assert "        loss.backward()  # noqa: AMP104\n" in text
    assert invoke("src").exit_code == 0
    again = invoke("--add-noqa", "src")
    assert again.stderr == "Added 0 noqa directives.\n"
    assert (project / "src" / "a.py").read_text() == text


def test_add_noqa_merges_with_existing_comments_and_keeps_line_endings(project):
    source = project / "src" / "a.py"
    text = FACTORY.replace("device=h.device)\n", "device=h.device)  # noqa: AMP999\n")
    text += "\n" + BACKWARD.replace("loss.backward()\n", "loss.backward()  # see issue 12\n")
    source.write_bytes(text.replace("\n", "\r\n").encode())
    assert invoke("--add-noqa", "src").exit_code == 0
    data = source.read_bytes().decode()
    assert "device=h.device)  # noqa: AMP999, AMP101\r\n" in data
    assert "loss.backward()  # see issue 12  # noqa: AMP104\r\n" in data
    assert "\n" not in data.replace("\r\n", "")
    assert invoke("src").exit_code == 0


def test_add_noqa_skips_lines_it_cannot_mark(project):
    source = project / "src" / "a.py"
    text = FACTORY.replace(
        "torch.zeros(n, h.shape[-1], device=h.device)",
        'torch.zeros(n, len("""\nheader"""), device=h.device)',
    ) + "\n" + BACKWARD.replace("loss.backward()", "loss.backward(\\\n        )")
    source.write_text(text)
    result = invoke("--add-noqa", "src")
    assert result.exit_code == 1
    assert "Added 0 noqa directives." in result.stderr
    assert "error: src/a.py:6: cannot add `# noqa` here" in result.stderr
    assert "error: src/a.py:13: cannot add `# noqa` here" in result.stderr
    assert source.read_text() == text


def test_add_noqa_with_fix_is_a_usage_error(project):
    assert invoke("--add-noqa", "--fix", "src").exit_code == 2
