"""The execution proof of fix safety (issue 15): every *safe* fix computes the same thing in
fp32. For every safe fixture pair, every rule's own safe `flag` example and generated AMP102
programs, the original and the fixed program run on the CPU with autocast off, no half casts
and seeded inputs (tests/fp32_harness.py); outputs and gradients must be equal.

Exact equality everywhere, except AMP102's with-logits rewrite, compared within 2e-6 relative
(norm of the difference over the norm of the value): it is the more accurate form (BCE takes
the log of a rounded sigmoid and clamps it at -100), so its last bits differ. Where it differs
by more (up to 1e-4, for large logits), it must be closer than the original to the same
program run in float64. AMP102's fp32 island is compared exactly. A program the harness cannot run as given is no evidence and is
left out; the count of runnable ones is asserted, so the proof cannot become empty."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("torch")
from hypothesis import given, settings, strategies as st  # noqa: E402

from amplint.analysis.engine import Settings, lint_source  # noqa: E402
from amplint.analysis.rules import all_rules  # noqa: E402
from fp32_harness import NotRunnable, compare, run  # noqa: E402

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WITH_LOGITS_RTOL = 2e-6  # ~17 ulp of float32: the with-logits form rounds differently


def _rtol(code: str) -> float:
    return WITH_LOGITS_RTOL if code == "AMP102" else 0.0


def _safe_fix(code: str, source: str):
    result = lint_source("case.py", source, Settings(frozenset({code})), fix=True)
    assert not result.errors, result.errors
    return result.fixed_source


def _proof(code: str, source: str, fixed: str):
    """None when not runnable; else the comparison's problems (None when equal)."""
    try:
        before = run(source)
    except NotRunnable:
        return "not runnable"
    try:
        after = run(fixed)
    except NotRunnable as exc:
        return f"the fixed program fails where the original ran: {exc}"
    reference = None
    if _rtol(code):
        try:
            reference = run(source, float64=True)
        except NotRunnable:  # a program with float32 written in it: no float64 twin
            pass
    return compare(before, after, _rtol(code), reference)


SAFE_PAIRS = sorted(
    p for p in FIXTURES.glob("AMP*/*.py")
    if not p.name.endswith(".fixed.py") and not p.stem.endswith("_unsafe")
)
SAFE_FLAGS = [
    (code, i, flag) for code, rule in sorted(all_rules().items())
    for i, flag in enumerate(rule.flag) if flag.fixed is not None and not flag.unsafe
]


def _check_all(items):
    ran, failures = [], []
    for label, code, source, fixed in items:
        verdict = _proof(code, source, fixed)
        if verdict == "not runnable":
            continue
        ran.append(label)
        if verdict is not None:
            failures.append(f"{label}: {verdict}")
    return ran, failures


def test_safe_fixture_pairs_keep_the_fp32_computation():
    items = []
    for case in SAFE_PAIRS:
        code = case.parent.name
        fixed = case.with_name(case.stem + ".fixed.py").read_text()
        items.append((f"{code}/{case.stem}", code, case.read_text(), fixed))
    ran, failures = _check_all(items)
    assert not failures, failures
    # the runnable fixtures (amplint_run) and the self-contained ones, at the least
    for must in ("AMP102/sigmoid_head", "AMP102/bce_criterion", "AMP101/moe_scatter",
                 "AMP122/unscaled_backward", "AMP104/train_loop", "AMP110/attention_mask"):
        assert must in ran, (must, ran)
    assert len(ran) >= 10, ran


def test_safe_flag_examples_keep_the_fp32_computation():
    items = [(f"{code} flag {i}", code, flag.code, flag.fixed) for code, i, flag in SAFE_FLAGS]
    ran, failures = _check_all(items)
    assert not failures, failures
    assert {"AMP102 flag 0", "AMP102 flag 2", "AMP101 flag 0"} <= set(ran), ran
    assert len(ran) >= 8, ran


# -- generated AMP102 programs -------------------------------------------------------------

SIGMOIDS = ["torch.sigmoid({})", "{}.sigmoid()", "F.sigmoid({})", "torch.special.expit({})"]
LOGITS = ["z", "net(x)", "z * 1.5", "model(x)[:, :4]"]
BETWEEN = ["", "z = z * 2", "z.mul_(0.5)", "z.data.add_(1.0)", "p.data.clamp_(0.2, 0.8)",
           "q = p * 2", "print(end='')", "z[0] = 0.0"]
CALLS = [
    "F.binary_cross_entropy({p}, y{extra})",
    "torch.nn.functional.binary_cross_entropy({p}, y{extra})",
    "nn.BCELoss({ctor})({p}, y)",
    "crit({p}, y)",
]
EXTRAS = ["", ", w", ", reduction='sum'", ", weight=w, reduction='none'", ", None, None, None, 'sum'"]
CTORS = ["", "w", "weight=w", "w, reduction='sum'", "reduction='none'"]


@st.composite
def bce_programs(draw):
    sigmoid = draw(st.sampled_from(SIGMOIDS))
    logits = draw(st.sampled_from(LOGITS))
    inline = draw(st.booleans())
    between = draw(st.sampled_from(BETWEEN))
    call = draw(st.sampled_from(CALLS))
    ctor = draw(st.sampled_from(CTORS))
    extra = draw(st.sampled_from(EXTRAS))
    reads_p = draw(st.booleans())
    arg = logits if sigmoid.startswith("torch") or sigmoid.startswith("F") else f"({logits})"
    prob = sigmoid.format(arg)
    lines = ["def f(net, model, x, z, y, w):", "    z = z * 1"]
    if call.startswith("crit"):
        lines.append(f"    crit = nn.BCELoss({ctor})")
    lines.append("    with torch.autocast('cuda'):")
    if inline:
        p = prob
    else:
        lines.append(f"        p = {prob}")
        p = "p"
    if between and (not inline or "p." not in between):
        lines.append(f"        {between}")
    lines.append("        loss = " + call.format(p=p, extra=extra, ctor=ctor))
    lines.append("        return loss, " + ("p.sum()" if reads_p and not inline else "z.sum()"))
    return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + "\n".join(lines) + "\n"


@settings(max_examples=int(os.environ.get("AMPLINT_FP32_EXAMPLES", "60")), deadline=None,
          derandomize=bool(os.environ.get("CI")))
@given(bce_programs())
def test_generated_bce_programs_keep_the_fp32_computation(source):
    fixed = _safe_fix("AMP102", source)
    assert fixed is not None, source  # every generated call is under CUDA autocast: fixed
    verdict = _proof("AMP102", source, fixed)
    assert verdict in (None, "not runnable"), (verdict, source, fixed)
    assert verdict is None or "net(x)" in source or "model(x)" in source, (verdict, source)
