"""Every rule's own examples: each `flag` case is reported (and fixed as declared), each `clean`
case is silent. Adding a rule adds its cases here automatically."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source, valid_python
from amplint.analysis.rules import all_rules

FLAG_CASES = [
    pytest.param(rule, i, case, id=f"{code}-flag-{i}")
    for code, rule in all_rules().items()
    for i, case in enumerate(rule.flag)
]
CLEAN_CASES = [
    pytest.param(rule, i, source, id=f"{code}-clean-{i}")
    for code, rule in all_rules().items()
    for i, source in enumerate(rule.clean)
]


def test_every_rule_has_examples_both_ways():
    for code, rule in all_rules().items():
        assert len(rule.flag) >= 2, f"{code} needs must-flag examples"
        assert len(rule.clean) >= 2, f"{code} needs must-stay-clean examples"


def test_the_codes_known_without_importing_the_rules_are_theirs(monkeypatch):
    """rule_codes(), read from the rule modules' names and data/rule_defaults.py (what a warm run
    selects from), names every rule and its default as the rule classes do."""
    import amplint.analysis.rules as rules

    expected = {code: rule.default for code, rule in all_rules().items()}
    monkeypatch.setattr(rules, "_REGISTRY", None)
    assert rules.rule_codes() == expected
    assert list(rules.rule_codes()) == sorted(expected)


@pytest.mark.parametrize("rule,index,case", FLAG_CASES)
def test_flag_examples(rule, index, case):
    settings = Settings(frozenset({rule.code}), unsafe_fixes=case.unsafe)
    result = lint_source("example.py", case.code, settings)
    assert not result.errors
    codes = [d.code for d in result.diagnostics]
    assert codes == [rule.code] * case.count, [d.message for d in result.diagnostics]
    fixed = lint_source("example.py", case.code, settings, fix=True)
    if case.fixed is None:
        assert fixed.fixed_source is None, "no edit expected"
    else:
        assert fixed.fixed_source == case.fixed
        assert valid_python(fixed.fixed_source)
        again = lint_source("example.py", fixed.fixed_source, settings, fix=True)
        assert again.fixed_source is None, "fix is not idempotent"
        assert not [d for d in again.diagnostics if d.fix and settings.allows(d.fix)]


@pytest.mark.parametrize("rule,index,source", CLEAN_CASES)
def test_clean_examples(rule, index, source):
    result = lint_source("example.py", source, Settings(frozenset({rule.code})))
    assert not result.errors
    assert [d.code for d in result.diagnostics] == [], [d.message for d in result.diagnostics]
