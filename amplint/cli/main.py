"""`amplint [OPTIONS] PATHS...` — the command users type (also `python -m amplint`)."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence, Tuple

import click

from amplint.workspace.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR

from amplint import __version__
from amplint.workspace.config import ConfigError, find_pyproject, load, selection
from amplint.report.docs import explain as explain_page
from amplint.analysis.results import Settings
from amplint.analysis.rules import all_rules

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json", "github", "sarif", "junit")


def _split(values: Tuple[str, ...]) -> list:
    return [part for value in values for part in value.split(",") if part.strip()]


def explain(code: str) -> str:
    page = explain_page(code)  # shared with the language server's hover
    if page is None:
        raise click.UsageError(f"unknown rule code `{code}` (see `amplint --list-rules`)")
    return page


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
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text, json, github (workflow annotations), sarif (2.1.0), junit.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the report to FILE instead of standard output.")
@click.option("--statistics", is_flag=True, help="Show counts per code instead of the findings.")
@click.option("--show-fixes", is_flag=True, help="Show each finding's fix, and list the fixes applied.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding.")
@click.option("--write-baseline", "write_baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Record the current findings in FILE and exit 0.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report only findings that FILE (from --write-baseline) does not have.")
@click.option("--explain", "explain_code", metavar="CODE", help="Show a rule's documentation.")
@click.option("--list-rules", "list_all", is_flag=True, help="List every rule.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths given explicitly too.")
@click.option("--config", "config_path", type=click.Path(), help="Use this pyproject.toml.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes to use (default: all cores).")
@click.option("--no-cache", is_flag=True, help="Analyse every file, ignoring and not writing the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Where to keep the cache (default: $AMPLINT_CACHE_DIR, else .amplint_cache next to pyproject.toml).")
@click.option("--verbose", "-v", is_flag=True,
              help="Show the traceback of internal errors (to report them).")
@click.option("--show-regions", is_flag=True,
              help="List each autocast region, what it reaches in other files and what it cannot resolve.")
@click.option("--call-graph", "call_graph", is_flag=True,
              help="Print the project's call graph (PyCG's JSON shape) as the value flow resolves it, and exit.")
@click.option("--isolated-files", is_flag=True,
              help="Lint each file on its own (no cross-file or framework-implied regions).")
@click.option("--target-torch", metavar="VERSION",
              help="The oldest torch the project supports (default: read from its requirements).")
@click.option("--stdin-filename", metavar="PATH",
              help="With `-` as the path: lint standard input as if it were PATH.")
@click.version_option(__version__, prog_name="amplint")
def cli(
    paths: Sequence[str], fix: bool, unsafe_fixes: bool, diff: bool, select, extend_select,
    ignore, output_format: str, output_file: Optional[str], statistics: bool, show_fixes: bool,
    exit_zero: bool, add_noqa: bool, write_baseline: Optional[str],
    baseline_path: Optional[str], explain_code: Optional[str], list_all: bool,
    force_exclude: bool, config_path: Optional[str], jobs: Optional[int], no_cache: bool,
    cache_dir: Optional[str], verbose: bool, isolated_files: bool,
    stdin_filename: Optional[str], show_regions: bool = False, call_graph: bool = False,
    target_torch: Optional[str] = None,
) -> None:
    """Find and fix PyTorch mixed-precision (AMP) hazards in PATHS (default: the current directory).

    `amplint check PATHS` is the same command (as Ruff spells it); `amplint server` starts the
    language server (`pip install "amplint[server]"`). `-` reads standard input
    (name it with --stdin-filename; with --fix the fixed text goes to standard output).

    Exit status: 0 nothing left to report, 1 findings remain or a file or path could not
    be checked, 2 usage, configuration or internal error.
    """
    if tuple(paths) == ("server",):  # `amplint server`: the language server (amplint[server])
        from amplint.cli.server import main as serve

        sys.exit(serve())
    if explain_code is not None:
        click.echo(explain(explain_code), nl=False)
        return
    if list_all:
        click.echo(list_rules(), nl=False)
        return
    if call_graph:
        _call_graph(paths or (".",), None if no_cache else (
            cache_dir or os.environ.get("AMPLINT_CACHE_DIR") or os.path.join(os.getcwd(), DEFAULT_CACHE_DIR)))
        return
    if add_noqa and (fix or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix or --diff")
    if write_baseline and baseline_path:
        raise click.UsageError("--write-baseline and --baseline cannot be combined")
    from amplint.workspace.baseline import Baseline, BaselineError, write as write_baseline_file
    from amplint.run.runner import RunOptions, run
    from amplint.report import github, json as json_report, junit, sarif, text as text_report

    paths = tuple(paths)
    if paths[:1] == ("check",):  # Ruff's `ruff check PATHS` shape
        paths = paths[1:]
    use_stdin = paths == ("-",) or (not paths and stdin_filename is not None)
    paths = paths or (".",)
    try:
        config = load(config_path or find_pyproject(
            (stdin_filename or ".") if use_stdin else paths[0]))
        codes = selection(
            config,
            select=_split(select) if select else None,
            extend_select=_split(extend_select),
            ignore=_split(ignore),
        )
        baseline = Baseline.load(baseline_path) if baseline_path else None
    except (ConfigError, BaselineError) as exc:
        click.echo(f"amplint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if show_regions:
        _show_regions(paths, config, output_format)
        return
    from amplint.workspace.project_root import torch_target
    from amplint.workspace.torch_requirement import target_from_setting

    try:
        override = target_from_setting(target_torch, "--target-torch") if target_torch else None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    target = torch_target([stdin_filename or "."] if use_stdin else paths, config, override)
    settings = Settings(codes, unsafe_fixes or config.unsafe_fixes, target)
    if no_cache:
        cache_dir = None
    elif cache_dir is None:
        cache_dir = os.environ.get("AMPLINT_CACHE_DIR")
        if not cache_dir:
            root = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
            cache_dir = os.path.join(root, DEFAULT_CACHE_DIR)
    options = RunOptions(
        fix=fix, diff=diff, force_exclude=force_exclude, add_noqa=add_noqa, jobs=jobs,
        cache_dir=cache_dir, project=not isolated_files, name_slow_files=verbose,
    )
    if use_stdin:
        outcome = _lint_stdin(stdin_filename, settings, options, config, baseline)
    else:
        outcome = run(paths, settings, options, config, baseline, sys.stderr)
        if not outcome.files and not outcome.summary.errors and not outcome.summary.warnings:
            click.echo("warning: No Python files found under the given path(s)", err=True)
    summary = outcome.summary
    for line in summary.warnings:
        click.echo(f"warning: {line}", err=True)
    for line in summary.errors:
        click.echo(f"error: {line}", err=True)
    if verbose:
        for trace in outcome.tracebacks:
            click.echo(trace.rstrip("\n"), err=True)
    if add_noqa:
        noun = "directive" if outcome.noqa_added == 1 else "directives"
        click.echo(f"Added {outcome.noqa_added} noqa {noun}.", err=True)
        sys.exit(_exit_status(outcome, summary.errors and not exit_zero))
    if write_baseline:
        try:
            count = write_baseline_file(write_baseline, summary.diagnostics)
        except BaselineError as exc:
            click.echo(f"amplint: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        noun = "finding" if count == 1 else "findings"
        click.echo(f"Wrote {count} {noun} to the baseline {write_baseline}.", err=True)
        sys.exit(_exit_status(outcome, summary.errors and not exit_zero))
    if diff:
        click.echo("".join(outcome.diffs), nl=False)
    renderers = {"text": text_report, "json": json_report, "github": github, "sarif": sarif,
                 "junit": junit}
    renderer = renderers[output_format]
    report = None
    if statistics:
        report = (json_report if output_format == "json" else text_report).render_statistics(summary)
    elif not diff or output_format != "text":
        report = renderer.render(summary, show_fixes=show_fixes)
    if report is not None:
        if output_file:
            try:
                with open(output_file, "w", encoding="utf-8") as handle:
                    handle.write(report)
            except OSError as exc:
                click.echo(f"amplint: error: {output_file}: cannot write: {exc.strerror or exc}",
                           err=True)
                sys.exit(EXIT_ERROR)
        else:  # with stdin and --fix, standard output carries the fixed text
            click.echo(report, nl=False, err=use_stdin and fix)
    if outcome.internal_error:  # reported with every other result above; the run went on
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_OK)
    if summary.diagnostics or summary.errors or (diff and outcome.diffs):
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)


def _lint_stdin(filename, settings, options, config, baseline):
    from amplint.report.diffs import unified_diff
    from amplint.report import RunSummary
    from amplint.run.runner import RunOutcome
    from amplint.cli.stdin import lint_stdin

    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        error = f"{filename or '-'}: not valid UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})"
        if options.fix:
            sys.stdout.buffer.write(data)
        return RunOutcome(RunSummary(errors=[error]), [])
    summary, fixed = lint_stdin(text, filename, settings, config, options.fix or options.diff,
                                options.project, options.cache_dir)
    diffs = []
    if options.fix:
        sys.stdout.write(fixed if fixed is not None else text)
        sys.stdout.flush()
    elif options.diff and fixed is not None:
        diffs.append(unified_diff(filename or "-", text, fixed))
    if baseline is not None:
        summary.diagnostics, summary.baselined = baseline.filter(summary.diagnostics)
    return RunOutcome(summary, diffs, files=[filename or "-"])


def _exit_status(outcome, failing) -> int:
    if outcome.internal_error:
        return EXIT_ERROR
    return EXIT_FINDINGS if failing else EXIT_OK


def _call_graph(paths, cache_dir: Optional[str]) -> None:
    from amplint.analysis.project.callgraph import main as call_graph_json
    from amplint.workspace.cache import Cache

    text, errors = call_graph_json(paths, Cache(cache_dir) if cache_dir else None)
    for line in errors:
        click.echo(line, err=True)
    click.echo(text, nl=False)
    if errors:
        raise SystemExit(1)


def _show_regions(paths, config, output_format: str) -> None:
    from amplint.run.reach_report import show_regions
    from amplint.run.runner import excludes_for

    click.echo(show_regions(paths, config, excludes_for(config), output_format), nl=False)


def main() -> None:
    cli(prog_name="amplint")
