"""[tool.amplint] configuration and file discovery, through the CLI: select / ignore /
extend-select / per-file-ignores / exclude / extend-exclude / unsafe-fixes / respect-gitignore /
options, --config, the nearest pyproject.toml, .gitignore, default excludes, --force-exclude,
and bad configuration as a one-line error with exit 2."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.workspace.files import GitIgnore

FACTORY = """\
import torch
def step(x, idx, n):
    model = torch.nn.Linear(8, 8)
    with torch.autocast('cuda'):
        h = model(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
"""
BACKWARD = """\
import torch
def step(model, x, opt):
    with torch.autocast('cuda'):
        loss = model(x).mean()
        loss.backward()
        opt.step()
"""
HALF_INPUT = """\
import torch
def train(model, loader, opt):
    for x, y in loader:
        x = x.cuda().half()
        with torch.autocast('cuda'):
            loss = model(x, y)
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def reported(result):
    """(path, code) of each finding line."""
    out = []
    for line in result.stdout.splitlines():
        parts = line.split(": ", 1)
        if len(parts) == 2 and parts[1][:3] == "AMP" and parts[0].count(":") >= 2:
            out.append((parts[0].split(":")[0], parts[1].split()[0]))
    return out


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def config(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.amplint]\n" + body)


# -- rule selection -------------------------------------------------------------------------

def test_select_ignore_extend_select_from_pyproject(project):
    write(project, {"a.py": FACTORY + "\n" + BACKWARD.replace("import torch\n", "")})
    config(project, 'select = ["AMP104"]\n')
    assert reported(invoke(".")) == [("a.py", "AMP104")]
    config(project, 'ignore = ["AMP104"]\n')
    assert reported(invoke(".")) == [("a.py", "AMP101")]
    config(project, 'select = ["AMP104"]\nextend-select = ["AMP101"]\n')
    assert reported(invoke(".")) == [("a.py", "AMP101"), ("a.py", "AMP104")]


def test_command_line_select_overrides_and_ignore_adds(project):
    write(project, {"a.py": FACTORY + "\n" + BACKWARD.replace("import torch\n", "")})
    config(project, 'select = ["AMP104"]\n')
    assert reported(invoke("--select", "AMP101", ".")) == [("a.py", "AMP101")]
    config(project, 'ignore = ["AMP101"]\n')
    assert reported(invoke("--ignore", "AMP104", ".")) == []


def test_command_line_select_replaces_the_configured_selection(project):
    """Ruff's semantics: `--select` resets select, extend-select and ignore of the config;
    `--extend-select` and `--ignore` on the command line then apply."""
    write(project, {"a.py": FACTORY + "\n" + BACKWARD.replace("import torch\n", "")
                    + "\nctx = torch.cuda.amp.autocast()\n"})
    config(project, 'extend-select = ["AMP130"]\nignore = ["AMP104"]\n')
    assert [code for _, code in reported(invoke(".", ))] == ["AMP101", "AMP130"]
    assert [code for _, code in reported(invoke("--select", "AMP10", "."))] == ["AMP101", "AMP104"]
    assert [code for _, code in reported(invoke("--select", "AMP10", "--extend-select", "AMP130",
                                                "--ignore", "AMP101", "."))] == ["AMP104", "AMP130"]
    # without --select the configured selection stays; the command line applies after it
    assert [code for _, code in reported(invoke("--ignore", "AMP130", "."))] == ["AMP101"]
    assert [code for _, code in reported(invoke("--extend-select", "AMP104", "."))] == [
        "AMP101", "AMP104", "AMP130"]


def test_per_file_ignores(project):
    write(project, {"src/a.py": FACTORY, "tests/test_a.py": FACTORY, "tests/deep/b.py": FACTORY,
                    "scripts/gen.py": FACTORY})
    config(project, '[tool.amplint.per-file-ignores]\n"tests/**" = ["AMP101"]\n"gen.py" = ["AMP1"]\n')
    assert reported(invoke(".")) == [("src/a.py", "AMP101")]


def test_per_file_ignores_are_relative_to_the_pyproject(project, monkeypatch):
    write(project, {"pkg/tests/t.py": FACTORY, "pkg/src/a.py": FACTORY})
    config(project / "pkg", '[tool.amplint.per-file-ignores]\n"tests/*" = ["AMP101"]\n')
    monkeypatch.chdir(project / "pkg" / "src")
    result = invoke(str(project / "pkg"))
    assert [Path(p).name for p, _ in reported(result)] == ["a.py"]


def test_unsafe_fixes_from_pyproject(project):
    write(project, {"h.py": HALF_INPUT})
    config(project, "unsafe-fixes = true\n")
    result = invoke("--fix", "h.py")
    assert result.exit_code == 0, result.output
    assert "x = x.cuda()\n" in (project / "h.py").read_text()


def test_nearest_pyproject_with_a_table_wins_and_config_overrides(project):
    write(project, {"sub/a.py": FACTORY + "\n" + BACKWARD.replace("import torch\n", "")})
    config(project, 'select = ["AMP104"]\n')
    # A sub-package's pyproject.toml without [tool.amplint] is passed over.
    (project / "sub" / "pyproject.toml").write_text("[project]\nname = 'sub'\n")
    assert reported(invoke("sub")) == [("sub/a.py", "AMP104")]
    config(project / "sub", 'select = ["AMP101"]\n')
    assert reported(invoke("sub")) == [("sub/a.py", "AMP101")]
    other = project / "other.toml"
    other.write_text('[tool.amplint]\nignore = ["AMP1"]\n')
    result = invoke("--config", str(other), "sub")
    assert result.exit_code == 0 and reported(result) == []


# -- bad configuration: one line, exit 2, naming the key and the file ------------------------

@pytest.mark.parametrize("body, words", [
    ('selec = ["AMP101"]\n', ["unknown key `selec`"]),
    ('select = ["AMP999"]\n', ["`select`", "unknown rule code or prefix `AMP999`"]),
    ('ignore = ["XYZ"]\n', ["`ignore`", "`XYZ`"]),
    ('extend-select = ["AMP9"]\n', ["`extend-select`", "`AMP9`"]),
    ('select = "AMP101"\n', ["`select` must be a list of strings"]),
    ("unsafe-fixes = 1\n", ["`unsafe-fixes` must be true or false"]),
    ("respect-gitignore = 'no'\n", ["`respect-gitignore` must be true or false"]),
    ('exclude = [1]\n', ["`exclude` must be a list of strings"]),
    ('[tool.amplint.per-file-ignores]\n"tests/*" = ["AMP000"]\n', ["tests/*", "`AMP000`"]),
    ('per-file-ignores = ["x"]\n', ["`per-file-ignores` must be a table"]),
    ('[tool.amplint.options.AMP999]\nx = 1\n', ["unknown rule code `AMP999`"]),
    ('[tool.amplint.options.AMP101]\nthreshold = 1\n', ["unknown option `threshold` for AMP101"]),
    ("select = [\n", ["invalid TOML"]),
])
def test_bad_config_is_one_line_and_exit_2(project, body, words):
    write(project, {"a.py": FACTORY})
    config(project, body)
    result = invoke("a.py")
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"amplint: error: {project / 'pyproject.toml'}: ")
    for word in words:
        assert word in lines[0]
    assert result.stdout == ""


