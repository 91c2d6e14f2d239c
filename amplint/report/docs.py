"""The README's rule table, generated from the registry: `python -m amplint.report.docs README.md`
rewrites the block between the markers; tests/test_docs.py checks it is up to date."""

from __future__ import annotations

import sys

from amplint.analysis.rules import all_rules

START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def explain(code: str) -> "str | None":
    """The `--explain` page of a rule (None: no rule has this code)."""
    rule = all_rules().get(code.strip().upper())
    if rule is None:
        return None
    default = "" if rule.default else "\n\nThis rule is off by default; enable it with `--extend-select`."
    header = (
        f"# {rule.code} {rule.name}\n\n"
        f"Severity: {rule.severity.value} · Fix: {rule.fix_safety}{default}\n\n"
    )
    return header + rule.docs() + "\n"


def rule_table() -> str:
    rows = ["| code | name | severity | fix | default | what it finds |", "|---|---|---|---|---|---|"]
    for code, rule in all_rules().items():
        summary = " ".join(rule.summary().split()).replace("|", "\\|")
        rows.append(
            f"| {code} | {rule.name} | {rule.severity.value} | {rule.fix_safety} | "
            f"{'on' if rule.default else 'off'} | {summary} |"
        )
    return "\n".join(rows)


def update(text: str) -> str:
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{rule_table()}\n{END}{tail}"


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "README.md"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    new = update(text)
    if new != text:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(new)
        print(f"updated the rule table in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
