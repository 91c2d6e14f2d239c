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
    if case.name in KNOWN_CPU_FAILS and result.device == "cpu":
        dtype, needle = KNOWN_CPU_FAILS[case.name]
        assert result.status == "FAIL" and len(result.problems) == 1, result.summary()
        assert result.problems[0].startswith(f"{dtype}: the after leaves") and needle in result.problems[0]
        return
    assert result.verified, result.summary()


# Failures the verifier reports on CPU and that are the model's numerics, not the fix: the
# before's own bfloat16 run is as far from fp32 (its gradient through two bf16 matmuls sums
# terms that cancel; 0.106 of max|grad| on a few small elements).  Kept visible, not loosened.
KNOWN_CPU_FAILS = {"AMP102/sigmoid_head": ("bfloat16", "grad: max abs")}
