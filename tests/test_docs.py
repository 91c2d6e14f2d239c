"""Every rule documents itself, `amplint --explain` shows it, and the README lists it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.rules import all_rules

HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety")
README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", list(all_rules()))
def test_rule_docs_have_every_section(code):
    docs = all_rules()[code].docs()
    positions = [docs.find(h) for h in HEADINGS]
    assert all(p >= 0 for p in positions), f"{code} lacks {[h for h, p in zip(HEADINGS, positions) if p < 0]}"
    assert positions == sorted(positions), f"{code}: sections out of order"
    for heading in HEADINGS:
        body = docs.split(heading, 1)[1].split("\n## ", 1)[0].strip()
        assert len(body) > 20, f"{code}: section {heading!r} is empty"


@pytest.mark.parametrize("code", list(all_rules()))
def test_explain_shows_the_docs(code):
    result = CliRunner().invoke(cli, ["--explain", code.lower()])
    assert result.exit_code == 0
    assert result.output.startswith(f"# {code} {all_rules()[code].name}")
    for heading in HEADINGS:
        assert heading in result.output


def test_explain_unknown_code_is_a_usage_error():
    result = CliRunner().invoke(cli, ["--explain", "AMP999"])
    assert result.exit_code == 2
    assert "AMP999" in result.output


def test_readme_rule_table_is_current():
    from amplint.report.docs import update

    assert update(README) == README, "run `python -m amplint.report.docs README.md`"
    for code, rule in all_rules().items():
        assert f"| {code} | {rule.name} |" in README


def test_readme_opens_with_the_three_commands():
    head = README.split("\n## ", 1)[0]
    for command in ('pip install -e ".[test]"', "amplint fixtures/", "python -m pytest -q"):
        assert command in head


def test_ci_runs_the_readme_test_command():
    """.ci/run runs exactly the test command the README gives a newcomer, and installs the
    packages the README says the tests read."""
    head = README.split("\n## ", 1)[0]
    (command,) = [line.split("#")[0].strip() for line in head.splitlines()
                  if line.startswith("python -m pytest")]
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if "pytest" in line and not line.startswith("#")] \
        == [command]
    (install,) = [line.split("#")[0].strip() for line in head.splitlines() if "--no-deps" in line]
    assert f"python -m {install}" in ci.replace("-q ", "")
