"""Every runnable pair in the repository's fixtures/ verifies (CPU here; CUDA where present).

Parametrized by discovery: the set grows as fixtures gain ``amplint_run``; with no runnable pair
the single placeholder case skips (it does not pass vacuously)."""

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from amplint.runtime.fixtures import discover, verify_fixture_pair  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RUNNABLE = [c for c in discover(FIXTURES) if c.runnable] if FIXTURES.is_dir() else []


@pytest.mark.parametrize("case", RUNNABLE or [None], ids=[c.name for c in RUNNABLE] or ["none-runnable"])
def test_repo_fixture_pair_verifies(case):
    if case is None:
        pytest.skip(f"no runnable fixture pair (with amplint_run) under {FIXTURES}")
    result = verify_fixture_pair(case)
    assert result.verified, result.summary()
