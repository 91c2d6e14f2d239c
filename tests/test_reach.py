"""Reach (issue 13): hazards in model and loss code found however the model travels to the
autocast region: parameters, factories, registries, classmethods, trainer attributes, wrappers,
a loss passed in, a half model returned by a loader. Each layout (tests/projects/reach_*) has
clean twins made from the same files that must stay silent."""

from __future__ import annotations

import os

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project import build, lint_project

from project_files import PROJECTS, load, project_findings  # noqa: E402,F401
SETTINGS = Settings.default()


def show_regions(*options):
    """`amplint --show-regions --no-cache [options] .` in the current folder; it must succeed."""
    from click.testing import CliRunner

    from amplint.cli.main import cli

    result = CliRunner().invoke(cli, ["--show-regions", "--no-cache", *options, "."])
    assert result.exit_code == 0, result.output
    return result


def findings(results):
    return project_findings(results)


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


# the three hazards of the shared model and loss files
MODEL = [("models/attention.py", 15, "AMP110"), ("models/net.py", 16, "AMP101")]
LOSS = [("losses/bce_dice.py", 13, "AMP102")]

LAYOUTS = {
    "reach_param": MODEL + LOSS,
    "reach_factory": MODEL + LOSS,
    "reach_classmethod": MODEL + LOSS,
    "reach_trainer_attr": MODEL + LOSS,
    "reach_wrapper": MODEL + LOSS,
    "reach_loss_param": MODEL + LOSS,
    "reach_annotated": MODEL + LOSS,
    "reach_registry": [
        ("seg/losses/bce_dice.py", 16, "AMP102"), ("seg/models/attention.py", 15, "AMP110"),
        ("seg/models/net.py", 18, "AMP101"),
    ],
}

# each fix removes its hazard; all together leave the project silent
NEW_ZEROS = ("torch.zeros(x.shape[0], x.shape[1], self.head.out_features, device=x.device)",
             "x.new_zeros(x.shape[0], x.shape[1], self.head.out_features)")
WITH_LOGITS = ("F.binary_cross_entropy(prob, target)", "F.binary_cross_entropy_with_logits(logits, target)")
BF16 = [('torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cuda", dtype=torch.bfloat16)'),
        ('self.scaler.scale(loss).backward()', 'loss.backward()'),
        ('scaler.scale(loss).backward()', 'loss.backward()'),
        ('self.scaler.step(self.optimizer)', 'self.optimizer.step()'),
        ('scaler.step(optimizer)', 'optimizer.step()'),
        ('self.scaler.update()', 'pass'), ('scaler.update()', 'pass'),
        ('self.scaler = torch.amp.GradScaler("cuda")', 'pass'),
        ('scaler = torch.amp.GradScaler("cuda")', 'pass'),
        ('torch.amp.GradScaler("cuda")', 'None')]
ISLAND = ('torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cuda", dtype=torch.float16, enabled=False)')


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_layout_is_reached(name):
    results = lint_project(load(name), SETTINGS)
    assert findings(results) == sorted(LAYOUTS[name])
    assert not any(result.errors for result in results.values())


@pytest.mark.parametrize("name", sorted(LAYOUTS))
@pytest.mark.parametrize("twin, removed", [
    ([NEW_ZEROS], "AMP101"), ([WITH_LOGITS], "AMP102"), (BF16, "AMP110"),
])
def test_clean_twin_drops_its_hazard(name, twin, removed):
    found = findings(lint_project(load(name, twin), SETTINGS))
    assert found == sorted(f for f in LAYOUTS[name] if f[2] != removed)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_clean_twins_are_silent(name):
    assert findings(lint_project(load(name, [ISLAND]), SETTINGS)) == []
    clean = [NEW_ZEROS, WITH_LOGITS, ("-1e9)", "torch.finfo(scores.dtype).min)")]
    assert findings(lint_project(load(name, clean), SETTINGS)) == []


def test_model_never_reached_stays_silent():
    assert findings(lint_project(load("reach_unreached"), SETTINGS)) == []


def test_registry_builds_only_what_the_project_builds_from_it():
    # seg/models/unused.py registers Stem in BACKBONES, which nothing builds: not reached
    project = build(load("reach_registry"))
    assert project.entries_for("reach_registry/seg/models/unused.py") == ()


