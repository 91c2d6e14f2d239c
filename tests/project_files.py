"""The multi-file test projects under tests/projects/, read as path -> text (shared by tests)."""

from __future__ import annotations

import json
import os

PROJECTS = os.path.join(os.path.dirname(__file__), "projects")


def load(name, replace=()):
    root = os.path.join(PROJECTS, name)
    files = {}
    for folder, _, names in os.walk(root):
        for file_name in sorted(names):
            path = os.path.join(folder, file_name)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            for old, new in replace:
                text = text.replace(old, new)
            files[os.path.relpath(path, PROJECTS).replace(os.sep, "/")] = text
    return files


def python_texts_under(root):
    """The text of every `.py` file below `root`, folders and names in sorted order (tests that
    check a cheap reading against the full one on this repository's own modules)."""
    texts = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    texts.append(handle.read())
    return texts


def own_package_texts(sub=""):
    """`python_texts_under` amplint's own package (or its folder `sub`)."""
    return python_texts_under(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                           "amplint", sub))


def cli_output(root, *args) -> str:
    """What `amplint --output-format json ARGS .` run in `root` through the CLI prints (the
    JSON findings, or a diff with --diff)."""
    from click.testing import CliRunner

    from amplint.cli.main import cli

    old = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["--output-format", "json", *args, "."])
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def cli_diagnostics(root, *args):
    """`amplint --output-format json ARGS .` run in `root` through the CLI: its diagnostics."""
    return json.loads(cli_output(root, *args))


def cli_findings(root, *args, codes=("AMP",)):
    """Sorted (file, line, code) of the CLI's findings whose code starts with one of `codes`."""
    return sorted((d["filename"], d["line"], d["code"]) for d in cli_diagnostics(root, *args)
                  if d["code"].startswith(tuple(codes)))


def project_findings(results, skip=()):
    """Sorted (path inside its project, line, code) of `lint_project`'s results, less the codes
    in `skip`."""
    return sorted((path.split("/", 1)[1], d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code not in skip)


def code_findings(files, code, settings=None):
    """(the findings of one rule code in `files` linted as a project, as project_findings
    gives them; the results)."""
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import lint_project

    results = lint_project(files, settings or Settings.default())
    return [f for f in project_findings(results) if f[2] == code], results


def assert_warm_run_follows_an_edit(tmp_path, name, edited, edits, code, expected):
    """Project `name` copied under `tmp_path`, linted through the CLI with a cache: `expected`
    (sorted (file, line, code) of `code`) cold and warm; after `edits` ((old, new) pairs) to the
    file `edited` only, no finding (the reporting file did not change); back again after the
    edit is undone."""
    import shutil

    root = tmp_path / name
    shutil.copytree(os.path.join(PROJECTS, name), root)
    cache = str(tmp_path / "cache")

    def run():
        return cli_findings(root, "--cache-dir", cache, codes=(code,))

    assert run() == expected
    assert run() == expected
    path = root / edited
    text = path.read_text()
    changed = text
    for old, new in edits:
        changed = changed.replace(old, new)
    assert changed != text
    path.write_text(changed)
    assert run() == []
    path.write_text(text)
    assert run() == expected
