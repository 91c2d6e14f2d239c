"""A module-level dict filled by register functions, read by a subscript (issue 26,
amplint/analysis/project/registry_dicts.py): `LOSS_REGISTRY[loss_config["name"]].from_config(...)`
holds the classes the project registers with `@register_loss("...")`; registry_classes.py
followed such a dict only when a getter returned `D[name]` itself.

tests/projects/registry_dict_vissl: facebookresearch/vissl layout (vissl/losses/__init__.py with
LOSS_REGISTRY / register_loss / get_loss_module, a loss per file, vissl/trainer/train_task.py,
vissl/trainer/train_steps/standard_train_step.py under autocast, tools/run_distributed_engines.py,
configs/config/pretrain/*.yaml) in a fork with a multi-label BCE loss that takes probabilities.
Twins: the loss on the logits; a literal key naming the cross-entropy loss; a dict written
by something else than a register function; a name no class is registered under."""

from __future__ import annotations

import importlib
import sys

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings

NAME = "registry_dict_vissl"
HAZARD = ("vissl/losses/multilabel_bce_loss.py", 21, "AMP102")
LOOKUP = 'return LOSS_REGISTRY[loss_config["name"]].from_config(loss_config)'
FIX = [("        probs = torch.sigmoid(output)\n", ""),
       ("F.binary_cross_entropy(probs, target,", "F.binary_cross_entropy_with_logits(output, target,")]


def amp102(files):
    results = lint_project(files, Settings.default())
    found = [f for f in project_findings(results) if f[2] == "AMP102"]
    return found, [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]


def test_a_class_registered_by_a_decorator_and_read_from_the_dict_by_a_configured_name():
    found, messages = amp102(load(NAME))
    assert found == [HAZARD]
    assert ("(task.loss <- get_loss_module(...) at vissl/trainer/train_task.py:12 -> MultiLabelBCELoss in "
            "vissl/losses/multilabel_bce_loss.py; called at vissl/trainer/train_steps/standard_train_step.py:7 "
            "under the autocast region at vissl/trainer/train_steps/standard_train_step.py:5)") in messages[0]


def test_twin_the_loss_on_logits_is_silent():
    assert amp102(load(NAME, FIX))[0] == []


def test_a_literal_key_selects_exactly_its_class():
    other = LOOKUP.replace('loss_config["name"]', '"cross_entropy_multiple_output_single_target"')
    assert amp102(load(NAME, ((LOOKUP, other),)))[0] == []
    named = LOOKUP.replace('loss_config["name"]', '"multilabel_bce_loss"')
    assert amp102(load(NAME, ((LOOKUP, named),)))[0] == [HAZARD]
    unknown = LOOKUP.replace('loss_config["name"]', '"focal_loss"')  # no class registered under it
    assert amp102(load(NAME, ((LOOKUP, unknown),)))[0] == []


def test_twin_a_dict_no_register_function_fills_is_silent():
    files = load(NAME, (("        LOSS_REGISTRY[name] = cls\n", "        LOSS_NAMES.add(name)\n"),))
    assert amp102(files)[0] == []
    shadowed = load(NAME, (('    assert loss_config["name"] in LOSS_REGISTRY',
                            '    LOSS_REGISTRY = {}\n    assert loss_config["name"] in LOSS_REGISTRY'),))
    assert amp102(shadowed)[0] == []


@pytest.mark.parametrize("fixed", [False, True])
def test_execution_monitor_reports_the_registered_bce(tmp_path, monkeypatch, fixed):
    """The project's own train step on CPU bfloat16 autocast standing in for CUDA, with the
    loss the config names: the runtime monitor reports the BCE (CUDA autocast raises on it);
    the twin runs clean."""
    torch = pytest.importorskip("torch")
    import amplint.runtime as ar
    for path, text in load(NAME, FIX if fixed else ()).items():
        target = tmp_path / path.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace('"cuda", dtype=torch.float16', '"cpu", dtype=torch.bfloat16'))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        task_module = importlib.import_module("vissl.trainer.train_task")
        step = importlib.import_module("vissl.trainer.train_steps.standard_train_step")
        config = {"MODEL": {"NUM_CLASSES": 5}, "LOSS": {"name": "multilabel_bce_loss", "pos_weight": 2.0},
                  "OPTIMIZER": {"lr": 0.1}, "AMP_PARAMS": {"opt_level": "O1"}}
        task = task_module.SelfSupervisionTask(config)
        sample = {"input": torch.randn(2, 3, 8, 8), "target": torch.randint(0, 2, (2, 5)).float()}
        with ar.monitor(stand_in_for_cuda=True) as m:
            step.standard_train_step(task, sample)
        found = [(f.code, f.filename.endswith("multilabel_bce_loss.py"), f.line) for f in m.findings]
        assert found == ([] if fixed else [("AMP102", True, 21)])
    finally:
        for name in [n for n in sys.modules if n == "vissl" or n.startswith("vissl.")]:
            sys.modules.pop(name, None)