def test_messages_cite_the_chain():
    results = lint_project(load("reach_factory"), SETTINGS)
    (message,) = messages(results, "AMP101")
    assert ("(model <- build_model(cfg.model) at train.py:9 -> Net in models/net.py; "
            "called at train.py:16 under the autocast region at train.py:15)") in message
    (message,) = messages(results, "AMP110")  # Net.forward calls self.attn in attention.py
    assert "in code that runs under the autocast region at train.py:15" in message
    results = lint_project(load("reach_trainer_attr"), SETTINGS)
    (message,) = messages(results, "AMP101")
    assert "self.model <- Net() at train.py:9 -> Net in models/net.py" in message


def test_parameter_bound_by_keyword_and_default():
    files = load("reach_loss_param", [("criterion=None", "criterion=BCEDice()"),
                                       (", criterion=BCEDice(), epochs=5", ", epochs=5"),
                                       ("import torch\n\n\ndef fit", "import torch\n\nfrom losses import BCEDice\n\n\ndef fit")])
    found = findings(lint_project(files, SETTINGS))
    assert ("losses/bce_dice.py", 13, "AMP102") in found
    assert "criterion=BCEDice()" in files["reach_loss_param/engine/fit.py"]


@pytest.mark.parametrize("name", ["reach_param", "reach_registry", "reach_trainer_attr"])
def test_order_of_files_does_not_matter(name):
    import random

    files = load(name)
    reference = build(files)
    expected = {path: reference.entries_for(path) for path in files}
    assert any(expected.values())
    paths = list(files)
    for seed in range(3):
        random.Random(seed).shuffle(paths)
        project = build({path: files[path] for path in paths})
        assert {path: project.entries_for(path) for path in files} == expected


def test_half_model_returned_by_a_loader_in_another_file():
    results = lint_project(load("reach_half_loader"), SETTINGS)
    # Net is made half by deploy/loader.py; Attention with it, as its submodule
    assert findings(results) == [("models/attention.py", 15, "AMP110"), ("models/net.py", 16, "AMP101")]
    project = build(load("reach_half_loader"))
    (entry,) = project.entries_for("reach_half_loader/models/net.py")
    assert (entry.target, entry.dtype) == ("Net", "float16")
    assert entry.cite == "Net() at deploy/loader.py:7 made float16 in deploy/loader.py"
    assert "reach_half_loader/deploy/loader.py" in project.dependencies("reach_half_loader/models/net.py")
    clean = load("reach_half_loader", [(".half().eval()", ".eval()")])
    assert findings(lint_project(clean, SETTINGS)) == []


def test_show_regions_lists_reach_and_gaps(monkeypatch):
    import json

    monkeypatch.chdir(os.path.join(PROJECTS, "reach_param"))
    result = show_regions()
    assert "the autocast region at engine/trainer.py:8" in result.output
    assert ("model at engine/trainer.py:9 -> Net.forward in models/net.py "
            "(model <- Net() at train.py:9 -> Net in models/net.py)") in result.output
    assert "unresolved" not in result.output
    monkeypatch.chdir(os.path.join(PROJECTS, "reach_unreached"))
    result = show_regions("--output-format", "json")
    report = json.loads(result.output)
    (region,) = report["regions"]
    assert region["reaches"] == []
    # criterion is given torch.nn.BCEWithLogitsLoss() (torch's own module: no gap)
    assert {gap["call"] for gap in region["unresolved"]} == {"model at engine/trainer.py:9"}
    assert "no call site" in region["unresolved"][0]["why"]
    # `model(x)` may run the forward of any module class the region does not reach yet
    assert region["unresolved"][0]["could_run"] == [
        "BCEDice.forward in losses/bce_dice.py", "Attention.forward in models/attention.py",
        "Net.forward in models/net.py"]
    assert report["autocast_modules"] == (
        'autocast-modules = ["losses/bce_dice.py", "models/attention.py", "models/net.py"]')
    assert report["declare"] is None


