"""A known framework's copy committed inside the project is the framework's code: a folder walk
reads it for the project pass but reports none of its findings, and says once where it is and
how to lint or skip it (found reading fresh real trees, r17-realread: baaivision/EVA holds two
detectron2 forks, EVA-0{1,2}/det, with 14 AMP130, 4 AMP103 in detectron2's own tests and an
AMP151 where one fork's config fallback reached the other's TensorMask project;
microsoft/DeepSpeedExamples' DeepSpeed-Domino holds Megatron's package, 4 AMP130).

tests/projects/vendored_eva_detectron2: EVA layout (EVA-02/det is a detectron2 checkout whose
setup.py names it, with its tests; EVA-02/asuka is the paper's code, one script training a head
through the copy's AMPTrainer). amplint/workspace/vendored.py, the layouts in
amplint/analysis/data/vendored_frameworks.py. Twins, reported: the copy named on the command
line, `report-vendored = true`, a file of it named explicitly (but not under pre-commit's
`--force-exclude`), the framework's own repository (Megatron-LM: its package at the top level;
transformers: its package under src/, the root's setup.py naming it), the framework's checkout linted
as the whole project, a folder that only shares the framework's name.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from project_files import PROJECTS

NAME = "vendored_eva_detectron2"
COPY = "EVA-02/det"
FIRST_PARTY = [
    ("EVA-02/asuka/engine.py", 5, "AMP130"),
    ("EVA-02/asuka/engine.py", 7, "AMP130"),
    ("EVA-02/asuka/train_det.py", 15, "AMP110"),
]
IN_COPY = [
    ("EVA-02/det/detectron2/engine/train_loop.py", 19, "AMP130"),
    ("EVA-02/det/detectron2/engine/train_loop.py", 22, "AMP130"),
    ("EVA-02/det/detectron2/modeling/meta_arch/rcnn.py", 11, "AMP130"),
    ("EVA-02/det/tests/test_blocks.py", 11, "AMP130"),
    ("EVA-02/det/tests/test_blocks.py", 12, "AMP103"),
]


@pytest.fixture
def root(tmp_path, monkeypatch):
    copied = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), copied)
    monkeypatch.chdir(copied)
    return copied


def lint(*paths):
    result = CliRunner().invoke(cli, ["--no-cache", "--output-format", "json", *paths])
    assert result.exit_code in (0, 1), result.output
    found = sorted((d["filename"], d["line"], d["code"]) for d in json.loads(result.stdout))
    notes = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    return found, notes


def test_the_copy_is_read_for_regions_but_summed_up_in_one_note(root):
    found, notes = lint(".")
    # the AMP110 needs the copy's AMPTrainer region: the copy is still read
    assert found == FIRST_PARTY
    assert len(notes) == 1
    assert notes[0].startswith(f"warning: {COPY}: a copy of detectron2 inside the project (")
    assert f"`amplint {COPY}` lints it" in notes[0]
    assert f"`extend-exclude = [\"{COPY}\"]` skips it" in notes[0]


def test_twin_the_copy_named_on_the_command_line_is_reported(root):
    found, notes = lint(COPY)
    assert found == IN_COPY and notes == []


def test_twin_report_vendored_reports_it_with_the_rest(root):
    (root / "pyproject.toml").write_text("[tool.amplint]\nreport-vendored = true\n")
    found, notes = lint(".")
    assert found == sorted(FIRST_PARTY + IN_COPY) and notes == []


def test_twin_a_file_of_the_copy_named_explicitly_is_reported(root):
    found, _ = lint("EVA-02/det/tests/test_blocks.py")
    assert found == IN_COPY[3:]


def test_a_staged_file_of_the_copy_under_pre_commit_gives_what_a_whole_run_gives(root):
    found, notes = lint("--force-exclude", "EVA-02/det/tests/test_blocks.py", "EVA-02/asuka/engine.py")
    assert found == FIRST_PARTY[:2]
    assert len(notes) == 1 and notes[0].startswith(f"warning: {COPY}: a copy of detectron2 inside the project (1 file)")


def test_twin_the_frameworks_own_checkout_is_first_party(root):
    shutil.rmtree(root / "EVA-02" / "asuka")
    found, notes = lint(".")
    assert found == IN_COPY and notes == []


def test_twin_a_folder_that_only_shares_the_name_is_first_party(root):
    os.remove(root / "EVA-02/det/detectron2/modeling/meta_arch/rcnn.py")
    found, notes = lint(".")
    assert found == sorted(FIRST_PARTY + IN_COPY[:2] + IN_COPY[3:]) and notes == []


AMP130_USE = "import torch\n\n\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n"


def _write(root, files):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def test_twin_megatron_lms_own_top_level_package_is_first_party(tmp_path, monkeypatch):
    _write(tmp_path, {
        "pyproject.toml": "[tool.amplint]\n",
        "megatron/core/parallel_state.py": "GROUP = None\n",
        "megatron/core/tensor_parallel/layers.py": AMP130_USE,
        "pretrain_gpt.py": "from megatron.core.tensor_parallel.layers import forward\n",
    })
    monkeypatch.chdir(tmp_path)
    found, notes = lint(".")
    assert found == [("megatron/core/tensor_parallel/layers.py", 4, "AMP130")] and notes == []


def test_twin_transformers_own_src_layout_is_first_party(tmp_path, monkeypatch):
    _write(tmp_path, {
        "pyproject.toml": "[tool.amplint]\n",
        "setup.py": "from setuptools import setup\n\nsetup(name=\"transformers\", package_dir={\"\": \"src\"})\n",
        "src/transformers/modeling_utils.py": AMP130_USE,
        "src/transformers/trainer.py": "X = 1\n",
        "tests/test_modeling.py": "from transformers.modeling_utils import forward\n",
    })
    monkeypatch.chdir(tmp_path)
    found, notes = lint(".")
    assert found == [("src/transformers/modeling_utils.py", 4, "AMP130")] and notes == []
    # the same package committed inside another project, without its checkout: a copy
    _write(tmp_path, {"setup.py": "from setuptools import setup\n\nsetup(name=\"my-trainer\")\n"})
    found, notes = lint(".")
    assert found == [] and len(notes) == 1 and notes[0].startswith("warning: src/transformers: a copy")


def test_a_megatron_lm_checkout_named_megatron_core_is_one_copy_with_its_tests(tmp_path, monkeypatch):
    """NVIDIA/Megatron-LM's pyproject.toml names the distribution `megatron-core`: a checkout of
    it inside a project (DeepSpeedExamples-style `third_party/Megatron-LM`) is one copy, its
    tests and examples with it, not only its `megatron/` package (r19-fp)."""
    _write(tmp_path, {
        "pyproject.toml": "[tool.amplint]\n",
        "train.py": "import torch\n",
        "third_party/Megatron-LM/pyproject.toml": "[project]\nname = \"megatron-core\"\n",
        "third_party/Megatron-LM/megatron/core/parallel_state.py": "GROUP = None\n",
        "third_party/Megatron-LM/megatron/core/tensor_parallel/layers.py": AMP130_USE,
        "third_party/Megatron-LM/tests/unit_tests/test_layers.py": AMP130_USE,
    })
    monkeypatch.chdir(tmp_path)
    found, notes = lint(".")
    assert found == [] and len(notes) == 1
    assert notes[0].startswith("warning: third_party/Megatron-LM: a copy of megatron inside the project (3 files")
    # linted as the project itself (its own checkout), it is first-party
    monkeypatch.chdir(tmp_path / "third_party" / "Megatron-LM")
    found, notes = lint(".")
    assert len(found) == 2 and notes == []
