"""Template methods (issue 13): `self.m(...)` in a base class's method that runs under a
region runs the `m` its subclasses define in other files (mmdet 2's `BaseDetector.forward`
under `@auto_fp16` calling `self.forward_train`; mmdet 3's `loss()` calling
`self.loss_by_feat`). tests/projects/reach_template is laid out like mmdet 2."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load  # noqa: E402
SETTINGS = Settings.default()

ROI = ("reach_template/mmdetx/models/heads/roi_head.py", 18, "AMP110")
RETINA = ("reach_template/mmdetx/models/heads/retina_head.py", 18, "AMP101")
SSD = ("reach_template/mmdetx/models/heads/ssd_head.py", 19, "AMP110")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items() for d in result.diagnostics)


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


def test_subclass_forward_train_runs_under_the_base_auto_fp16_forward():
    # TwoStageDetector.forward_train (another file) is dispatched from BaseDetector.forward;
    # its roi head's masked_fill(-1e9) is flagged. RetinaNet -> SingleStageDetector.forward_train
    # -> RetinaHead.loss (inherited from BaseDenseHead) -> self.loss_by_feat of RetinaHead.
    # SSDHead, the registry's other dense head, also holds BaseDenseHead.loss: each class of
    # `self` the class flow gives is dispatched. SparseDetector overrides forward (no region)
    # and DebugHead is never built: both silent.
    results = lint_project(load("reach_template"), SETTINGS)
    assert findings(results) == [RETINA, ROI, SSD]
    (message,) = messages(results, "AMP101")
    assert ("called as self.loss_by_feat at mmdetx/models/heads/base_dense_head.py:14 in code that "
            "runs under the autocast decorator at mmdetx/models/detectors/base.py:22, dispatched "
            "to RetinaHead in mmdetx/models/heads/retina_head.py") in message


def test_dispatch_is_cited_in_show_regions():
    project = build(load("reach_template"))
    reached = sorted(r for rs in project.region_reach.values() for r in rs)
    assert "TwoStageDetector.forward_train in mmdetx/models/detectors/two_stage.py" in reached
    assert "SingleStageDetector.forward_train in mmdetx/models/detectors/single_stage.py" in reached
    # the subclass that overrides the calling method, and the head no flow builds, are not reached
    assert not [r for r in reached if r.startswith(("SparseDetector.", "DebugHead."))]


def test_clean_twins_stay_silent():
    hazard_free = load("reach_template", [
        ("-1e9)", "torch.finfo(scores.dtype).min)"),
        ("torch.zeros(feats.shape[0], feats.shape[1], self.cls_proj.out_features, device=feats.device)",
         "feats.new_zeros(feats.shape[0], feats.shape[1], self.cls_proj.out_features)"),
    ])
    assert findings(lint_project(hazard_free, SETTINGS)) == []
    # without the decorator no region opens: nothing is dispatched
    no_region = load("reach_template", [('    @auto_fp16(apply_to=("img",))\n', "")])
    assert findings(lint_project(no_region, SETTINGS)) == []


def test_a_subclass_overriding_the_calling_method_is_not_reached():
    # TwoStageDetector overrides forward without a region: BaseDetector.forward's region never
    # runs its forward_train, so the roi head stays silent; RetinaNet still inherits it
    overriding = load("reach_template", [(
        "    def extract_feat(self, img):\n        return self.backbone(img).flatten(2).transpose(1, 2)\n\n    def forward_train(self, img, img_metas, gt_labels=None, proposal_mask=None):",
        "    def extract_feat(self, img):\n        return self.backbone(img).flatten(2).transpose(1, 2)\n\n"
        "    def forward(self, img, img_metas, return_loss=True, **kwargs):\n"
        "        return self.forward_train(img, img_metas, **kwargs)\n\n"
        "    def forward_train(self, img, img_metas, gt_labels=None, proposal_mask=None):",
    )])
    assert findings(lint_project(overriding, SETTINGS)) == [RETINA, SSD]


def test_a_registry_build_holds_only_the_types_the_configs_name():
    # `build_head(bbox_head)`: with configs/ssd_fp16.py gone, no file names SSDHead under
    # `bbox_head=dict(type=...)`, so the registered SSDHead is not built there
    files = {path: text for path, text in load("reach_template").items() if not path.endswith("ssd_fp16.py")}
    assert findings(lint_project(files, SETTINGS)) == [RETINA, ROI]
