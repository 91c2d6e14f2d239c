"""The open world (issue 26, amplint/analysis/project/openworld.py): a call under a region on a
parameter that no call site of the linted files binds runs the methods of the project classes
that have every attribute the function uses on it, when there are at most 3 of them; the reach is
a MAYBE and every finding it leads to says so and names the candidates. Each project is laid out
like a public repository (named per test) and has a clean twin (the hazard fixed) that must stay
silent; each hazard is missed on main (no open world there)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.workspace.config import ConfigError, load as load_config

from project_files import load, project_findings

SETTINGS = Settings.default()
ON = SimpleNamespace(open_world=True)
OFF = SimpleNamespace(open_world=False)


def findings(results):
    return project_findings(results, skip=("AMP130",))


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


DEIT_FIX = [("F.binary_cross_entropy(torch.sigmoid(outputs_kd), torch.sigmoid(teacher_outputs))",
             "F.binary_cross_entropy_with_logits(outputs_kd, torch.sigmoid(teacher_outputs))")]


def test_deit_engine_criterion_is_a_maybe_over_the_classes_that_fit():
    # facebookresearch/deit: engine.py's train_one_epoch(model, criterion, ...) runs
    # `criterion(samples, outputs, targets)` under autocast; main.py (the caller) is not part of
    # the linted tree. The project's callable classes: DistillationLoss and
    # DistilledVisionTransformer, so the region may run DistillationLoss.forward (AMP102 there)
    results = lint_project(load("open_deit_engine"), SETTINGS, config=ON)
    assert findings(results) == [("losses.py", 46, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert ("open world: `criterion` of `train_one_epoch` is bound by no call site in the linted files, "
            "taken as one of the 2 project classes that have every attribute `train_one_epoch` uses on it "
            "(a call): DistillationLoss in losses.py, DistilledVisionTransformer in models.py") in message
    assert "called at engine.py:36 under the autocast region at engine.py:34" in message
    assert findings(lint_project(load("open_deit_engine", DEIT_FIX), SETTINGS, config=ON)) == []


def test_open_world_reach_is_maybe_enabled():
    project = build(load("open_deit_engine"), config=ON)
    entries = project.entries_for("open_deit_engine/losses.py")
    (entry,) = [e for e in entries if getattr(e, "target", None) == "DistillationLoss.forward"]
    assert entry.enabled.name == "MAYBE"
    assert "open world" in entry.cite


def test_open_world_off_by_option():
    assert findings(lint_project(load("open_deit_engine"), SETTINGS, config=OFF)) == []
    assert build(load("open_deit_engine"), config=OFF).open_world is None


def test_a_call_site_in_the_tree_binds_it():
    # the same engine with DeiT's main.py in the tree: `train_one_epoch(model, criterion, ...)` with
    # a criterion built outside (a timm loss): not an open-world parameter, nothing guessed
    files = load("open_deit_engine")
    files["open_deit_engine/main.py"] = (
        "from timm.loss import LabelSmoothingCrossEntropy\n"
        "from engine import evaluate, train_one_epoch\n"
        "from models import deit_tiny_distilled_patch16_224\n\n\n"
        "def main(args, data_loader_train, data_loader_val, optimizer, loss_scaler):\n"
        "    model = deit_tiny_distilled_patch16_224()\n"
        "    criterion = LabelSmoothingCrossEntropy(smoothing=args.smoothing)\n"
        "    for epoch in range(args.epochs):\n"
        "        train_one_epoch(model, criterion, data_loader_train, optimizer, 'cuda', epoch, loss_scaler)\n"
        "        evaluate(data_loader_val, model, 'cuda')\n")
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    # named anywhere else (`engine.train_one_epoch`, a string) counts as possibly bound too
    files["open_deit_engine/main.py"] = (
        "import engine\nRUN = getattr(engine, 'train_one_epoch')\nengine.evaluate([], None, 'cuda')\n")
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    # a plain re-export and `__all__` do not bind it
    files["open_deit_engine/main.py"] = (
        "import engine\nfrom engine import train_one_epoch\n__all__ = ['train_one_epoch']\n"
        "engine.evaluate([], None, 'cuda')\n")
    assert findings(lint_project(files, SETTINGS, config=ON)) == [("losses.py", 46, "AMP102")]


def test_timm_features_attributes_narrow_the_classes():
    # huggingface/pytorch-image-models: a library helper calls `model.forward_features(...)` and
    # `model.forward_head(...)` under fp16 autocast; of the project's many callable classes
    # (blocks, losses), only VisionTransformer and ResNet define both, so Attention's
    # `masked_fill(..., -1e9)` (reached through VisionTransformer's blocks) is fp16 code
    results = lint_project(load("open_timm_features"), SETTINGS, config=ON)
    assert findings(results) == [("timm/models/vision_transformer.py", 31, "AMP110")]
    (message,) = messages(results, "AMP110")
    assert ("taken as one of the 2 project classes that have every attribute `extract_features` uses on it "
            "(`.eval`, `.forward_features`, `.forward_head`): ResNet in models/resnet.py, "
            "VisionTransformer in models/vision_transformer.py") in message
    clean = load("open_timm_features", [("-1e9)", "torch.finfo(attn.dtype).min)")])
    assert findings(lint_project(clean, SETTINGS, config=ON)) == []


def test_optional_attributes_are_not_required():
    # `if hasattr(model, "set_grad_checkpointing"): model.set_grad_checkpointing(False)`: no class
    # defines it, but it is optional, so the two candidates stay
    files = load("open_timm_features", [("    model.eval()\n", (
        "    model.eval()\n    if hasattr(model, 'set_grad_checkpointing'):\n"
        "        model.set_grad_checkpointing(False)\n"))])
    assert "set_grad_checkpointing(False)" in files["open_timm_features/timm/utils/features.py"]
    assert findings(lint_project(files, SETTINGS, config=ON)) == [("timm/models/vision_transformer.py", 31, "AMP110")]
    # required (no hasattr), no class has it: nothing is taken
    files = load("open_timm_features", [
        ("    model.eval()\n", "    model.eval()\n    model.set_grad_checkpointing(False)\n")])
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    project = build(files, config=ON)
    (gap,) = [why for _, call, why in project.unresolved if call.startswith("model.forward_features")]
    assert "open world: no project class has every attribute `extract_features` uses on it" in gap


def test_a_disabled_region_guesses_nothing():
    files = load("open_timm_features", [("torch.autocast('cuda', dtype=torch.float16)",
                                         "torch.autocast('cuda', dtype=torch.float16, enabled=False)")])
    assert findings(lint_project(files, SETTINGS, config=ON)) == []


def _timm_train_files():
    """pytorch-image-models' train_one_epoch kept as a package module (its caller elsewhere),
    with timm's models and losses: nine callable classes fit `model(...)` and `loss_fn(...)`."""
    files = {path.replace("open_timm_features/", "open_timm_train/", 1): text
             for path, text in load("open_timm_features").items()
             if not path.endswith(("utils/features.py", "utils/__init__.py"))}
    files.update(load("open_timm_train"))
    return files


