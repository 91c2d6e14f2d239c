"""The value solve of project/bound_flow.py covers at most DEFAULT_MAX_FILES files without
`value-flow`; the files it starts from (those with a region or reached by one) are known before
it looks for the modules they import (`_imported`: a `resolve_ref` per package import, ~0.3 s on
the mixed monorepo tree, whose 55 such files gave no solve). Where those alone pass the bound,
nothing is looked for: the answer (no solve) is the one the full search reached.

tests/projects/bound_llama_recipes_dtype: facebookresearch/llama-recipes layout (see
test_bound_dtypes.py); the extra files are training scripts of a recipes folder, each opening
its own autocast region (the layout of llama-recipes' many `recipes/*/finetune*.py`).
"""

from __future__ import annotations

import pytest

from project_files import load
from amplint.analysis.engine import Settings

NAME = "bound_llama_recipes_dtype"
RECIPE = ("import torch\n\n\ndef train_step(model, batch):\n"
          "    with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n        return model(**batch).loss\n")


def _files(extra: int):
    files = load(NAME)
    for index in range(extra):
        files[f"{NAME}/recipes/finetune_{index}.py"] = RECIPE
    return files


def _build(files, value_flow, monkeypatch):
    import amplint.analysis.project.bound_flow as bound_flow
    from amplint.analysis.project import build

    asked = []
    inner = bound_flow._imported
    monkeypatch.setattr(bound_flow, "_imported", lambda *args: asked.append(1) or inner(*args))
    project = build(files, Settings.default(), value_flow=value_flow)
    return len(asked), project.__dict__.get("bound_values")


@pytest.mark.parametrize("extra", [25, 40])
def test_no_import_search_when_the_starting_files_pass_the_bound(monkeypatch, extra):
    asked, values = _build(_files(extra), False, monkeypatch)
    assert (asked, values) == (0, None)


@pytest.mark.parametrize("extra,value_flow", [(0, False), (25, True)])
def test_the_search_runs_where_the_solve_may(monkeypatch, extra, value_flow):
    asked, values = _build(_files(extra), value_flow, monkeypatch)
    assert asked == 1
    assert values  # the llama-recipes dtype helpers' objects reach the trainer
