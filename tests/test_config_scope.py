"""mmengine / detectron2 settings run the model their own config builds (issue 13), not every
model class of the tree. tests/projects/d2_lazy_scope: a LazyConfig's `train.amp.enabled = True`
for a Mask R-CNN (model from `.common.models.mask_rcnn_fpn`) next to a TensorMask project."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project import build, lint_project

from project_files import load  # noqa: E402
SETTINGS = Settings.default()

RCNN = ("d2_lazy_scope/maskx/modeling/rcnn.py", 16, "AMP102")
TENSORMASK = ("d2_lazy_scope/projects/TensorMask/tensormask/arch.py", 16, "AMP110")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items() for d in result.diagnostics)


def test_lazyconfig_amp_runs_only_the_model_its_config_builds():
    results = lint_project(load("d2_lazy_scope"), SETTINGS)
    assert findings(results) == [RCNN]
    (message,) = [d.message for r in results.values() for d in r.diagnostics]
    assert ("train.amp.enabled = True at configs/mask_rcnn_amp.py:5; built by the config "
            "configs/common/models/mask_rcnn_fpn.py -> MaskRCNNX in maskx/modeling/rcnn.py") in message
    # amp off: silent
    off = load("d2_lazy_scope", [("train.amp.enabled = True", "train.amp.enabled = False")])
    assert findings(lint_project(off, SETTINGS)) == []


def test_the_config_naming_the_other_model_reaches_it_instead():
    files = load("d2_lazy_scope", [("from maskx.modeling import MaskRCNNX", "from tensormask import TensorMask"),
                                   ("model = L(MaskRCNNX)(", "model = L(TensorMask)(")])
    assert findings(lint_project(files, SETTINGS)) == [TENSORMASK]


def test_a_config_naming_no_model_keeps_a_maybe_region_and_says_so():
    files = load("d2_lazy_scope", [("from .common.models.mask_rcnn_fpn import model\n", "")])
    project = build(files)
    (entry,) = project.entries_for("d2_lazy_scope/projects/TensorMask/tensormask/arch.py")
    assert entry.enabled is Enabled.MAYBE
    assert any("could not be followed" in why for _, _, why in project.unresolved)
    assert findings(lint_project(files, SETTINGS)) == [RCNN, TENSORMASK]


def test_mm_config_scopes_to_the_types_its_model_dict_names():
    # mmdet_custom_loss's config names ProbFocalLoss inside `model = dict(...)`: still run
    files = load("mmdet_custom_loss")
    assert findings(lint_project(files, SETTINGS)) != []
    renamed = load("mmdet_custom_loss", [('loss_cls=dict(type="ProbFocalLoss"', 'loss_cls=dict(type="FocalLoss"')])
    project = build(renamed)
    # the config builds no project class: unresolved, a maybe region over every model class
    (entry,) = project.entries_for("mmdet_custom_loss/mmdet_custom/models/prob_focal_loss.py")
    assert entry.enabled is Enabled.MAYBE


# detectron2's own source registers through relative imports, and its project configs take
# the model from the model zoo: `model_zoo.get_config("common/models/x.py").model`
D2_ZOO = {
    "d2zoo/detectron2/__init__.py": "",
    "d2zoo/detectron2/modeling/__init__.py": "from .meta_arch.build import META_ARCH_REGISTRY\n",
    "d2zoo/detectron2/modeling/meta_arch/__init__.py": "",
    "d2zoo/detectron2/modeling/meta_arch/build.py": (
        "from fvcore.common.registry import Registry\n\nMETA_ARCH_REGISTRY = Registry('META_ARCH')\n"),
    "d2zoo/detectron2/modeling/meta_arch/rcnn.py": (
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
        "from .build import META_ARCH_REGISTRY\n\n\n"
        "@META_ARCH_REGISTRY.register()\nclass GeneralizedRCNNX(nn.Module):\n"
        "    def forward(self, logits, target):\n"
        "        return F.binary_cross_entropy(torch.sigmoid(logits), target)\n"),
    "d2zoo/configs/common/models/rcnn.py": (
        "from detectron2.config import LazyCall as L\n"
        "from detectron2.modeling.meta_arch.rcnn import GeneralizedRCNNX\n\n"
        "model = L(GeneralizedRCNNX)()\n"),
    "d2zoo/configs/common/train.py": "train = dict(amp=dict(enabled=False), max_iter=90000)\n",
    "d2zoo/projects/Other/configs/rcnn_amp.py": (
        "from detectron2 import model_zoo\n\n"
        "model = model_zoo.get_config(\"common/models/rcnn.py\").model\n"
        "train = model_zoo.get_config(\"common/train.py\").train\n"
        "train.amp.enabled = True\n"),
    "d2zoo/projects/Other/other/arch.py": (
        "from detectron2.modeling import META_ARCH_REGISTRY\nfrom torch import nn\n\n\n"
        "@META_ARCH_REGISTRY.register()\nclass OtherArch(nn.Module):\n"
        "    def forward(self, scores, mask):\n"
        "        return scores.masked_fill(mask, -1e9)\n"),
}
ZOO_RCNN = ("d2zoo/detectron2/modeling/meta_arch/rcnn.py", 11, "AMP102")


def test_model_zoo_config_and_relative_registration_scope_the_region():
    results = lint_project(D2_ZOO, SETTINGS)
    assert findings(results) == [ZOO_RCNN]  # OtherArch, registered too, is not what it builds
    (message,) = [d.message for r in results.values() for d in r.diagnostics]
    assert "built by the config configs/common/models/rcnn.py -> GeneralizedRCNNX" in message
    project = build(D2_ZOO)
    assert not any("could not be followed" in why for _, _, why in project.unresolved)
    # the same config without the zoo's model: unresolved, every registered model maybe-run
    bare = {**D2_ZOO, "d2zoo/projects/Other/configs/rcnn_amp.py": D2_ZOO[
        "d2zoo/projects/Other/configs/rcnn_amp.py"].replace("model = model_zoo", "zoo_model = model_zoo")}
    flagged = {f[0] for f in findings(lint_project(bare, SETTINGS))}
    assert flagged == {ZOO_RCNN[0], "d2zoo/projects/Other/other/arch.py"}