MMCV_HEAD = '''import torch
import torch.nn.functional as F
from mmcv.runner import BaseModule, auto_fp16, force_fp32


class AttnHead(BaseModule):
    def __init__(self, dim):
        super().__init__()
        self.fp16_enabled = False  # wrap_fp16_model / Fp16OptimizerHook set it to True
        self.proj = torch.nn.Linear(dim, dim)

    @auto_fp16()
    def forward(self, x, mask):
        scores = self.proj(x) @ x.transpose(-1, -2)
        return scores.masked_fill(mask, -1e9).softmax(-1)

    @force_fp32(apply_to=("scores",))
    def loss(self, scores, labels):
        scores = scores.masked_fill(labels == 0, -1e9)
        return F.binary_cross_entropy(torch.sigmoid(scores), labels)
'''


def test_mmcv_auto_fp16_is_maybe_enabled_and_force_fp32_disabled():
    # single file: the @auto_fp16 body is flagged although __init__ sets fp16_enabled = False;
    # the @force_fp32 body (autocast disabled, scores cast to float32) stays silent
    found = findings(lint_project({"p/head.py": MMCV_HEAD}, SETTINGS))
    assert found == [("head.py", 15, "AMP110")]
    clean = MMCV_HEAD.replace("masked_fill(mask, -1e9)", "masked_fill(mask, torch.finfo(scores.dtype).min)")
    assert findings(lint_project({"p/head.py": clean}, SETTINGS)) == []
    undecorated = MMCV_HEAD.replace("    @force_fp32(apply_to=(\"scores\",))\n", "").replace(
        "def loss(self, scores, labels):", "@auto_fp16()\n    def loss(self, scores, labels):")
    assert findings(lint_project({"p/head.py": undecorated}, SETTINGS)) == [
        ("head.py", 15, "AMP110"), ("head.py", 19, "AMP110"), ("head.py", 20, "AMP102")]


