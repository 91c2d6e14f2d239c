"""A file written for a newer Python than the one amplint runs under (r18-realread: four
huggingface/lerobot files, requires-python >= 3.12, with PEP 695 `type X = ...` and
`class C[T]:`, read as "syntax error: invalid syntax" under Python 3.11, while a file of the same
kind that had AMP terms was linted without a word): one line per file naming the construct and
the Python it needs, in every output format, and the run goes on. A real syntax error keeps
Python's own message."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="needs a Python older than 3.12")

ALIAS = "type Batch = dict[str, list[int]]\n\n\nclass Queue[T]:\n    pass\n"
NESTED = "import torch\n\nname = 'x'\nlabel = f\"{f\"{name}\"}\"\nwith torch.cuda.amp.autocast():\n    pass\n"
GENERIC = ("import torch\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n\n\n"
           "with torch.cuda.amp.autocast():\n    pass\n")
BROKEN = "print 'hello'\n"
GOOD = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, text in (("types.py", ALIAS), ("labels.py", NESTED), ("helpers.py", GENERIC),
                       ("broken.py", BROKEN), ("good.py", GOOD)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args):
    return CliRunner().invoke(cli, ["--no-cache", *args, "."])


def test_each_newer_file_gets_one_line_naming_the_construct_and_the_run_goes_on(project):
    result = run()
    lines = result.stderr.splitlines()
    for name, what in (("types.py:1:", "`type` alias"), ("labels.py:4:", "f-string"),
                       ("helpers.py:4:", "type parameters")):
        mine = [line for line in lines if name in line]
        assert len(mine) == 1, lines
        assert "Python 3.12 syntax" in mine[0] and what in mine[0] and "syntax error" not in mine[0]
    assert [line for line in lines if "broken.py" in line] == [
        "error: broken.py:1:1: syntax error: Missing parentheses in call to 'print'. Did you mean print(...)?"]
    # the run went on: the good file and the newer files with AMP terms are linted
    assert "good.py:2:6: AMP130" in result.stdout and "helpers.py:8:6: AMP130" in result.stdout
    assert result.exit_code == 1


def test_the_line_is_an_error_item_in_json_sarif_junit_and_github(project):
    items = json.loads(run("--output-format", "json").stdout)
    errors = {item["filename"]: item for item in items if item["code"] is None}
    assert set(errors) == {"types.py", "labels.py", "helpers.py", "broken.py"}
    assert errors["types.py"]["line"] == 1 and "Python 3.12 syntax" in errors["types.py"]["message"]
    sarif = json.loads(run("--output-format", "sarif").stdout)
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "amplint-error"]
    assert sum("Python 3.12 syntax" in text for text in texts) == 3
    junit = run("--output-format", "junit").stdout
    assert junit.count("Python 3.12 syntax (") == 6  # message attribute and text, 3 files
    github = run("--output-format", "github").stdout
    assert sum(line.startswith("::error") and "Python 3.12 syntax" in line
               for line in github.splitlines()) == 3
