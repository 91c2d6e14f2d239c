"""The command-line contract (issue 2): exit codes 0/1/2, sorted `path:line:col: CODE [*] message`
lines and a summary, the JSON fields, unreadable and unparsable files, code selection by
prefix, --explain, --list-rules, --version, --diff, --fix, and `python -m amplint`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint import __version__
from amplint.cli.main import cli
from amplint.analysis.rules import all_rules

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
    "torch.zeros(n, h.shape[-1], device=h.device)", "h.new_zeros(n, h.shape[-1])"
)
BACKWARD = """\
import torch
def step(model, x, opt):
    with torch.autocast('cuda'):
        loss = model(x).mean()
        loss.backward()
        opt.step()
"""
HALF_INPUT = """\
import torch
def train(model, loader, opt):
    for x, y in loader:
        x = x.cuda().half()
        with torch.autocast('cuda'):
            loss = model(x, y)
"""
CLEAN = "import torch\n\nx = torch.zeros(3, dtype=torch.float16)\n"
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>AMP\d{3})(?P<fix> \[\*\])? \S.*$")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder (its own pyproject.toml, so no outer config leaks in) as cwd."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def finding_lines(output: str):
    return [m for m in (LINE.match(line) for line in output.splitlines()) if m]


def test_clean_file_exits_0_with_all_checks_passed(project):
    (project / "ok.py").write_text(CLEAN)
    result = invoke("ok.py")
    assert result.exit_code == 0, result.output
    assert result.stdout == "All checks passed!\n"


def test_findings_exit_1_one_sorted_line_each_and_a_summary(project):
    (project / "b.py").write_text(BACKWARD)
    (project / "a.py").write_text(FACTORY + "\n" + BACKWARD.replace("import torch\n", ""))
    result = invoke(".")
    assert result.exit_code == 1, result.output
    found = finding_lines(result.stdout)
    assert [(m["path"], int(m["line"]), m["code"]) for m in found] == [
        ("a.py", 6, "AMP101"), ("a.py", 12, "AMP104"), ("b.py", 5, "AMP104"),
    ]
    keys = [(m["path"], int(m["line"]), int(m["col"])) for m in found]
    assert keys == sorted(keys)
    assert all(m["fix"] == " [*]" for m in found)
    lines = result.stdout.splitlines()
    assert lines[3:] == ["Found 3 findings.", "[*] 3 fixable with the `--fix` option."]


def test_unsafe_fix_is_not_marked_and_the_summary_says_how(project):
    (project / "h.py").write_text(HALF_INPUT)
    result = invoke("h.py")
    assert result.exit_code == 1
    (match,) = finding_lines(result.stdout)
    assert match["code"] == "AMP103" and match["fix"] is None
    assert "1 more fixable with `--fix --unsafe-fixes`" in result.stdout
    marked = invoke("--unsafe-fixes", "h.py")
    assert finding_lines(marked.stdout)[0]["fix"] == " [*]"


def test_json_fields(project):
    (project / "a.py").write_text(FACTORY)
    result = invoke("--output-format", "json", "a.py")
    assert result.exit_code == 1
    (item,) = json.loads(result.stdout)
    assert {"code", "message", "severity", "filename", "line", "column", "end_line",
            "end_column", "fix"} <= set(item)
    assert item["code"] == "AMP101" and item["severity"] == "error"
    assert item["filename"] == "a.py"
    assert (item["line"], item["column"]) == (6, 15)
    assert item["end_line"] == 6 and item["end_column"] > item["column"]
    assert item["fix"]["applicability"] == "safe" and item["fix"]["message"]
    assert item["message"].startswith("`torch.zeros` without `dtype=`")


def test_json_of_a_clean_run_is_an_empty_list(project):
    (project / "ok.py").write_text(CLEAN)
    result = invoke("--output-format", "json", "ok.py")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_unreadable_and_unparsable_files_are_named_and_the_run_goes_on(project):
    (project / "a.py").write_text(FACTORY)
    (project / "latin.py").write_bytes(b"import torch\nname = '\xff'\n")
    (project / "broken.py").write_text("import torch\ndef f(:\n    with torch.autocast('cuda'):\n        pass\n")
    (project / "nul.py").write_bytes(b"import torch\x00\n")
    result = invoke(".")
    assert result.exit_code == 1
    errors = result.stderr.splitlines()
    assert "error: latin.py: not valid UTF-8 (byte 0xff at offset 21)" in errors
    assert any(e.startswith("error: broken.py:") and "syntax error" in e for e in errors)
    assert "error: nul.py: not a text file (contains NUL bytes)" in errors
    assert len(errors) == 3
    assert [m["path"] for m in finding_lines(result.stdout)] == ["a.py"]


def test_non_utf8_in_the_first_lines_says_so_plainly(project):
    (project / "bad.py").write_bytes(b"\xff = 1\n")
    result = invoke("bad.py")
    assert result.exit_code == 1
    assert result.stderr == "error: bad.py: not valid UTF-8 (byte 0xff at offset 0)\n"


def test_a_declared_encoding_is_honoured(project):
    (project / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n" + FACTORY.encode() + b"name = '\xe9'\n"
    )
    result = invoke("latin.py")
    assert result.exit_code == 1 and result.stderr == ""
    assert finding_lines(result.stdout)[0]["code"] == "AMP101"


def test_missing_path_is_an_error_line(project):
    result = invoke("nowhere.py")
    assert result.exit_code == 1
    assert result.stderr == "error: nowhere.py: no such file or directory\n"


def test_select_and_ignore_by_prefix(project):
    (project / "a.py").write_text(FACTORY + "\n" + BACKWARD.replace("import torch\n", ""))
    codes = lambda r: [m["code"] for m in finding_lines(r.stdout)]  # noqa: E731
    assert codes(invoke("--select", "AMP101", "a.py")) == ["AMP101"]
    assert codes(invoke("--select", "AMP10", "a.py")) == ["AMP101", "AMP104"]
    assert codes(invoke("--select", "amp104", "a.py")) == ["AMP104"]
    assert codes(invoke("--ignore", "AMP101", "a.py")) == ["AMP104"]
    assert codes(invoke("--ignore", "AMP10", "a.py")) == []
    assert invoke("--ignore", "AMP10", "a.py").exit_code == 0
    assert codes(invoke("--select", "AMP101,AMP104", "--ignore", "AMP104", "a.py")) == ["AMP101"]


def test_unknown_code_is_a_usage_error(project):
    (project / "a.py").write_text(FACTORY)
    result = invoke("--select", "AMP999", "a.py")
    assert result.exit_code == 2
    assert "unknown rule code or prefix `AMP999`" in result.stderr


def test_unknown_option_is_a_usage_error(project):
    assert invoke("--no-such-option", ".").exit_code == 2


def test_exit_zero(project):
    (project / "a.py").write_text(FACTORY)
    result = invoke("--exit-zero", "a.py")
    assert result.exit_code == 0
    assert "AMP101" in result.stdout


def test_explain(project):
    result = invoke("--explain", "amp101")
    assert result.exit_code == 0
    assert result.stdout.startswith("# AMP101 factory-default-dtype\n")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead",
                    "## Fix safety"):
        assert heading in result.stdout
    unknown = invoke("--explain", "AMP999")
    assert unknown.exit_code == 2 and "unknown rule code" in unknown.stderr


def test_list_rules_names_every_rule(project):
    result = invoke("--list-rules")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines()]
    assert listed == list(all_rules())
    first = result.stdout.splitlines()[0].split()
    assert first[1] == all_rules()[first[0]].name


def test_version(project):
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"amplint, version {__version__}"


def test_diff_prints_the_fix_with_plain_headers_and_writes_nothing(project):
    (project / "a.py").write_text(FACTORY)
    result = invoke("--diff", "a.py")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == ["--- a.py", "+++ a.py"]
    assert "-        out = torch.zeros(n, h.shape[-1], device=h.device)" in lines
    assert "+        out = h.new_zeros(n, h.shape[-1])" in lines
    assert (project / "a.py").read_text() == FACTORY
    absolute = invoke("--diff", str(project / "a.py"))
    assert absolute.stdout.splitlines()[0] == f"--- {project / 'a.py'}"
    (project / "ok.py").write_text(CLEAN)
    assert invoke("--diff", "ok.py").exit_code == 0


def test_fix_writes_and_exits_0_when_nothing_is_left(project):
    (project / "a.py").write_text(FACTORY)
    result = invoke("--fix", "a.py")
    assert result.exit_code == 0, result.output
    assert (project / "a.py").read_text() == FACTORY_FIXED
    assert result.stdout == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert invoke("a.py").exit_code == 0


def test_fix_keeps_findings_without_a_safe_fix_and_exits_1(project):
    (project / "h.py").write_text(HALF_INPUT)
    result = invoke("--fix", "h.py")
    assert result.exit_code == 1
    assert (project / "h.py").read_text() == HALF_INPUT
    unsafe = invoke("--fix", "--unsafe-fixes", "h.py")
    assert unsafe.exit_code == 0
    assert "x = x.cuda()\n" in (project / "h.py").read_text()


def test_read_only_file_is_reported_not_changed(project):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pass  # root may write anyway; amplint checks the mode bits, not access()
    target = project / "a.py"
    target.write_text(FACTORY)
    target.chmod(0o444)
    try:
        result = invoke("--fix", "a.py")
    finally:
        target.chmod(0o644)
    assert result.exit_code == 1
    assert "error: a.py: file is read-only; not changed" in result.stderr
    assert target.read_text() == FACTORY
    assert finding_lines(result.stdout)[0]["code"] == "AMP101"


def _console_script() -> str:
    candidate = Path(sys.executable).with_name("amplint")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("amplint")
    assert found, "the `amplint` console script is not installed (pip install -e .)"
    return found


def test_python_dash_m_behaves_like_the_console_script(project):
    (project / "a.py").write_text(FACTORY)
    (project / "latin.py").write_bytes(b"x = '\xff'\n")
    for args in (["."], ["--output-format", "json", "."], ["--version"], ["--select", "AMP999"]):
        module = subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True,
                                text=True, cwd=project)
        script = subprocess.run([_console_script(), *args], capture_output=True, text=True,
                                cwd=project)
        assert (module.returncode, module.stdout) == (script.returncode, script.stdout), args
        assert module.stderr.replace("python -m amplint", "amplint") == script.stderr.replace(
            "python -m amplint", "amplint")
    assert module.returncode == 2
