"""Jupyter notebooks through the CLI: code cells are linted as one module, findings name the
cell and the line in it, IPython magics and shell escapes are left alone, and --fix rewrites
only the edited cells' `source`, keeping every other byte of the JSON (outputs, metadata,
layout) as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli

# the first code cell also builds the model the later cells run
IMPORTS = ["%matplotlib inline\n", "import torch\n", "model = torch.nn.Linear(8, 8)\n", "!nvidia-smi"]
FACTORY_CELL = [
    "def step(x, idx, n):\n",
    "    with torch.autocast('cuda'):\n",
    "        h = model(x)\n",
    "        %time y = 1\n",
    "        out = torch.zeros(n, h.shape[-1], device=h.device)\n",
    "        out[idx] = h\n",
    "files = !ls\n",
    "torch.zeros?",
]
BACKWARD_CELL = [
    "def g(model, x, opt):\n",
    "    with torch.autocast('cuda'):\n",
    "        loss = model(x).mean()\n",
    "        loss.backward()\n",
    "        %time opt.step()\n",
    "        !echo stepped \\\n",
    "            twice\n",
    "    return loss",
]
BASH_CELL = ["%%bash\n", "python -c 'import torch; torch.zeros(3)'\n"]
OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["héllo ✓\n", "done\n"]}


def notebook(*cells, metadata=None):
    out = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training notes ✓\n", "text"]}]
    for number, source in enumerate(cells, start=1):
        out.append({"cell_type": "code", "execution_count": number, "metadata": {"tags": []},
                    "outputs": [OUTPUT], "source": source})
    return {"cells": out, "metadata": metadata or {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.7"}},
        "nbformat": 4, "nbformat_minor": 5}


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def save(path: Path, document, **dump) -> bytes:
    dump.setdefault("indent", 1)
    dump.setdefault("ensure_ascii", False)
    data = (json.dumps(document, **dump) + "\n").encode()
    path.write_bytes(data)
    return data


def test_findings_name_the_cell_and_line(project):
    save(project / "train.ipynb", notebook(IMPORTS, FACTORY_CELL, BASH_CELL, BACKWARD_CELL))
    result = invoke("train.ipynb")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    # Cell numbers count every cell (the markdown one is cell 1), lines are within the cell;
    # the message's "autocast at line 2" is the cell's line 2 too.
    assert lines[0].startswith("train.ipynb:cell 3:5:15: AMP101 [*] ")
    assert "(autocast at line 2)" in lines[0]
    assert lines[1].startswith("train.ipynb:cell 5:4:9: AMP104 [*] ")
    assert lines[2] == "Found 2 findings."
    assert result.stderr == ""  # the magics did not break parsing


def test_json_output_has_the_cell(project):
    save(project / "train.ipynb", notebook(IMPORTS, FACTORY_CELL))
    (item,) = json.loads(invoke("--output-format", "json", "train.ipynb").stdout)
    assert (item["cell"], item["line"], item["column"]) == (3, 5, 15)
    assert item["filename"] == "train.ipynb"


def test_imports_in_an_earlier_cell_bind_torch_in_later_ones(project):
    save(project / "a.ipynb", notebook(["import torch as th\n", "model = th.nn.Linear(8, 8)\n"], [
        "with th.autocast('cuda'):\n", "    buf = th.zeros(4, 8, device=x.device)\n",
        "    buf[idx] = model(x)\n"]))
    result = invoke("a.ipynb")
    assert result.stdout.startswith("a.ipynb:cell 3:2:11: AMP101")


@pytest.mark.parametrize("layout", [
    {"indent": 1, "ensure_ascii": False, "sort_keys": True},  # what Jupyter writes
    {"indent": 2, "ensure_ascii": False},
    {"indent": 1, "ensure_ascii": True},  # \u escapes kept as escapes
    {"indent": None, "separators": (",", ":"), "ensure_ascii": False},  # one line
])
def test_fix_changes_only_the_edited_cells_bytes(project, layout):
    document = notebook(IMPORTS, FACTORY_CELL, BASH_CELL, BACKWARD_CELL)
    before = save(project / "train.ipynb", document, **layout)
    result = invoke("--fix", "train.ipynb")
    assert result.exit_code == 0, result.output
    after = (project / "train.ipynb").read_bytes()
    expected = json.loads(before)
    fixed_factory = list(FACTORY_CELL)
    fixed_factory[4] = "        out = h.new_zeros(n, h.shape[-1])\n"
    fixed_backward = list(BACKWARD_CELL)
    fixed_backward[3:7] = ["    loss.backward()\n", "    %time opt.step()\n",
                           "    !echo stepped \\\n", "        twice\n"]
    expected["cells"][2]["source"] = fixed_factory
    expected["cells"][4]["source"] = fixed_backward
    # Re-dumped with the same layout, the expected notebook is byte-identical to the file:
    # nothing outside the two sources moved, outputs and the unicode in them included.
    assert after == (json.dumps(expected, **layout) + "\n").encode()
    assert invoke("train.ipynb").exit_code == 0
    again = invoke("--fix", "train.ipynb")
    assert again.exit_code == 0 and (project / "train.ipynb").read_bytes() == after


def test_fix_with_source_stored_as_one_string(project):
    document = notebook("".join(IMPORTS), "".join(FACTORY_CELL))
    before = save(project / "s.ipynb", document)
    assert invoke("--fix", "s.ipynb").exit_code == 0
    after = json.loads((project / "s.ipynb").read_text())
    assert after["cells"][2]["source"] == "".join(FACTORY_CELL).replace(
        "torch.zeros(n, h.shape[-1], device=h.device)", "h.new_zeros(n, h.shape[-1])")
    assert after["cells"][1] == json.loads(before)["cells"][1]


def test_added_import_lands_in_the_cell_with_the_imports(project):
    cells = [
        ["%load_ext autoreload\n", "from torch.cuda.amp import autocast\n",
         "from torch.nn.functional import binary_cross_entropy"],
        ["def f(model, x, y):\n", "    with autocast():\n", "        p = model(x).sigmoid()\n",
         "        loss = binary_cross_entropy(p, y)\n", "    return loss"],
    ]
    save(project / "b.ipynb", notebook(*cells))
    assert invoke("--fix", "--select", "AMP102", "b.ipynb").exit_code == 0
    after = json.loads((project / "b.ipynb").read_text())["cells"]
    assert after[1]["source"] == [cells[0][0], "import torch\n", *cells[0][1:]]
    assert "torch.nn.functional.binary_cross_entropy_with_logits(" in "".join(after[2]["source"])


def test_diff_shows_cells_and_writes_nothing(project):
    before = save(project / "train.ipynb", notebook(IMPORTS, FACTORY_CELL))
    result = invoke("--diff", "train.ipynb")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == ["--- train.ipynb:cell 3", "+++ train.ipynb:cell 3"]
    assert "+        out = h.new_zeros(n, h.shape[-1])" in lines
    assert "         %time y = 1" in lines
    assert (project / "train.ipynb").read_bytes() == before


def test_cell_magics_and_shell_lines_are_not_linted(project):
    save(project / "m.ipynb", notebook(IMPORTS, BASH_CELL, [
        "%%time\n", "with torch.autocast('cuda'):\n", "    z = torch.zeros(3, 4, device=d)\n"]))
    result = invoke("m.ipynb")
    assert result.exit_code == 0, result.output


def test_noqa_in_a_cell(project):
    cell = list(FACTORY_CELL)
    cell[4] = cell[4].rstrip("\n") + "  # noqa: AMP101\n"
    save(project / "n.ipynb", notebook(IMPORTS, cell))
    assert invoke("n.ipynb").exit_code == 0


def test_a_cell_with_a_syntax_error_is_named_and_the_others_are_linted(project):
    save(project / "e.ipynb", notebook(IMPORTS, ["def broken(:\n", "    pass"], FACTORY_CELL))
    result = invoke("e.ipynb")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: e.ipynb:cell 3:1:")
    assert "syntax error" in result.stderr
    assert result.stdout.startswith("e.ipynb:cell 4:5:15: AMP101")
    before = (project / "e.ipynb").read_bytes()
    assert invoke("--fix", "e.ipynb").exit_code == 1
    after = json.loads((project / "e.ipynb").read_text())
    assert after["cells"][2]["source"] == ["def broken(:\n", "    pass"]
    assert after["cells"][3]["source"] != json.loads(before)["cells"][3]["source"]


def test_other_kernels_are_skipped_and_bad_json_is_an_error(project):
    save(project / "r.ipynb", notebook(FACTORY_CELL, metadata={
        "kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}))
    assert invoke("r.ipynb").exit_code == 0
    (project / "bad.ipynb").write_text('{"cells": [')
    result = invoke("bad.ipynb")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: bad.ipynb: not a valid notebook")


def test_directories_include_notebooks_but_not_checkpoints(project):
    (project / "nbs" / ".ipynb_checkpoints").mkdir(parents=True)
    save(project / "nbs" / "a.ipynb", notebook(IMPORTS, FACTORY_CELL))
    save(project / "nbs" / ".ipynb_checkpoints" / "a-checkpoint.ipynb",
         notebook(IMPORTS, FACTORY_CELL))
    result = invoke(".")
    assert [line.split(":")[0] for line in result.stdout.splitlines()[:-2]] == ["nbs/a.ipynb"]


def test_add_noqa_in_a_notebook(project):
    save(project / "q.ipynb", notebook(IMPORTS, FACTORY_CELL))
    result = invoke("--add-noqa", "q.ipynb")
    assert result.exit_code == 0, result.output
    cells = json.loads((project / "q.ipynb").read_text())["cells"]
    assert cells[2]["source"][4] == (
        "        out = torch.zeros(n, h.shape[-1], device=h.device)  # noqa: AMP101\n")
    assert cells[2]["source"][3] == "        %time y = 1\n"
    assert invoke("q.ipynb").exit_code == 0
