"""AMP130 is off by default, so the generic clean-fixture test does not run it: check its (and
AMP131's) clean fixtures with the rules switched on, through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli

CLEAN = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "clean").glob("amp13[01]_*.py"))


def test_there_are_clean_fixtures():
    assert {p.name[:6] for p in CLEAN} >= {"amp130", "amp131"}


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_clean_with_the_rules_selected(path: Path, repository_cache: str, monkeypatch):
    # linted in its project's context, this repository: see the repository_cache fixture
    monkeypatch.setenv("AMPLINT_CACHE_DIR", repository_cache)
    result = CliRunner().invoke(cli, ["--select", "AMP130,AMP131", str(path)])
    assert result.exit_code == 0, result.output


def test_the_gates_are_what_keeps_it_silent(tmp_path: Path):
    """The same deprecated calls without their version gates are reported."""
    source = (
        "import torch\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
        "from torch.cuda.amp import autocast\n"
        "ctx = autocast(enabled=True)\n"
    )
    work = tmp_path / "ungated.py"
    work.write_text(source, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--select", "AMP130", str(work)])
    assert result.exit_code == 1
    assert result.output.count("AMP130") >= 2
