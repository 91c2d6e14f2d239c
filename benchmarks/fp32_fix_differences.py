"""Measured fp32 difference of every *unsafe* fix (issue 15), where the program runs.

    python benchmarks/fp32_fix_differences.py

Each unsafe `flag` example and `*_unsafe` fixture pair runs before and after in fp32 on the
CPU (tests/fp32_harness.py: seeded inputs, autocast off, no half casts); the largest relative
difference (norm of the difference over the norm of the value) over all outputs and gradients
is printed, or why the program could not be run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("fp32_harness", REPO / "tests" / "fp32_harness.py")
harness = importlib.util.module_from_spec(spec)
sys.modules["fp32_harness"] = harness
spec.loader.exec_module(harness)

from amplint.analysis.rules import all_rules  # noqa: E402


def measure(before: str, after: str) -> str:
    try:
        old = harness.run(before)
    except harness.NotRunnable as exc:
        return f"not runnable ({str(exc)[:60]})"
    try:
        new = harness.run(after)
    except harness.NotRunnable as exc:
        return f"FIXED PROGRAM FAILS ({str(exc)[:60]})"
    diffs = [harness.relative_difference(v, new[k]) for k, v in old.items()
             if k in new and v.shape == new[k].shape]
    missing = [k for k in old if k not in new and not k.startswith("global ")]
    text = f"max relative difference {max(diffs, default=0.0):.3g}"
    return text + (f", missing after: {missing}" if missing else "")


def main() -> None:
    for code, rule in sorted(all_rules().items()):
        for i, flag in enumerate(rule.flag):
            if flag.unsafe and flag.fixed is not None:
                print(f"{code} flag {i}: {measure(flag.code, flag.fixed)}")
    for case in sorted((REPO / "fixtures").glob("AMP*/*_unsafe.py")):
        fixed = case.with_name(case.stem + ".fixed.py")
        print(f"{case.parent.name}/{case.stem}: {measure(case.read_text(), fixed.read_text())}")


if __name__ == "__main__":
    main()