def test_missing_config_file_is_exit_2(project):
    write(project, {"a.py": FACTORY})
    result = invoke("--config", "nope.toml", "a.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("amplint: error: nope.toml: cannot read")


def test_amplint_table_must_be_a_table(project):
    (project / "pyproject.toml").write_text('[tool]\namplint = "yes"\n')
    write(project, {"a.py": FACTORY})
    result = invoke("a.py")
    assert result.exit_code == 2 and "[tool.amplint] must be a table" in result.stderr


# -- discovery ------------------------------------------------------------------------------

def test_default_excludes_skip_venvs_build_and_caches(project):
    names = [".venv/lib/x.py", "venv/y.py", "build/lib/z.py", "__pycache__/c.py",
             ".git/hooks/h.py", "node_modules/n.py", ".tox/t.py", "dist/d.py", "src/a.py"]
    write(project, {name: FACTORY for name in names})
    assert reported(invoke(".")) == [("src/a.py", "AMP101")]


def test_explicit_paths_are_linted_unless_force_exclude(project):
    write(project, {"build/gen.py": FACTORY, "legacy/old.py": FACTORY})
    config(project, 'extend-exclude = ["legacy"]\n')
    assert reported(invoke("build/gen.py", "legacy/old.py")) == [
        ("build/gen.py", "AMP101"), ("legacy/old.py", "AMP101")]
    result = invoke("--force-exclude", "build/gen.py", "legacy/old.py")
    assert result.exit_code == 0 and reported(result) == []
    assert invoke("--force-exclude", "legacy").exit_code == 0


def test_extend_exclude_adds_to_the_defaults(project):
    write(project, {"legacy/a.py": FACTORY, "src/gen_pb2.py": FACTORY, "src/a.py": FACTORY,
                    "src/vendor/v.py": FACTORY, "build/b.py": FACTORY})
    config(project, 'extend-exclude = ["legacy", "*_pb2.py", "src/vendor"]\n')
    assert reported(invoke(".")) == [("src/a.py", "AMP101")]


def test_exclude_replaces_the_defaults(project):
    write(project, {"legacy/a.py": FACTORY, "build/b.py": FACTORY, "src/a.py": FACTORY})
    config(project, 'exclude = ["legacy"]\n')
    assert reported(invoke(".")) == [("build/b.py", "AMP101"), ("src/a.py", "AMP101")]


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_gitignore_is_honoured_in_a_git_work_tree(project):
    git_init(project)
    write(project, {
        ".gitignore": "generated/\n*_tmp.py\n/top_only.py\n!keep_tmp.py\n",
        "src/.gitignore": "local.py\n",
        "generated/g.py": FACTORY, "src/x_tmp.py": FACTORY, "src/keep_tmp.py": FACTORY,
        "top_only.py": FACTORY, "src/top_only.py": FACTORY, "src/local.py": FACTORY,
        "src/a.py": FACTORY,
    })
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("scratch.py\n")
    write(project, {"src/scratch.py": FACTORY})
    assert reported(invoke(".")) == [
        ("src/a.py", "AMP101"), ("src/keep_tmp.py", "AMP101"), ("src/top_only.py", "AMP101")]
    # Walking a sub-folder still applies the parent's .gitignore.
    assert reported(invoke("src")) == [
        ("src/a.py", "AMP101"), ("src/keep_tmp.py", "AMP101"), ("src/top_only.py", "AMP101")]
    # Named explicitly: linted, unless --force-exclude (what pre-commit passes).
    assert reported(invoke("generated/g.py")) == [("generated/g.py", "AMP101")]
    assert reported(invoke("--force-exclude", "generated/g.py", "src/x_tmp.py")) == []
    config(project, "respect-gitignore = false\n")
    assert len(reported(invoke("."))) == 8


def test_gitignore_outside_a_git_work_tree_is_not_used(project):
    write(project, {".gitignore": "*.py\n", "a.py": FACTORY})
    assert reported(invoke(".")) == [("a.py", "AMP101")]


GITIGNORE_CASES = [
    "*.py", "/root.py", "build/", "docs/*.py", "**/gen/*.py", "a/**/b.py", "logs/**",
    "*.py\n!keep.py", "dir/\n!dir/keep.py", "[ab]*.py", "x?.py", "\\#hash.py", "deep/er/",
    "*.pyc\n# comment\n\n", "name.py   ", "foo/**/", "!*.py", "src", "/src/",
    # several rules, none negated: matched as one alternation (IgnoreFile._union)
    "build/\ndocs/*.py\n/root.py\nx?.py", "gen/\n*/b.py\n[ab]1.py",
]
GITIGNORE_PATHS = [
    "root.py", "sub/root.py", "build/x.py", "sub/build/x.py", "docs/a.py", "docs/sub/a.py",
    "gen/m.py", "pkg/gen/m.py", "a/b.py", "a/x/y/b.py", "logs/a/b.py", "keep.py", "dir/keep.py",
    "dir/other.py", "b1.py", "c1.py", "x1.py", "#hash.py", "deep/er/file.py", "name.py",
    "foo/bar/baz.py", "src/m.py", "lib/src/m.py", "plain.py",
]


@pytest.mark.parametrize("patterns", GITIGNORE_CASES)
def test_gitignore_matching_agrees_with_git(tmp_path, patterns):
    git_init(tmp_path)
    (tmp_path / ".gitignore").write_text(patterns + "\n")
    for rel in GITIGNORE_PATHS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    proc = subprocess.run(["git", "check-ignore", "--stdin"], input="\n".join(GITIGNORE_PATHS),
                          capture_output=True, text=True, cwd=tmp_path)
    by_git = set(proc.stdout.split())
    ours = GitIgnore()
    by_us = {rel for rel in GITIGNORE_PATHS if ours.ignored_with_parents(str(tmp_path / rel), False)}
    assert by_us == by_git


def test_nested_gitignore_files_agree_with_git_on_a_walk(tmp_path):
    """Each directory's chain of ignore files (GitIgnore._find_chain, built from its parent's)
    on a walk: a negation in a nested file, a file two levels down, and a sibling without one."""
    from amplint.workspace.files import discover

    git_init(tmp_path)
    layout = {
        ".gitignore": "*_tmp.py\nout/\n",
        "pkg/.gitignore": "!keep_tmp.py\nlocal.py\n",
        "pkg/sub/deeper/.gitignore": "*.py\n!main.py\n",
        "other/.gitignore": "gen/\n",
    }
    files = ["a_tmp.py", "keep_tmp.py", "pkg/keep_tmp.py", "pkg/x_tmp.py", "pkg/local.py",
             "pkg/sub/local.py", "pkg/sub/deeper/main.py", "pkg/sub/deeper/util.py",
             "pkg/sub/ok.py", "other/gen/m.py", "other/local.py", "out/o.py", "pkg/out/o.py", "top.py"]
    for rel, text in layout.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    proc = subprocess.run(["git", "check-ignore", "--stdin"], input="\n".join(files),
                          capture_output=True, text=True, cwd=tmp_path)
    kept_by_git = set(files) - set(proc.stdout.split())
    found, errors = discover([str(tmp_path)])
    assert not errors
    assert {os.path.relpath(f, tmp_path) for f in found} == kept_by_git


def test_rule_options_are_checked_against_the_rule(project, monkeypatch):
    """No rule has options yet: give one a declared option and check the table's handling."""
    from amplint.workspace.config import load
    from amplint.analysis.rules import all_rules

    write(project, {"a.py": FACTORY})
    config(project, "[tool.amplint.options]\n")
    assert invoke("a.py").exit_code == 1  # an empty options table is fine
    monkeypatch.setattr(type(all_rules()["AMP101"]), "options", {"threshold": 0.5, "strict": False},
                        raising=False)
    config(project, "[tool.amplint.options.AMP101]\nthreshold = 2\n")
    assert invoke("a.py").exit_code == 1
    assert load(str(project / "pyproject.toml")).rule_options == {
        "AMP101": {"threshold": 2, "strict": False}}
    config(project, "[tool.amplint.options.AMP101]\nstrict = 'yes'\n")
    result = invoke("a.py")
    assert result.exit_code == 2
    assert "option `strict` of AMP101 must be bool, not str" in result.stderr
    config(project, "[tool.amplint.options.AMP101]\nstrictness = true\n")
    result = invoke("a.py")
    assert result.exit_code == 2
    assert "unknown option `strictness` for AMP101" in result.stderr
    assert "its options: `strict`, `threshold`" in result.stderr
