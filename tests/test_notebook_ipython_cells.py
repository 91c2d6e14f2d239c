"""Notebook cells that IPython runs although they are not Python as written are not syntax
errors: a shell escape behind leading whitespace (IPython's `leading_indent` cleanup; shaped
like coqui-ai/TTS's training tutorial, a ` !tts ... \\` command continued over lines), a
one-line automagic call (`ls /path/`, shaped like facebookresearch/vissl's benchmark
tutorials), an indented Python cell (skipped with one note). A real syntax error is still
reported with its path and cell, in text, JSON and GitHub output, including an
automagic-looking line whose name a Python name shadows."""

from __future__ import annotations

import json

import pytest

from tests.test_notebooks import IMPORTS, invoke, notebook, save


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# A hazard cell (AMP101: a float16 value written into a float32 buffer) proves the notebook
# was linted past the IPython-only cells; the clean twins leave it out.
HAZARD = [
    "def pool(x, idx, n):\n",
    "    model = torch.nn.Linear(8, 8)\n",
    "    with torch.autocast('cuda'):\n",
    "        h = model(x)\n",
    "        out = torch.zeros(n, h.shape[-1], device=h.device)\n",
    "        out[idx] = h\n",
]
INDENTED_SHELL = [
    "  !python synthesize.py --text \"Hello there\" \\\n",
    "        --checkpoint $best_ckpt \\\n",
    "        --out_path sample.wav",
]
AUTOMAGIC = [["ls /content/runs/checkpoints/"], ["pip install -q --upgrade timm\n"]]


def _lint(path, *args):
    result = invoke(*args, path)
    return result, [line for line in result.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("twin", [False, True])
def test_an_indented_shell_escape_is_not_a_syntax_error(project, twin):
    cells = [IMPORTS, INDENTED_SHELL] + ([] if twin else [HAZARD])
    save(project / "tts.ipynb", notebook(*cells))
    result, errors = _lint("tts.ipynb")
    assert errors == [] and result.stderr == "", result.stderr
    assert result.exit_code == (0 if twin else 1)
    if not twin:
        assert result.stdout.startswith("tts.ipynb:cell 4:5:15: AMP101")


@pytest.mark.parametrize("twin", [False, True])
def test_one_line_automagic_cells_are_not_syntax_errors(project, twin):
    cells = [IMPORTS, *AUTOMAGIC] + ([] if twin else [HAZARD])
    save(project / "vissl.ipynb", notebook(*cells))
    result, errors = _lint("vissl.ipynb")
    assert errors == [] and result.stderr == "", result.stderr
    assert result.exit_code == (0 if twin else 1)


def test_an_indented_python_cell_is_skipped_with_one_note(project):
    save(project / "ind.ipynb", notebook(IMPORTS, ["  x = torch.ones(3)\n", "  y = x * 2\n"]))
    result = invoke("ind.ipynb")
    assert result.exit_code == 0, result.output
    notes = result.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("warning: ind.ipynb:cell 3: not linted: ")


@pytest.mark.parametrize("cell, where", [
    (["for step in range(3) print(step)\n"], "cell 3:1:"),  # a plain cell
    (["  for step in range(3) print(step)\n"], "cell 3:1:"),  # still wrong once dedented
    (["ls /content/runs/\n", "ls /content/logs/\n"], "cell 3:1:"),  # two lines: no automagic
])
@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_real_syntax_error_is_still_reported(project, cell, where, fmt):
    save(project / "bad.ipynb", notebook(IMPORTS, cell, HAZARD))
    result, errors = _lint("bad.ipynb", "--output-format", fmt)
    assert result.exit_code == 1
    assert len(errors) == 1 and errors[0].startswith(f"error: bad.ipynb:{where}"), result.stderr
    assert "syntax error" in errors[0]
    if fmt == "json":
        items = json.loads(result.stdout)
        assert [(item["code"], item["filename"], item["cell"], item["line"]) for item in items] == [
            ("AMP101", "bad.ipynb", 4, 5), (None, "bad.ipynb", 3, 1)]
        assert "syntax error" in items[1]["message"]
    if fmt == "github":
        annotations = result.stdout.splitlines()
        assert annotations[0].startswith("::error title=amplint (AMP101),file=bad.ipynb,")
        head = "::error title=amplint,file=bad.ipynb,line=1::bad.ipynb:"
        assert annotations[1].startswith(head + where)
        assert "syntax error" in annotations[1] and len(annotations) == 2


@pytest.mark.parametrize("shadow", [["ls = sorted(paths)\n"], ["from os import listdir as ls\n"],
                                    ["%automagic off\n"], ["ls = !ls /content\n"]])
def test_automagic_is_not_assumed_when_a_name_shadows_it(project, shadow):
    save(project / "sh.ipynb", notebook(IMPORTS, shadow, ["ls /content/runs/\n"]))
    result, errors = _lint("sh.ipynb")
    assert result.exit_code == 1
    assert len(errors) == 1 and errors[0].startswith("error: sh.ipynb:cell 4:1:"), result.stderr
