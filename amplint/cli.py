"""`amplint [OPTIONS] PATHS...` — the command users type (also `python -m amplint`)."""

from __future__ import annotations

import sys
from typing import Optional, Sequence, Tuple

import click

from amplint import __version__
from amplint.config import Config, ConfigError, find_pyproject, load, selection
from amplint.engine import Settings
from amplint.rules import all_rules

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json")


def _split(values: Tuple[str, ...]) -> list:
    return [part for value in values for part in value.split(",") if part.strip()]


def explain(code: str) -> str:
    rule = all_rules().get(code.strip().upper())
    if rule is None:
        raise click.UsageError(f"unknown rule code `{code}` (see `amplint --list-rules`)")
    default = "" if rule.default else "\n\nThis rule is off by default; enable it with `--extend-select`."
    header = (
        f"# {rule.code} {rule.name}\n\n"
        f"Severity: {rule.severity.value} · Fix: {rule.fix_safety}{default}\n\n"
    )
    return header + rule.docs() + "\n"


def list_rules() -> str:
    rows = []
    for code, rule in all_rules().items():
        state = "" if rule.default else "  (off by default)"
        rows.append(f"{code}  {rule.name:<36} {rule.severity.value:<8} fix: {rule.fix_safety}{state}")
    return "\n".join(rows) + "\n"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the diff --fix would make; write nothing.")
@click.option("--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add codes or prefixes.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes.")
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--explain", "explain_code", metavar="CODE", help="Show a rule's documentation.")
@click.option("--list-rules", "list_all", is_flag=True, help="List every rule.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths given explicitly too.")
@click.option("--config", "config_path", type=click.Path(), help="Use this pyproject.toml.")
@click.version_option(__version__, prog_name="amplint")
def cli(
    paths: Sequence[str], fix: bool, unsafe_fixes: bool, diff: bool, select, extend_select,
    ignore, output_format: str, exit_zero: bool, explain_code: Optional[str], list_all: bool,
    force_exclude: bool, config_path: Optional[str],
) -> None:
    """Find and fix PyTorch mixed-precision (AMP) hazards in PATHS (default: the current directory).

    Exit status: 0 nothing left to report, 1 findings or unreadable files remain,
    2 usage, configuration or internal error.
    """
    if explain_code is not None:
        click.echo(explain(explain_code), nl=False)
        return
    if list_all:
        click.echo(list_rules(), nl=False)
        return
    from amplint.runner import RunOptions, run
    from amplint.report import json as json_report, text as text_report

    paths = tuple(paths) or (".",)
    try:
        config = load(config_path or find_pyproject(paths[0]))
        codes = selection(
            config,
            select=_split(select) if select else None,
            extend_select=_split(extend_select),
            ignore=_split(ignore),
        )
    except ConfigError as exc:
        click.echo(f"amplint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    settings = Settings(codes, unsafe_fixes or config.unsafe_fixes)
    outcome = run(paths, settings, RunOptions(fix=fix, diff=diff, force_exclude=force_exclude), config)
    summary = outcome.summary
    for line in summary.errors:
        click.echo(f"error: {line}", err=True)
    if diff:
        click.echo("".join(outcome.diffs), nl=False)
    renderer = json_report if output_format == "json" else text_report
    if not diff or output_format == "json":
        click.echo(renderer.render(summary), nl=False)
    if outcome.internal_error:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_OK)
    if summary.diagnostics or summary.errors or (diff and outcome.diffs):
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)


def main() -> None:
    cli(prog_name="amplint")
