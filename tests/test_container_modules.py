"""Modules a container on `self` holds, reached within one file (the file's callgraph): a loop
over `self.blocks`, an item `self.blocks[i]`, a call of an `nn.Sequential`.

tests/projects/loop_makemore_single_file: karpathy/makemore layout (one script, makemore.py,
holding the model classes, the dataset and the training loop, beside names.txt), in a fork that
trains under a float16 autocast with a GradScaler and whose `Transformer` keeps its blocks in
`self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])`. The attention
masks its float16 scores with `-1e9` (AMP110: 'value cannot be converted to type c10::Half
without overflow', run below on CPU). With one Python file no project pass runs; on main the
file's callgraph did not follow `for block in self.blocks: x = block(x)`, so the region reached
no `Block`. Clean twin: `float("-inf")`.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import cli_findings, load

NAME = "loop_makemore_single_file"
SCRIPT = f"{NAME}/makemore.py"
FINDING = [("makemore.py", 40, "AMP110")]
LOOP = "        for block in self.blocks:\n            x = block(x)\n"
STORE = "self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])"


def _amp110(replace=()):
    """The file alone (as `amplint` lints a one-file project: no project pass)."""
    result = lint_source("makemore.py", load(NAME, replace)[SCRIPT], Settings.default())
    return sorted(("makemore.py", d.line, d.code) for d in result.diagnostics if d.code == "AMP110")


def test_loop_over_module_list_reaches_the_blocks():
    assert LOOP in load(NAME)[SCRIPT]
    assert _amp110() == FINDING


def test_the_cli_on_the_one_file_project(tmp_path):
    import os
    import shutil

    from project_files import PROJECTS

    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    assert cli_findings(str(root), "--no-cache", "--jobs", "1", codes=("AMP110",)) == FINDING


def test_clean_twin_masks_with_minus_infinity():
    assert _amp110((("-1e9)", 'float("-inf"))'),)) == []


@pytest.mark.parametrize("replace", [
    ((LOOP, "        for i, block in enumerate(self.blocks[:-1]):\n            x = block(x)\n"),),
    ((LOOP, "        for i in range(len(self.blocks)):\n            x = self.blocks[i](x)\n"),),
    ((STORE, "self.blocks = nn.Sequential(*[Block(config) for _ in range(config.n_layer)])"),
     (LOOP, "        x = self.blocks(x)\n")),
    ((STORE, "self.blocks = nn.ModuleList()\n        for _ in range(config.n_layer):\n"
             "            self.blocks.append(Block(config))"),),
])
def test_other_ways_to_hold_and_run_the_blocks(replace):
    assert _amp110(replace) == FINDING


@pytest.mark.parametrize("replace", [
    # an element of a class not known: nothing is said of any
    ((STORE, "self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)] + extra)"),),
    # the container changed by a store not read
    ((STORE, STORE + "\n        self.blocks[0] = nn.Identity()"),),
    ((STORE, STORE + "\n        self.blocks.append(make_block(config))"),),
    # the loop variable bound again in the function
    ((LOOP, LOOP + "        block = None\n"),),
])
def test_containers_not_known_exactly_reach_nothing(replace):
    assert _amp110(replace) == []


def test_premise_float16_scores_overflow_under_autocast():
    torch = pytest.importorskip("torch")
    import importlib.util
    import os

    from project_files import PROJECTS

    spec = importlib.util.spec_from_file_location("makemore_probe", os.path.join(PROJECTS, NAME, "makemore.py"))
    makemore = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(makemore)
    config = makemore.ModelConfig(vocab_size=6, block_size=5)
    model = makemore.Transformer(config)
    idx = torch.randint(0, 6, (2, 5))
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="c10::Half"):
            model(idx)
    model(idx)  # float32: the fill fits
