"""A rule's findings do not depend on which other rules run: the same source linted with one
rule selected and with every rule gives that rule the same findings. Facts are shared between
rules (computed once per file), so a fact that keeps state from one rule's walk into the next
would make `--select AMP141` and a default run disagree; this test runs every rule's own
examples (flag and clean) and a few files where the walks' state matters."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules import all_rules

ALL = frozenset(all_rules())

# a local read, in a loop, before the statement that assigns it: AMP140's walk once left the
# assignment behind, and AMP141's walk after it saw `h` as float16 where AMP141 alone did not
LOOP_READ_BEFORE_ASSIGN = """\
import torch


def accumulate(x, eps=1e-8):
    total = 0
    for step in range(4):
        if step:
            total = total + h.sum() / (h.norm() + eps)
        h = x.half()
    return total
"""

SOURCES = [pytest.param(LOOP_READ_BEFORE_ASSIGN, "AMP141", id="loop-read-before-assign")] + [
    pytest.param(case.code, code, id=f"{code}-flag-{i}")
    for code, rule in all_rules().items() for i, case in enumerate(rule.flag)
] + [
    pytest.param(source, code, id=f"{code}-clean-{i}")
    for code, rule in all_rules().items() for i, source in enumerate(rule.clean)
]


def found(source, select):
    result = lint_source("example.py", source, Settings(select))
    return sorted((d.code, d.line, d.column, d.message) for d in result.diagnostics)


@pytest.mark.parametrize("source,own", SOURCES)
def test_each_rule_alone_finds_what_it_finds_among_all(source, own):
    """Every code reported among all, and the example's own rule, alone."""
    together = found(source, ALL)
    for code in sorted({f[0] for f in together} | {own}):
        alone = found(source, frozenset({code}))
        assert alone == [f for f in together if f[0] == code], code
