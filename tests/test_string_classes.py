"""Strings that name project classes (issue 26, amplint/analysis/project/string_classes.py):
the class flow follows a Hydra `_target_`, a LightningCLI `class_path`, a detectron2 registry
lookup by a yacs/YAML name and a reflective lookup by a literal or configured name, when the
string names a project class exactly; otherwise the call is unresolved and --show-regions says
why. Each project is laid out like the public repository its test names, has a clean twin that
must stay silent, and its hazard is missed on main."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def messages(files, code):
    return [d.message for result in lint_project(files, SETTINGS).values() for d in result.diagnostics
            if d.code == code]


def unresolved(files):
    return [(call, why) for _, call, why in build(files).unresolved]


# -- Hydra (ashleve/lightning-hydra-template) ---------------------------------------------------

HYDRA = "strings_hydra_template"
HYDRA_HAZARD = ("src/models/components/simple_dense_net.py", 19, "AMP110")
HYDRA_FIX = [("-1e9", "torch.finfo(logits.dtype).min")]


def test_hydra_instantiate_follows_target_and_its_net_argument():
    # train.py: `model = hydra.utils.instantiate(cfg.model)`; configs/model/mnist.yaml names
    # MNISTLitModule by `_target_` and its `net:` argument SimpleDenseNet, whose forward runs
    # under the region through MNISTLitModule.forward's `self.net(x)`
    files = load(HYDRA)
    assert findings(files) == [HYDRA_HAZARD]
    (message,) = messages(files, "AMP110")
    assert "the config at configs/model/mnist.yaml:1 (net: src.models.components.simple_dense_net.SimpleDenseNet" in message
    assert "the autocast region at src/train.py:13" in message
    assert findings(load(HYDRA, HYDRA_FIX)) == []


def test_hydra_target_must_name_the_class_exactly():
    # a misspelt module path names nothing: no guess by class name, and the call says why
    files = load(HYDRA, [("src.models.mnist_module.MNISTLitModule", "src.models.mnist_modul.MNISTLitModule")])
    assert findings(files) == []
    assert unresolved(files) == [("model at src/train.py:14",
                                  "it comes from `src.models.mnist_modul.MNISTLitModule` outside the linted files")]
    # a `net:` naming a class outside the project: MNISTLitModule is reached, the net is not
    files = load(HYDRA, [("src.models.components.simple_dense_net.SimpleDenseNet", "torchvision.models.resnet18")])
    assert findings(files) == []


def test_hydra_instantiate_of_an_unnamed_key_is_unresolved():
    files = load(HYDRA, [("instantiate(cfg.model)", "instantiate(cfg)")])
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert call == "model at src/train.py:14"
    assert "built by Hydra from a config whose key the call does not name" in why
    files = load(HYDRA, [("instantiate(cfg.model)", "instantiate(cfg.network)")])
    ((_, why),) = unresolved(files)
    assert "no YAML or dict of the project gives `network` a `_target_`" in why


def test_hydra_group_options_and_the_defaults_list():
    # a second option in the `model` group: the defaults list (`- model: mnist`) selects one
    files = load(HYDRA)
    files[HYDRA + "/configs/model/tiny.yaml"] = "_target_: src.models.tiny.TinyNet\n"
    files[HYDRA + "/src/models/tiny.py"] = (
        "import torch\n\n\nclass TinyNet(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x.masked_fill(x == 0, -1e9)\n")
    assert findings(files) == [HYDRA_HAZARD]
    # with both selected (an experiment overrides it), which one runs is not decided
    files[HYDRA + "/configs/experiment/tiny.yaml"] = "# @package _global_\ndefaults:\n  - override /model: tiny\n"
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert "the configs name 2 different classes (src.models.mnist_module.MNISTLitModule, src.models.tiny.TinyNet)" in why


def test_hydra_target_in_a_python_dict():
    # the same config written as a dict literal (`OmegaConf.create({"model": {...}})`), no YAML
    files = {k: v for k, v in load(HYDRA).items() if not k.endswith("model/mnist.yaml")}
    files[HYDRA + "/src/train.py"] = files[HYDRA + "/src/train.py"].replace(
        "def train(cfg: DictConfig, loader):\n    model = hydra.utils.instantiate(cfg.model)",
        "def train(cfg: DictConfig, loader):\n"
        "    cfg = OmegaConf.create({\"model\": {\"_target_\":"
        " \"src.models.components.simple_dense_net.SimpleDenseNet\"}})\n"
        "    model = hydra.utils.instantiate(cfg.model)").replace(
        "from omegaconf import DictConfig", "from omegaconf import DictConfig, OmegaConf")
    assert findings(files) == [HYDRA_HAZARD]
    # without any config naming it: unresolved, nothing reached
    files.pop(HYDRA + "/src/train.py")
    assert findings({k: v for k, v in files.items()}) == []


# -- LightningCLI (Lightning-AI/pytorch-lightning examples, LightningCLI docs) ---------------------

CLI = "strings_lightning_cli"
CLI_HAZARD = ("project/models/encoders.py", 17, "AMP110")


def test_lightning_cli_class_path_and_init_args():
    # configs/mnist.yaml: `trainer: precision: 16-mixed`, `model: class_path: ...LitClassifier`
    # with `init_args: backbone: class_path: ...MLPEncoder`; Lightning runs LitClassifier's
    # forward, whose `self.backbone(x)` is the encoder no call site of the tree passes
    files = load(CLI)
    assert findings(files) == [CLI_HAZARD]
    (message,) = messages(files, "AMP110")
    assert "(backbone: project.models.encoders.MLPEncoder at configs/mnist.yaml:10)" in message
    assert "Lightning's autocast (trainer.precision: 16-mixed at configs/mnist.yaml:4)" in message
    assert findings(load(CLI, [("-1e9", "torch.finfo(scores.dtype).min")])) == []
    # the YAML's model is the one the Trainer runs: enabled, not a maybe over every LightningModule
    project = build(load(CLI))
    assert not project.unresolved
    entries = project.entries_for(CLI + "/project/models/classifier.py")
    assert {e.target for e in entries} == {"LitClassifier.forward", "LitClassifier.training_step"}
    assert all(e.enabled.name == "TRUE" and e.device == "cuda" for e in entries)


def test_lightning_cli_backbone_without_init_args_is_not_guessed():
    files = load(CLI, [("    backbone:\n      class_path: project.models.encoders.MLPEncoder\n"
                        "      init_args:\n        hidden_dim: 128\n", "")])
    assert "MLPEncoder" not in files[CLI + "/configs/mnist.yaml"]
    assert findings(files) == []


# -- detectron2 META_ARCH_REGISTRY with yacs defaults (facebookresearch/detectron2) ------------------

D2 = "strings_d2_meta_arch"
RCNN = ("detectron2/modeling/meta_arch/rcnn.py", 22, "AMP102")
RETINA = ("detectron2/modeling/meta_arch/retinanet.py", 20, "AMP110")
D2_FIX = [("torch.sigmoid(self.objectness(features))", "self.objectness(features)"),
          ("F.binary_cross_entropy(scores", "F.binary_cross_entropy_with_logits(scores")]


def test_d2_registry_get_by_the_configured_meta_architecture():
    # build_model: `META_ARCH_REGISTRY.get(meta_arch)(cfg)`, meta_arch = cfg.MODEL.META_ARCHITECTURE,
    # "GeneralizedRCNN" in the yacs defaults and the YAML: RetinaNet, registered too, is not run
    files = load(D2)
    assert findings(files) == [RCNN]
    assert findings(load(D2, D2_FIX)) == []


def test_d2_configs_that_disagree_leave_the_lookup_unresolved():
    # a YAML that names RetinaNet beside the defaults' GeneralizedRCNN: which config this
    # build_model(cfg) loads is not known; the set of both is not followed for its cost (on
    # detectron2 itself it reached 5 meta-architectures and 52 more files for no finding)
    files = load(D2, [('  META_ARCHITECTURE: "GeneralizedRCNN"', '  META_ARCHITECTURE: "RetinaNet"')])
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert call == "model at tools/plain_train_net.py:14"
    assert why.endswith("the configs give `MODEL.META_ARCHITECTURE` as 2 different classes "
                        "(GeneralizedRCNN, RetinaNet): which one this call makes, no file decides")
    files = load(D2, [('"GeneralizedRCNN"', '"RetinaNet"')])  # defaults and YAML agree
    assert findings(files) == [RETINA]


def test_d2_class_registered_by_another_package_is_not_run():
    # projects/TensorMask registers TensorMask into detectron2's registry and its YAML names it;
    # detectron2's own build_model runs it only once `tensormask` is imported, which nothing in
    # the detectron2 package does: not reached (its masked_fill would be AMP110)
    files = load(D2)
    assert any(k.endswith("projects/TensorMask/configs/Base-TensorMask.yaml") for k in files)
    assert findings(files) == [RCNN]
    moved = {k.replace("projects/TensorMask/tensormask/", "detectron2/modeling/meta_arch/tensormask/"): v
             for k, v in files.items()}
    assert findings(load(D2, [('"GeneralizedRCNN"', '"TensorMask"')])) == []  # named everywhere: still not run
    # the same class inside the detectron2 package is run
    moved = {k: v.replace("from detectron2.modeling import META_ARCH_REGISTRY", "from ..build import META_ARCH_REGISTRY")
             .replace('"GeneralizedRCNN"', '"TensorMask"') for k, v in moved.items()}
    assert findings(moved) == [("detectron2/modeling/meta_arch/tensormask/arch.py", 18, "AMP110")]


def test_d2_registry_name_nothing_registers_is_unresolved():
    files = load(D2, [('"GeneralizedRCNN"', '"PanopticFPN"')])
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert call == "model at tools/plain_train_net.py:14"
    assert "looked up in a registry by `MODEL.META_ARCHITECTURE`" in why and "PanopticFPN" in why


# -- reflective lookup (pytorch/examples imagenet/main.py) ------------------------------------------

IMAGENET = "strings_imagenet_arch"
RESNET = ("models/resnet.py", 17, "AMP110")
VGG = ("models/vgg.py", 15, "AMP110")


def test_dict_lookup_by_a_name_is_every_member_the_choices_allow():
    # `models.__dict__[args.arch]()`: `--arch` defaults to resnet18, but any name its `choices=`
    # (`model_names`: the lower-case callables of `models`) allows may be given, so the lookup
    # holds resnet18 and vgg11 (re-exported by `from .resnet import *` / `.vgg`), and each
    # finding names the key value that selects its model
    files = load(IMAGENET)
    assert findings(files) == [RESNET, VGG]
    said = messages(files, "AMP110")
    assert any("(when args.arch is 'vgg11', 1 of the" in m for m in said)
    assert any("(when args.arch is 'resnet18', 1 of the" in m for m in said)
    fixed = [("x.masked_fill(~valid, -1e9)", "x.masked_fill(~valid, torch.finfo(x.dtype).min)"),
             ("x.masked_fill(x == 0, -1e9)", "x.masked_fill(x == 0, torch.finfo(x.dtype).min)")]
    assert findings(load(IMAGENET, fixed)) == []
    # a literal `choices=` list narrows the set to its names
    assert findings(load(IMAGENET, [("choices=model_names,", 'choices=["vgg11"],')])) == [VGG]


def test_the_choices_comprehension_filters_the_members():
    # `model_names` keeps lower-case names: a class exported under a capitalised name only
    # (and no lower-case factory) is not a choice; without `choices=` it is
    extra = ("import torch\nimport torch.nn as nn\n\n__all__ = [\"Probe\"]\n\n\nclass Probe(nn.Module):\n"
             "    def forward(self, x):\n        return x.masked_fill(x == 0, -1e9)  # probe\n")
    files = load(IMAGENET, [("from .vgg import *", "from .vgg import *\nfrom .probe import *")])
    files[IMAGENET + "/models/probe.py"] = extra
    assert findings(files) == [RESNET, VGG]
    files = load(IMAGENET, [("from .vgg import *", "from .vgg import *\nfrom .probe import *"),
                            ("choices=model_names,", "")])
    files[IMAGENET + "/models/probe.py"] = extra
    assert findings(files) == [("models/probe.py", 9, "AMP110"), RESNET, VGG]


def test_getattr_with_a_literal_or_configured_name():
    assert findings(load(IMAGENET, [("models.__dict__[args.arch]()", 'getattr(models, "vgg11")()')])) == [VGG]
    assert findings(load(IMAGENET, [("models.__dict__[args.arch]()", "getattr(models, args.arch)()")])) == [RESNET, VGG]
    files = load(IMAGENET, [("models.__dict__[args.arch]()", 'importlib.import_module("models." + "vgg").VGG()'),
                            ("import argparse\n", "import argparse\nimport importlib\n")])
    assert findings(files) == [VGG]


def test_lookup_by_a_name_nothing_decides_is_every_member():
    files = load(IMAGENET, [('metavar="ARCH", default="resnet18",', 'metavar="ARCH",')])
    assert findings(files) == [RESNET, VGG]
    assert unresolved(files) == []
    # a namespace handed to a helper as a parameter: still the project package's members
    files = load(IMAGENET, [("model = models.__dict__[args.arch]()", "model = build(models, args.arch)"),
                            ("def train(", "def build(pkg, name):\n    return getattr(pkg, name)()\n\n\ndef train(")])
    assert findings(files) == [RESNET, VGG]
    # a namespace outside the project gives nothing: unresolved, with the reason
    files = load(IMAGENET, [("model = models.__dict__[args.arch]()", "model = torchvision.models.__dict__[args.arch]()"),
                            ("import models\n", "import models\nimport torchvision\n"),
                            ('metavar="ARCH", default="resnet18",', 'metavar="ARCH",')])
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert call == "model at main.py:38"
    assert "which no `default=` or config of the project gives" in why


def test_show_regions_says_which_key_selects_each_model(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from amplint.cli.main import cli

    for name, text in load(IMAGENET, [('metavar="ARCH", default="resnet18",', 'metavar="ARCH",')]).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.chdir(tmp_path / IMAGENET)
    result = CliRunner().invoke(cli, ["--show-regions", "--no-cache", "."])
    assert result.exit_code == 0, result.output
    assert ("model at main.py:37 -> VGG.forward in models/vgg.py (model <- models.__dict__[...]() at main.py:25 "
            "(when args.arch is 'vgg11', 1 of the 3 names of models) -> VGG in models/vgg.py)") in result.output
    assert "unresolved" not in result.output


def _hydra_trainer_project(trainer_yaml):
    """ashleve/lightning-hydra-template's shape: configs/trainer/gpu.yaml is the Trainer's own
    Hydra config (`_target_: lightning.pytorch.trainer.Trainer`, `precision:` beside it), the
    model config names the LightningModule and its criterion."""
    return {
        "proj/configs/train.yaml": "defaults:\n  - model: multilabel\n  - trainer: gpu\n",
        "proj/configs/trainer/gpu.yaml": trainer_yaml,
        "proj/configs/model/multilabel.yaml": (
            "_target_: src.models.multilabel_module.MultiLabelLitModule\n"
            "criterion:\n  _target_: src.models.losses.WeightedBCELoss\n"),
        "proj/src/__init__.py": "",
        "proj/src/models/__init__.py": "",
        "proj/src/models/losses.py": (
            "import torch\nfrom torch import nn\n\n\n"
            "class WeightedBCELoss(nn.Module):\n"
            "    def forward(self, logits, target):\n"
            "        probs = torch.sigmoid(logits)\n"
            "        return nn.functional.binary_cross_entropy(probs, target)\n"),
        "proj/src/models/multilabel_module.py": (
            "from lightning import LightningModule\n\n\n"
            "class MultiLabelLitModule(LightningModule):\n"
            "    def __init__(self, criterion):\n"
            "        super().__init__()\n"
            "        self.criterion = criterion\n\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        x, y = batch\n"
            "        return self.criterion(x, y)\n"),
        "proj/src/train.py": (
            "import hydra\n\n\n"
            "def train(cfg):\n"
            "    model = hydra.utils.instantiate(cfg.model)\n"
            "    trainer = hydra.utils.instantiate(cfg.trainer)\n"
            "    trainer.fit(model=model)\n"),
    }


def test_hydra_trainer_config_precision_opens_lightnings_region():
    files = _hydra_trainer_project(
        "_target_: lightning.pytorch.trainer.Trainer\naccelerator: gpu\nprecision: 16-mixed\n")
    assert findings(files) == [("src/models/losses.py", 8, "AMP102")]
    (message,) = messages(files, "AMP102")
    assert "precision: 16-mixed (Hydra `_target_` Trainer) at configs/trainer/gpu.yaml:3" in message
    # the twin: full precision; and a `precision:` of something that is not the Trainer
    assert findings(_hydra_trainer_project(
        "_target_: lightning.pytorch.trainer.Trainer\naccelerator: gpu\nprecision: 32\n")) == []
    assert findings(_hydra_trainer_project(
        "_target_: src.callbacks.Quantizer\nprecision: 16-mixed\n")) == []
