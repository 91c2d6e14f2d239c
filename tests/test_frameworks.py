"""Framework-implied regions on small projects written the way each framework's docs show;
each is found with mixed precision on and silent in the same project with it off."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.frameworks import yaml_keys
from tests.test_project import findings, load, messages

SETTINGS = Settings.default()

CASES = [
    # (project, expected findings, text in the message, (old, new) that turns mixed precision off)
    pytest.param(
        "lightning_seg", [("lightning_seg/losses.py", 13, "AMP102")],
        'Lightning\'s autocast (Trainer(precision="16-mixed") at main.py:10)',
        ('precision="16-mixed"', 'precision="32-true"'), id="lightning",
    ),
    pytest.param(
        "lightning_manual",
        # (the GAN's randn/ones noise and labels are float32 tensors autocast re-casts: silent;
        # `self.manual_backward` runs inside Lightning's own autocast, which the user cannot
        # move it out of: not AMP104, issue 28)
        [("lightning_manual/gan.py", 22, "AMP102")],
        "Lightning runs `GAN.training_step` under autocast: Trainer(precision=16) at train.py:7",
        ("precision=16", 'precision="16-true"'), id="lightning-manual-backward",
    ),
    pytest.param(
        "accelerate_cls", [("accelerate_cls/modeling.py", 17, "AMP102")],
        "accelerate runs the prepared model's `MultiLabelHead.forward` under autocast: "
        'Accelerator(mixed_precision="fp16") at train.py:9',
        ('mixed_precision="fp16"', 'mixed_precision="no"'), id="accelerate",
    ),
    pytest.param(
        "mmdet_custom_loss",
        [("mmdet_custom_loss/mmdet_custom/models/prob_focal_loss.py", 22, "AMP102")],
        "mmengine's AmpOptimWrapper runs `ProbFocalLoss.forward` under autocast: "
        "optim_wrapper = dict(type='AmpOptimWrapper') at configs/retinanet_custom.py:11",
        ('type="AmpOptimWrapper"', 'type="OptimWrapper"'), id="mmengine",
    ),
    pytest.param(
        "d2_roi_heads", [("d2_roi_heads/d2_custom/roi_heads.py", 8, "AMP102")],
        "(called at line 19; detectron2's AMPTrainer runs `SoftMaskROIHeads.forward` under "
        "autocast: SOLVER.AMP.ENABLED: True at configs/mask_rcnn_custom.yaml:12; built by the config "
        "configs/mask_rcnn_custom.yaml -> SoftMaskROIHeads in d2_custom/roi_heads.py)",
        ("ENABLED: True", "ENABLED: False"), id="detectron2-yaml",
    ),
    pytest.param(
        "hf_multilabel", [("hf_multilabel/modeling_tagger.py", 19, "AMP102")],
        "the Hugging Face Trainer runs `BertForTagging.forward` under autocast: "
        "TrainingArguments(fp16=True) at run_tagging.py:9",
        ("fp16=True", "fp16=False"), id="huggingface",
    ),
]


@pytest.mark.parametrize("name,expected,cite,off", CASES)
def test_framework_region_found(name, expected, cite, off):
    results = lint_project(load(name), SETTINGS)
    assert findings(results) == expected
    assert all(not result.errors for result in results.values())
    assert any(cite in d.message for r in results.values() for d in r.diagnostics), [
        d.message for r in results.values() for d in r.diagnostics
    ]


@pytest.mark.parametrize("name,expected,cite,off", CASES)
def test_same_project_without_mixed_precision_is_silent(name, expected, cite, off):
    files = load(name, [off])
    assert findings(lint_project(files, SETTINGS)) == []
    project = build(files)
    assert project.settings == []
    assert not any(project.entries_for(path) for path in files)


@pytest.mark.parametrize("name,expected,cite,off", CASES)
def test_framework_project_file_by_file(name, expected, cite, off):
    """Each file linted alone: no crash, and no framework region (single-file facts)."""
    for path, text in load(name).items():
        if not path.endswith(".py"):
            continue
        results = lint_project({path: text}, SETTINGS)
        assert not results[path].errors
        assert not any("runs `" in d.message for d in results[path].diagnostics)


def lightning_project(trainer_line, extra=""):
    return {
        "proj/model.py": (
            "import lightning.pytorch as pl\n"
            "import torch.nn.functional as F\n"
            "class Base(pl.LightningModule):\n"
            "    pass\n"
            "class Helper:\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        return F.binary_cross_entropy(batch[0], batch[1])\n"
        ),
        "proj/lit.py": (
            "import torch.nn.functional as F\n"
            "from model import Base\n"
            "class Lit(Base):\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        return F.binary_cross_entropy(batch[0], batch[1])\n"
            "    def configure_optimizers(self):\n"
            "        return F.binary_cross_entropy(self.a, self.b)\n"
        ),
        "proj/main.py": "from lightning.pytorch import Trainer\nfrom lit import Lit\n" + extra + trainer_line + (
            "\ntrainer.fit(Lit())\n" if trainer_line.startswith("trainer =") else "\n"),
    }


@pytest.mark.parametrize("trainer,enabled,dtype", [
    ('trainer = Trainer(precision="bf16-mixed", accelerator="cuda")', Enabled.TRUE, "bfloat16"),
    ('trainer = Trainer(precision="16")', Enabled.TRUE, "float16"),
    ("trainer = Trainer(precision=args.precision)", Enabled.MAYBE, None),
    ('trainer = Trainer(precision="16-mixed" if args.amp else "32-true")', Enabled.MAYBE, "float16"),
])
def test_lightning_precision_values(trainer, enabled, dtype):
    project = build(lightning_project(trainer))
    (entry,) = project.entries_for("proj/lit.py")  # only the hook, not configure_optimizers
    assert (entry.target, entry.enabled, entry.dtype) == ("Lit.training_step", enabled, dtype)
    # Helper is not a LightningModule: its training_step is not run by Lightning
    assert project.entries_for("proj/model.py") == ()


@pytest.mark.parametrize("trainer", [
    'trainer = Trainer(precision="32-true")', 'trainer = Trainer(precision="bf16-true")',
    "trainer = Trainer(precision=32)", "trainer = Trainer(max_epochs=3)",
    "trainer = Trainer(precision=None)",
])
def test_lightning_without_autocast(trainer):
    project = build(lightning_project(trainer))
    assert not any(project.entries_for(path) for path in project.files)


def test_bf16_mixed_on_cpu_is_silent_for_bce():
    files = lightning_project('trainer = Trainer(precision="bf16-mixed", accelerator="cpu")')
    assert findings(lint_project(files, SETTINGS)) == []
    files = lightning_project('trainer = Trainer(precision="bf16-mixed")')
    assert findings(lint_project(files, SETTINGS)) == [("proj/lit.py", 5, "AMP102")]


def test_lightning_cli_yaml():
    files = lightning_project("")
    files["proj/config.yaml"] = "trainer:\n  max_epochs: 10\n  precision: 16-mixed\nmodel:\n  lr: 0.1\n"
    results = lint_project(files, SETTINGS)
    assert findings(results) == [("proj/lit.py", 5, "AMP102")]
    assert "trainer.precision: 16-mixed at config.yaml:3" in messages(results, "AMP102")[0]
    files["proj/config.yaml"] = "trainer:\n  precision: 32-true\n"
    assert findings(lint_project(files, SETTINGS)) == []


def test_fabric_setup():
    files = {
        "fab/net.py": (
            "import torch\nfrom torch import nn\n"
            "class Net(nn.Module):\n"
            "    def forward(self, x, keep):\n"
            "        out = torch.zeros(x.shape[0], 10, device=x.device)\n"
            "        out[keep] = self.proj(x)\n"
            "        return out\n"
        ),
        "fab/train.py": (
            "from lightning.fabric import Fabric\nfrom net import Net\n"
            "fabric = Fabric(accelerator='cuda', precision='16-mixed')\n"
            "model = Net()\n"
            "model, optimizer = fabric.setup(model, optimizer)\n"
        ),
    }
    results = lint_project(files, SETTINGS)
    assert findings(results) == [("fab/net.py", 5, "AMP101")]
    files["fab/train.py"] = files["fab/train.py"].replace("'16-mixed'", "'32-true'")
    assert findings(lint_project(files, SETTINGS)) == []


def test_accelerate_expression_is_maybe_and_unprepared_models_are_not_regions():
    files = load("accelerate_cls", [('mixed_precision="fp16"', "mixed_precision=args.mixed_precision")])
    (entry,) = build(files).entries_for("accelerate_cls/modeling.py")
    assert (entry.enabled, entry.dtype) == (Enabled.MAYBE, None)
    files = load("accelerate_cls", [("accelerator.prepare(model, optimizer, loader)",
                                     "accelerator.prepare(optimizer, loader)")])
    assert findings(lint_project(files, SETTINGS)) == []


def test_detectron2_python_config_and_amptrainer():
    files = load("d2_roi_heads", [("ENABLED: True", "ENABLED: False")])
    files["d2_roi_heads/train_net.py"] = files["d2_roi_heads/train_net.py"].replace(
        "    cfg.freeze()\n", "    cfg.SOLVER.AMP.ENABLED = True\n    cfg.freeze()\n"
    )
    assert findings(lint_project(files, SETTINGS)) == [("d2_roi_heads/d2_custom/roi_heads.py", 8, "AMP102")]
    files = load("d2_roi_heads", [("ENABLED: True", "ENABLED: False")])
    files["d2_roi_heads/plain_train.py"] = (
        "from detectron2.engine import AMPTrainer\n"
        "def run(model, loader, optimizer):\n"
        "    AMPTrainer(model, loader, optimizer).train(0, 1000)\n"
    )
    assert findings(lint_project(files, SETTINGS)) == [("d2_roi_heads/d2_custom/roi_heads.py", 8, "AMP102")]


def test_mmdet_amp_flag_in_train_script_is_maybe():
    files = load("mmdet_custom_loss", [('type="AmpOptimWrapper"', 'type="OptimWrapper"')])
    files["mmdet_custom_loss/tools/train.py"] = (
        "from mmengine.config import Config\n"
        "def main(args):\n"
        "    cfg = Config.fromfile(args.config)\n"
        "    if args.amp is True:\n"
        "        cfg.optim_wrapper.type = 'AmpOptimWrapper'\n"
        "        cfg.optim_wrapper.loss_scale = 'dynamic'\n"
    )
    project = build(files)
    (entry,) = project.entries_for("mmdet_custom_loss/mmdet_custom/models/prob_focal_loss.py")
    assert entry.enabled is Enabled.MAYBE


def test_mm_registry_other_than_models_is_not_a_region():
    files = load("mmdet_custom_loss", [("from mmdet.registry import MODELS", "from mmdet.registry import TRANSFORMS"),
                                       ("@MODELS.register_module()", "@TRANSFORMS.register_module()")])
    assert findings(lint_project(files, SETTINGS)) == []


def test_hf_model_passed_to_trainer_without_pretrained_base():
    files = load("hf_multilabel", [
        ("(BertPreTrainedModel)", "(nn.Module)"),
        ('BertForTagging.from_pretrained("bert-base-uncased", config=config)', "BertForTagging(config)"),
    ])
    # still run by the Trainer: `Trainer(model=model, args=...)` with model = BertForTagging(...)
    assert findings(lint_project(files, SETTINGS)) == [("hf_multilabel/modeling_tagger.py", 19, "AMP102")]


def test_yaml_keys():
    text = "A:\n  B: 1\n  C:\n    D: True  # note\nE: x\n# c\n- item\n"
    assert list(yaml_keys(text)) == [(("A", "B"), "1", 2), (("A", "C", "D"), "True", 4), (("E",), "x", 5)]


# Lightning's own package, linted with a test of it that runs manual optimization under
# precision="16-mixed" (lightning/pytorch/core/module.py and tests/tests_pytorch/...): the
# region reaches `LightningModule.manual_backward` through the test's call, and neither that
# call (Lightning's protocol) nor the backward in Lightning's own body is reported (issue 28).
LIGHTNING_PACKAGE = {
    "pl/src/lightning/pytorch/core/module.py": (
        "import torch\n"
        "class LightningModule(torch.nn.Module):\n"
        "    def manual_backward(self, loss, *args, **kwargs):\n"
        "        self._verify_is_manual_optimization('manual_backward')\n"
        "        self.trainer.strategy.backward(loss, None, *args, **kwargs)\n"
        "    def backward(self, loss, *args, **kwargs):\n"
        "        loss.backward(*args, **kwargs)\n"
    ),
    "pl/tests/test_manual.py": (
        "from lightning.pytorch import Trainer\n"
        "from lightning.pytorch.core.module import LightningModule\n"
        "class ManualModel(LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        opt = self.optimizers()\n"
        "        loss = self.layer(batch).sum()\n"
        "        self.manual_backward(loss)\n"
        "        opt.step()\n"
        "def test_manual_precision():\n"
        "    trainer = Trainer(precision='16-mixed', max_epochs=1)\n"
        "    trainer.fit(ManualModel())\n"
    ),
}


def test_framework_backward_protocol_is_not_reported():
    results = lint_project(LIGHTNING_PACKAGE, SETTINGS)
    assert [f for f in findings(results) if f[2] == "AMP104"] == []
    # the region does reach the test's training_step (the finding is withheld, not missed)
    project = build(LIGHTNING_PACKAGE)
    assert project.entries_for("pl/tests/test_manual.py")


def test_backward_written_inside_the_users_region_still_reported():
    files = dict(LIGHTNING_PACKAGE)
    files["pl/tests/test_manual.py"] = files["pl/tests/test_manual.py"].replace(
        "        loss = self.layer(batch).sum()\n        self.manual_backward(loss)\n",
        "        with torch.autocast('cuda'):\n"
        "            loss = self.layer(batch).sum()\n"
        "            self.manual_backward(loss)\n",
    ).replace("from lightning.pytorch import Trainer\n", "import torch\nfrom lightning.pytorch import Trainer\n")
    assert [f for f in findings(lint_project(files, SETTINGS)) if f[2] == "AMP104"] == [
        ("pl/tests/test_manual.py", 9, "AMP104")]


@pytest.mark.parametrize("flag", ["fp16=True", "bf16=True"])
def test_trainer_setting_found_by_the_cli_whatever_the_dtype(tmp_path, flag):
    """Through the CLI, whose first pass summarises only the files whose text may hold a
    setting: `TrainingArguments(bf16=True)` is a setting as `fp16=True` is (the text test once
    matched `fp16=` and `bp16=`, not `bf16=`, so the bf16 script was never summarised)."""
    from project_files import cli_findings

    for path, text in load("hf_multilabel", [("fp16=True", flag)]).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    found = cli_findings(tmp_path / "hf_multilabel", "--no-cache")
    assert ("modeling_tagger.py", 19, "AMP102") in found, found