def test_more_than_three_candidates_take_none(tmp_path):
    files = _timm_train_files()
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    # the hazard is real: the loss bound by an annotation is found (the bound, not the rule, keeps it silent)
    loop = "open_timm_train/timm/engine/train_loop.py"
    annotated = dict(files)
    annotated[loop] = files[loop].replace(
        "import torch\n", "import torch\n\nfrom timm.loss import BinaryCrossEntropy\n").replace(
        "optimizer, loss_fn, args", "optimizer, loss_fn: BinaryCrossEntropy, args")
    assert findings(lint_project(annotated, SETTINGS, config=ON)) == [
        ("timm/loss/binary_cross_entropy.py", 34, "AMP102")]
    # --show-regions says why none was taken
    from click.testing import CliRunner

    from amplint.cli.main import cli

    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\nopen-world = true\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["--show-regions", "open_timm_train"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    assert ("unresolved: loss_fn at engine/train_loop.py:21: parameter `loss_fn` of `train_one_epoch`: no call "
            "site in the linted files passes a project class; open world: 9 project classes may hold it, having "
            "every attribute `train_one_epoch` uses on it (a call): BinaryCrossEntropy in "
            "loss/binary_cross_entropy.py") in result.output
    assert "more than 3, none taken" in result.output


def test_show_regions_names_the_guess(tmp_path):
    from click.testing import CliRunner

    from amplint.cli.main import cli

    for path, text in load("open_deit_engine").items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\nopen-world = true\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["--show-regions", "open_deit_engine"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    assert "  reaches DistillationLoss.forward in losses.py\n" in result.output
    assert ("  criterion at engine.py:36 -> DistillationLoss.forward in losses.py (criterion -> DistillationLoss "
            "in losses.py; open world: `criterion` of `train_one_epoch` is bound by no call site") in result.output


def test_open_world_option_in_pyproject(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.amplint]\nopen-world = true\n")
    assert load_config(str(path)).open_world is True
    path.write_text("[tool.amplint]\nselect = ['AMP']\n")
    assert load_config(str(path)).open_world is False
    path.write_text("[tool.amplint]\nopen-world = 'yes'\n")
    with pytest.raises(ConfigError, match="open-world"):
        load_config(str(path))


def test_a_class_with_a_base_outside_the_tree_blocks_the_guess():
    # MAE's models_vit.py beside the DeiT files: a VisionTransformer whose `forward` is timm's
    # (outside the tree) may be the model or the criterion too, so nothing is taken (on MAE's own
    # engine_finetune.py the guess would otherwise name MaskedAutoencoderViT, the wrong class)
    files = load("open_deit_engine")
    files["open_deit_engine/models_vit.py"] = (
        "import timm.models.vision_transformer\n\n\n"
        "class VisionTransformer(timm.models.vision_transformer.VisionTransformer):\n"
        "    \"\"\" Vision Transformer with support for global average pooling\n    \"\"\"\n"
        "    def forward_features(self, x):\n"
        "        x = self.patch_embed(x)\n"
        "        return self.fc_norm(x.mean(dim=1))\n")
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    project = build(files, config=ON)
    (gap,) = [why for _, call, why in project.unresolved if call.startswith("criterion")]
    assert ("open world: 2 project classes have every attribute `train_one_epoch` uses on it (a call), but "
            "VisionTransformer in models_vit.py (with bases outside the tree) may too: none taken") in gap
    # a plain class with `__call__` (MAE's NativeScalerWithGradNormCount) is no candidate for a call
    files = load("open_deit_engine")
    files["open_deit_engine/utils.py"] += (
        "\n\nclass NativeScalerWithGradNormCount:\n"
        "    state_dict_key = \"amp_scaler\"\n\n"
        "    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False):\n"
        "        loss.backward(create_graph=create_graph)\n"
        "        optimizer.step()\n")
    assert findings(lint_project(files, SETTINGS, config=ON)) == [("losses.py", 46, "AMP102")]
