"""The rules that are off by default (their class sets `default = False`): what
amplint.analysis.rules.rule_codes reads to select codes without importing the rules.
tests/test_rules.py checks it against the rule classes. Every rule is on by default today."""

OFF_BY_DEFAULT: frozenset = frozenset()
