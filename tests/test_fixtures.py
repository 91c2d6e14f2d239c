"""fixtures/: every *before* file is reported, `--fix` turns it into its `.fixed.py` byte for
byte, a second `--fix` changes nothing, and the clean files stay silent — through the real CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(
    p for p in FIXTURES.glob("AMP*/*.py") if not p.name.endswith(".fixed.py")
)
CLEAN = sorted(FIXTURES.glob("clean/*.py"))


def _flags(case: Path):
    code = case.parent.name
    flags = ["--extend-select", code]
    if case.stem.endswith("_unsafe"):
        flags.append("--unsafe-fixes")
    return code, flags


def test_every_rule_has_three_fixture_pairs():
    for code in all_rules():
        pairs = [c for c in CASES if c.parent.name == code]
        assert len(pairs) >= 3, f"{code} has {len(pairs)} fixture pairs"
        for case in pairs:
            assert case.with_name(case.stem + ".fixed.py").exists(), case


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_pair(case: Path, tmp_path: Path):
    code, flags = _flags(case)
    expected = case.with_name(case.stem + ".fixed.py").read_bytes()
    work = tmp_path / case.name
    shutil.copyfile(case, work)
    runner = CliRunner()

    report = runner.invoke(cli, [*flags, "--output-format", "json", str(work)])
    assert report.exit_code == 1, report.output
    assert f'"code": "{code}"' in report.output

    fixed = runner.invoke(cli, ["--fix", *flags, str(work)])
    assert fixed.exit_code in (0, 1), fixed.output
    assert work.read_bytes() == expected

    again = runner.invoke(cli, ["--fix", *flags, str(work)])
    assert again.exit_code in (0, 1), again.output
    assert work.read_bytes() == expected, "a second --fix changed the file"
    compile(expected, str(work), "exec")


@pytest.mark.parametrize("clean", CLEAN, ids=lambda p: p.stem)
def test_clean_fixture_is_silent(clean: Path, repository_cache: str, monkeypatch):
    # A clean file is linted in its project's context: this whole repository, whose per-file
    # summaries are cached across these cases (see the repository_cache fixture)
    monkeypatch.setenv("AMPLINT_CACHE_DIR", repository_cache)
    result = CliRunner().invoke(cli, [str(clean)])
    assert result.exit_code == 0, result.output
    assert "All checks passed!" in result.output


def test_cli_over_all_fixtures_reports_every_case(tmp_path: Path):
    """One real subprocess run over a copy of the whole folder, as the README shows it."""
    work = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, work)
    proc = subprocess.run(
        [sys.executable, "-m", "amplint", "--select", "ALL", str(work)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 1, proc.stderr
    for case in CASES:
        assert str(work / case.parent.name / case.name) + ":" in proc.stdout, case