def test_mmcv_detector_reaches_its_head_not_the_losses_of_the_same_registry():
    # mmdet 2.x layout: one registry under many names (HEADS = LOSSES = MODELS); the
    # detector's @auto_fp16 forward calls the head built by build_head, whose loss runs under
    # @force_fp32: the head's masked_fill is flagged, the loss (binary_cross_entropy) is not
    results = lint_project(load("reach_mmcv_fp16"), SETTINGS)
    assert findings(results) == [("detlite/models/heads/attn_head.py", 19, "AMP110")]
    (message,) = messages(results, "AMP110")
    assert "self.head <- build_head(head) at detlite/models/detectors/attn_detector.py:10" in message
    clean = load("reach_mmcv_fp16", [("-1e9)", "torch.finfo(scores.dtype).min)")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # without @force_fp32 the loss runs under the detector's autocast: it is flagged
    no_island = load("reach_mmcv_fp16", [('    @force_fp32(apply_to=("scores",))\n', "")])
    assert ("detlite/models/losses/bce.py", 12, "AMP102") in findings(lint_project(no_island, SETTINGS))


CONTAINERS = [("losses/focal.py", 13, "AMP102"), ("models/blocks.py", 22, "AMP110"),
              ("models/blocks.py", 32, "AMP101")]
CONTAINERS_CLEAN = [
    ("torch.zeros(x.shape[0], x.shape[1], self.cls.out_features, device=x.device)",
     "x.new_zeros(x.shape[0], x.shape[1], self.cls.out_features)"),
    ("F.binary_cross_entropy(prob, target, reduction=\"none\")",
     "F.binary_cross_entropy_with_logits(logits, target, reduction=\"none\")"),
    ("-1e9)", "torch.finfo(scores.dtype).min)"),
]


def test_registry_build_from_cfg_partial_and_containers():
    # build_from_cfg(cfg, MODELS), functools.partial(FocalBCE, ...) called later,
    # nn.Sequential / nn.ModuleList([... for ...]) iterated in forward / a list filled by
    # append and indexed: each hazard is reached, and cited through its container
    results = lint_project(load("reach_containers"), SETTINGS)
    assert findings(results) == CONTAINERS
    (message,) = messages(results, "AMP110")
    assert "blk <- Block(dim) at models/segnet.py:12 -> Block in models/blocks.py" in message
    (message,) = messages(results, "AMP101")
    assert "self.heads[...] <- SegHead(dim, num_classes) at models/segnet.py:14" in message
    (message,) = messages(results, "AMP102")
    assert "criterion <- make_loss() at tools/train.py:16 -> FocalBCE in losses/focal.py" in message
    assert findings(lint_project(load("reach_containers", CONTAINERS_CLEAN), SETTINGS)) == []
    assert findings(lint_project(load("reach_containers", [ISLAND]), SETTINGS)) == []


@pytest.mark.parametrize("old, new, kept", [
    # built from another registry than the one SegNet is registered in: the model is not reached
    ("from models import MODELS", "from models import MODELS\nfrom mmcv.cnn import MODELS as OTHER",
     [("losses/focal.py", 13, "AMP102")]),
    # the blocks kept in an attribute the forward no longer iterates: not reached
    ("        for blk in self.blocks:\n            h = blk(h, mask)\n", "",
     [("losses/focal.py", 13, "AMP102"), ("models/blocks.py", 32, "AMP101")]),
    # a partial that is never called makes nothing
    ("    criterion = make_loss()\n", "    criterion = make_loss\n", CONTAINERS[1:]),
])
def test_containers_and_partials_reach_only_what_runs(old, new, kept):
    files = load("reach_containers", [(old, new)])
    if "OTHER" in new:
        files = load("reach_containers", [(old, new), ("cfg.model, MODELS)", "cfg.model, OTHER)")])
    assert files != load("reach_containers")
    assert findings(lint_project(files, SETTINGS)) == kept


def test_annotation_is_a_source_and_an_untyped_parameter_is_named(tmp_path, monkeypatch):
    import json

    results = lint_project(load("reach_annotated"), SETTINGS)
    (message,) = messages(results, "AMP101")
    assert "model <- model: Net at engine/trainer.py:9 -> Net in models/net.py" in message
    untyped = [("model: Net", "model"), (': Optional["BCEDice"] = None', "=None")]
    assert findings(lint_project(load("reach_annotated", untyped), SETTINGS)) == []
    # an annotation naming no project class (torch.nn.Module) holds nothing
    base = [("model: Net", "model: torch.nn.Module"), (': Optional["BCEDice"] = None', ": torch.nn.Module")]
    assert findings(lint_project(load("reach_annotated", base), SETTINGS)) == []
    # untyped and called from no file of the tree: named in --show-regions, with the
    # autocast-modules line that would cover them
    for path, text in load("reach_annotated", untyped).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.chdir(tmp_path / "reach_annotated")
    result = show_regions("--output-format", "json")
    report = json.loads(result.output)
    (region,) = report["regions"]
    assert region["reaches"] == []
    assert {gap["call"]: gap["why"] for gap in region["unresolved"]} == {
        "model at engine/trainer.py:14": "parameter `model` of `train_one_epoch`: no call site in the linted files passes a project class",
        "criterion at engine/trainer.py:15": "parameter `criterion` of `train_one_epoch`: no call site in the linted files passes a project class",
    }
    assert report["autocast_modules"] == (
        'autocast-modules = ["losses/bce_dice.py", "models/attention.py", "models/net.py"]')


def test_show_regions_hint_covers_an_unreached_class_next_to_a_reached_one(tmp_path, monkeypatch):
    # `head.loss(...)` on an untyped parameter: SegHead shares its file with the reached Net
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "net.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x\n\n\nclass SegHead(nn.Module):\n    def loss(self, logits, y):\n"
        "        return (logits - y).abs().mean()\n")
    (tmp_path / "train.py").write_text(
        "import torch\n\nfrom models.net import Net\n\n\ndef step(model: Net, head, x, y):\n"
        "    with torch.autocast(\"cuda\"):\n        return head.loss(model(x), y)\n")
    monkeypatch.chdir(tmp_path)
    result = show_regions()
    assert "unresolved: head.loss at train.py:8: parameter `head` of `step`" in result.output
    # only SegHead defines `loss`; Net, which the region reaches, is no candidate
    assert "(could run SegHead.loss in models/net.py)" in result.output
    assert 'autocast-modules = ["models/net.py"]' in result.output
    assert "annotate the parameter" not in result.output


FABRIC = [("tests/helpers/boring.py", 13, "AMP102")]


def test_framework_setting_runs_only_the_models_its_instance_sets_up():
    # Fabric(precision=16) in a test file sets up BoringModel; the demo Transformer of another
    # package is set up by a full-precision Fabric in an example: it is not autocast code
    results = lint_project(load("reach_fabric_scope"), SETTINGS)
    assert findings(results) == FABRIC
    (message,) = messages(results, "AMP102")
    assert ("Fabric runs the set-up model's `BoringModel.forward` under autocast: Fabric(precision=16) at "
            "tests/tests_fabric/test_precision.py:8; model <- BoringModel() at tests/tests_fabric/test_precision.py:9"
            " -> BoringModel in tests/helpers/boring.py, given to setup() at tests/tests_fabric/test_precision.py:11") in message
    mixed = load("reach_fabric_scope", [('precision="32-true"', 'precision="16-mixed"')])
    assert findings(lint_project(mixed, SETTINGS)) == sorted(FABRIC + [("src/demos/transformer.py", 16, "AMP110")])
    clean = [("-1e9)", "torch.finfo(scores.dtype).min)"),
             ("F.binary_cross_entropy(prob, torch.ones_like(prob))",
              "F.binary_cross_entropy_with_logits(self.layer(x), torch.ones_like(prob))")]
    mixed_clean = load("reach_fabric_scope", clean + [('precision="32-true"', 'precision="16-mixed"')])
    assert findings(lint_project(mixed_clean, SETTINGS)) == []


def test_framework_instance_that_cannot_be_followed_keeps_a_maybe_region(tmp_path, monkeypatch):
    # the set-up model is a parameter no file passes: every model given to a setup() is a
    # maybe-enabled region, and --show-regions says why
    unresolved = [("def test_fabric_mixed_precision():\n    fabric", "def test_fabric_mixed_precision(model):\n    fabric"),
                  ("    model = BoringModel()\n", "")]
    files = load("reach_fabric_scope", unresolved)
    assert findings(lint_project(files, SETTINGS)) == [("src/demos/transformer.py", 16, "AMP110")]
    (entry,) = build(files).entries_for("reach_fabric_scope/src/demos/transformer.py")
    assert entry.enabled is Enabled.MAYBE
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.chdir(tmp_path / "reach_fabric_scope")
    result = show_regions()
    assert ("unresolved: Fabric(precision=16) at tests/tests_fabric/test_precision.py:8: the models this Fabric "
            "runs could not be followed") in result.output


def test_lightning_trainer_runs_the_modules_it_fits():
    lit = ("import lightning.pytorch as pl\nimport torch.nn.functional as F\n\n\n"
           "class {name}(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
           "        return F.binary_cross_entropy(batch[0], batch[1])\n")
    files = {
        "proj/models/seg.py": lit.format(name="SegModule"),
        "proj/models/cls.py": lit.format(name="ClsModule"),
        "proj/train_seg.py": ("from lightning.pytorch import Trainer\n\nfrom models.seg import SegModule\n\n\n"
                              "def main():\n    trainer = Trainer(precision=\"16-mixed\")\n    trainer.fit(SegModule())\n"),
        "proj/train_cls.py": ("from lightning.pytorch import Trainer\n\nfrom models.cls import ClsModule\n\n\n"
                              "def main():\n    Trainer(precision=\"32-true\").fit(model=ClsModule())\n"),
    }
    assert findings(lint_project(files, SETTINGS)) == [("models/seg.py", 7, "AMP102")]
    files["proj/train_cls.py"] = files["proj/train_cls.py"].replace("32-true", "bf16-mixed")
    assert findings(lint_project(files, SETTINGS)) == [("models/cls.py", 7, "AMP102"), ("models/seg.py", 7, "AMP102")]


FORCE_FP32_HALF = '''import torch
from mmcv.runner import BaseModule, force_fp32


class Head(BaseModule):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)

    @force_fp32(apply_to=("scores",))
    def loss(self, scores, mask, extra):
        a = scores.masked_fill(mask, -1e9)
        b = extra.masked_fill(mask, -1e9)
        return a.sum() + b.sum()


def deploy():
    return Head().cuda().half()
'''


def test_force_fp32_casts_only_the_arguments_it_lists():
    # Head is made half: its methods are fp16 code, but @force_fp32 casts `scores` to float32
    # on entry; `extra` is not listed and stays half
    assert findings(lint_project({"p/head.py": FORCE_FP32_HALF}, SETTINGS)) == [("head.py", 16, "AMP110")]
    every = FORCE_FP32_HALF.replace('@force_fp32(apply_to=("scores",))', "@force_fp32()")
    assert findings(lint_project({"p/head.py": every}, SETTINGS)) == []
    rebound = FORCE_FP32_HALF.replace("        a = scores", "        scores = scores.half()\n        a = scores")
    assert ("head.py", 16, "AMP110") in findings(lint_project({"p/head.py": rebound}, SETTINGS))


def test_a_fitted_model_that_cannot_be_followed_is_named():
    files = {
        "proj/lit.py": ("import lightning.pytorch as pl\nimport torch.nn.functional as F\n\n\n"
                        "class Seg(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
                        "        return F.binary_cross_entropy(batch[0], batch[1])\n"),
        "proj/train.py": ("from lightning.pytorch import Trainer\n\nfrom lit import Seg\n\n\n"
                          "def main(other):\n    trainer = Trainer(precision=\"16-mixed\")\n"
                          "    trainer.fit(Seg())\n    trainer.fit(other)\n"),
    }
    project = build(files)
    (entry,) = project.entries_for("proj/lit.py")
    assert entry.enabled is Enabled.TRUE
    assert project.unresolved == [(
        'Lightning\'s autocast (Trainer(precision="16-mixed") at train.py:7)', "other at train.py:9",
        "parameter `other` of `main`: no call site in the linted files passes a project class")]


def test_show_regions_names_no_gap_for_torch_modules_and_tensor_methods(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from amplint.cli.main import cli

    (tmp_path / "head.py").write_text(MMCV_HEAD)
    monkeypatch.chdir(tmp_path)
    result = show_regions()
    # self.proj = torch.nn.Linear(...), x.transpose(...), scores.masked_fill(...): not model calls
    assert "unresolved" not in result.output
    (tmp_path / "head.py").write_text(MMCV_HEAD.replace("torch.nn.Linear(dim, dim)", "make_proj(dim)"))
    result = CliRunner().invoke(cli, ["--show-regions", "--no-cache", "."])
    assert "unresolved: self.proj at head.py:14" in result.output


def _many_registered_models(count):
    """`count` more classes in the MODELS registry, each with a hazard of its own."""
    body = "import torch\nfrom torch import nn\n\nfrom ..utils.registry import MODELS\n"
    for i in range(count):
        body += (
            f"\n\n@MODELS.register_module()\nclass Extra{i}(nn.Module):\n"
            "    def forward(self, x, mask):\n"
            "        return x.masked_fill(mask, -1e9)\n"
        )
    return {"reach_registry/seg/models/extra.py": body}


def test_a_wide_registry_build_is_narrowed_by_its_config_else_named_not_followed():
    # MODELS now registers 10 classes. configs/unet.py names `model = dict(type="Net")`, so
    # MODELS.build(cfg.model) still holds only Net: its hazards are found, no Extra's
    files = {**load("reach_registry"), **_many_registered_models(9)}
    assert findings(lint_project(files, SETTINGS)) == LAYOUTS["reach_registry"]
    # without that config, the build may make any of the 10: none is followed (following all
    # would flag nine classes no config builds), and --show-regions says why
    unconfigured = {path: text for path, text in files.items() if not path.endswith("configs/unet.py")}
    assert [f for f in findings(lint_project(unconfigured, SETTINGS)) if f[0].startswith("seg/models")] == []
    project = build(unconfigured)
    reasons = [why for _, call, why in project.unresolved if call.startswith("model at")]
    assert reasons and "`MODELS` build that may make any of 10 registered classes" in reasons[0]
    # with up to 8 registered classes, an unconfigured build still follows every one
    few = {**load("reach_registry"), **_many_registered_models(7)}
    few = {path: text for path, text in few.items() if not path.endswith("configs/unet.py")}
    flagged = {f[0] for f in findings(lint_project(few, SETTINGS))}
    assert "seg/models/extra.py" in flagged and "seg/models/net.py" in flagged


def test_show_regions_keeps_only_real_gaps(tmp_path, monkeypatch):
    # tensor reductions, unittest helpers and a lambda of string work run no model code; a
    # lambda that calls an untyped parameter is still a gap, named through the lambda
    (tmp_path / "evaluate.py").write_text(
        "import unittest\nimport torch\n\n\ndef evaluate(net, mask, out, itos):\n"
        "    decode = lambda l: ''.join([itos[i] for i in l])\n"
        "    run = lambda x: net(x)\n"
        "    with torch.autocast('cuda'):\n"
        "        assert mask.min() >= 0 and mask.max() < 3\n"
        "        print(decode(out.tolist()))\n"
        "        return run(mask)\n\n\n"
        "class TestEval(unittest.TestCase):\n"
        "    def test_eval(self):\n"
        "        with torch.autocast('cuda'):\n"
        "            self.assertEqual(evaluate(None, None, None, None), 1)\n")
    monkeypatch.chdir(tmp_path)
    result = show_regions()
    gaps = [line.strip() for line in result.output.splitlines() if "unresolved:" in line]
    assert gaps == ["unresolved: net (in lambda run) at evaluate.py:11: parameter `net` of `evaluate`: "
                    "no call site in the linted files passes a project class"]


def test_show_regions_lists_every_region_and_every_reach(tmp_path, monkeypatch):
    # an @auto_fp16 region that calls nothing in other files is listed, as maybe enabled
    (tmp_path / "head.py").write_text(MMCV_HEAD)
    # two regions reach Net.forward: each says so, not only the more hazardous one
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "net.py").write_text(
        "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n")
    (tmp_path / "train.py").write_text(
        "import torch\n\nfrom models.net import Net\n\n\ndef train(model: Net, x):\n"
        "    with torch.autocast('cuda'):\n        return model(x)\n\n\n"
        "def bench(model: Net, x):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return model(x)\n")
    monkeypatch.chdir(tmp_path)
    result = show_regions()
    lines = result.output.splitlines()
    head = lines.index("the autocast decorator at head.py:12 (maybe enabled: mmcv's @auto_fp16 casts "
                       "only once the module's fp16_enabled is set; an `enabled=` argument is only "
                       "known at run time)")
    assert lines[head + 1] == "  reaches nothing outside this file"
    for region in ("the autocast region at train.py:7", "the autocast region at train.py:12"):
        start = lines.index(region)
        assert lines[start + 1] == "  reaches Net.forward in models/net.py"
        assert lines[start + 2].startswith("  model at train.py:")


def test_factory_returns_on_one_line_suites_are_followed():
    # `if name == "attn": return AttnNet()` is a return like any other: the factory may hold
    # AttnNet, whose masked_fill(-1e9) runs under the caller's region; the other branch's class
    # is clean
    files = {
        "pkg/models.py": (
            "import torch\n"
            "from torch import nn\n\n\n"
            "class AttnNet(nn.Module):\n"
            "    def forward(self, x, mask):\n"
            "        scores = x @ x.transpose(-2, -1)\n"
            "        return scores.masked_fill(mask, -1e9)\n\n\n"
            "class PlainNet(nn.Module):\n"
            "    def forward(self, x, mask):\n"
            "        return x\n\n\n"
            "def build(name):\n"
            "    if name == 'attn': return AttnNet()\n"
            "    else: return PlainNet()\n"
        ),
        "pkg/train.py": (
            "import torch\n"
            "from models import build\n\n\n"
            "def main(name, x, mask):\n"
            "    model = build(name)\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n"
            "        return model(x, mask)\n"
        ),
    }
    assert findings(lint_project(files, SETTINGS)) == [("models.py", 8, "AMP110")]
    files["pkg/models.py"] = files["pkg/models.py"].replace("return AttnNet()", "return PlainNet()")
    assert findings(lint_project(files, SETTINGS)) == []


# timm: a model function registered with `@register_model`, built by `timm.create_model`
TIMM_PROJECT = {
    "deit/models/__init__.py": "from .vit import *  # noqa: registers the models\n",
    "deit/models/vit.py": (
        "import torch\n"
        "from torch import nn\n"
        "from timm.models.registry import register_model\n\n\n"
        "class Attention(nn.Module):\n"
        "    def forward(self, x, mask):\n"
        "        scores = x @ x.transpose(-2, -1)\n"
        "        scores = scores.masked_fill(mask, -1e9)\n"
        "        return scores.softmax(dim=-1) @ x\n\n\n"
        "class VisionTransformer(nn.Module):\n"
        "    def __init__(self, dim=192):\n"
        "        super().__init__()\n"
        "        self.attn = Attention()\n\n"
        "    def forward(self, x, mask):\n"
        "        return self.attn(x, mask)\n\n\n"
        "@register_model\n"
        "def deit_tiny_patch16_224(pretrained=False, **kwargs):\n"
        "    model = VisionTransformer(dim=192, **kwargs)\n"
        "    return model\n"
    ),
    "deit/engine.py": (
        "import torch\n\n\n"
        "def train_one_epoch(model, loader, optimizer, scaler):\n"
        "    for x, mask in loader:\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            loss = model(x, mask).sum()\n"
        "        scaler.scale(loss).backward()\n"
        "        scaler.step(optimizer)\n"
        "        scaler.update()\n"
    ),
    "deit/main.py": (
        "import argparse\n\n"
        "import torch\n"
        "from timm.models import create_model\n\n"
        "import models  # noqa: F401\n"
        "from engine import train_one_epoch\n\n\n"
        "def main(args, loader):\n"
        "    model = create_model(args.model, pretrained=False, num_classes=10)\n"
        "    optimizer = torch.optim.AdamW(model.parameters())\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    train_one_epoch(model, loader, optimizer, scaler)\n"
    ),
}
TIMM_FOUND = [("models/vit.py", 9, "AMP110")]


@pytest.mark.parametrize("old, new, found", [
    ("create_model(args.model,", "create_model(args.model,", TIMM_FOUND),
    ("create_model(args.model,", "create_model('deit_tiny_patch16_224.fb_in1k',", TIMM_FOUND),
    ("from timm.models import create_model\n", "import timm\n", []),  # create_model unbound
    # a name the project does not register is timm's own model
    ("create_model(args.model,", "create_model('resnet50',", []),
    # the project's own `register_model` is not timm's registry
    ("from timm.models.registry import register_model\n",
     "from .registry import register_model\n", []),
    # the clean twin: a fill float16 can hold
    ("masked_fill(mask, -1e9)", "masked_fill(mask, -1e4)", []),
])
def test_timm_create_model_builds_the_project_s_registered_models(old, new, found):
    files = {path: text.replace(old, new) for path, text in TIMM_PROJECT.items()}
    if "import timm\n" in new:
        files["deit/main.py"] = files["deit/main.py"].replace("create_model(", "timm.create_model(")
        found = TIMM_FOUND
    results = lint_project(files, SETTINGS)
    assert findings(results) == found
    if found:
        (message,) = messages(results, "AMP110")
        assert "model <- " in message and "create_model(" in message
        assert "-> VisionTransformer in models/vit.py" in message


def test_timm_create_model_of_a_name_no_literal_fixes_is_bounded_and_named():
    # nine more registered models: `create_model(args.model)` may build any of ten, none is
    # followed and --show-regions says why; an unregistered literal name is timm's own model
    extra = "\n".join(
        f"\n@register_model\ndef extra_{i}(pretrained=False, **kwargs):\n    return VisionTransformer()\n"
        for i in range(9))
    files = dict(TIMM_PROJECT)
    files["deit/models/vit.py"] += extra
    assert findings(lint_project(files, SETTINGS)) == []
    reasons = [why for _, call, why in build(files).unresolved if call.startswith("model at")]
    assert reasons and "may build any of the 10 models the project registers" in reasons[0]
    literal = {**files, "deit/main.py": files["deit/main.py"].replace("args.model,", "'extra_3',")}
    assert findings(lint_project(literal, SETTINGS)) == TIMM_FOUND
    timm_own = {**files, "deit/main.py": files["deit/main.py"].replace("args.model,", "'resnet50',")}
    reasons = [why for _, call, why in build(timm_own).unresolved if call.startswith("model at")]
    assert reasons and "create_model` outside the linted files" in reasons[0]


def test_timm_create_model_of_a_hub_model_builds_none_of_the_project_s():
    files = {path: text.replace("create_model(args.model,", "create_model('hf-hub:timm/vit_base_patch16_224',")
             for path, text in TIMM_PROJECT.items()}
    assert findings(lint_project(files, SETTINGS)) == []
    reasons = [why for _, call, why in build(files).unresolved if call.startswith("model at")]
    assert reasons and "create_model` outside the linted files" in reasons[0]
