"""Carriers of classes, casts and wrappers that the class flow did not follow (issue 26
"Functions and classes as values", "Other carriers"): a class passed as an argument and
instantiated by the callee, `.apply(fn)` with a converter defined in another module, casts
written as statements through `.to(...)` / `.type(...)`, and fields of dataclasses. Each project
is laid out like the public repository its test names and has a clean twin (the same files,
the hazard fixed) that must stay silent; each hazard is missed on main (07ab81a)."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load  # noqa: E402

SETTINGS = Settings.default()


def findings(results):
    return sorted(
        (path.split("/", 1)[1], d.line, d.code)
        for path, result in results.items() for d in result.diagnostics
    )


def half_classes(files):
    return {(path.split("/", 1)[1], cls): cite for (path, cls), (_, cite, _) in build(files).flow.half_instances().items()}


def test_detectron2_block_class_passed_to_make_stage():
    # facebookresearch/detectron2: `ResNet.make_stage(block_class=BottleneckBlock, ...)` in
    # build_resnet_backbone; the static method builds `block_class(in_channels, ...)` into the
    # lists that become the stages' `nn.Sequential(*blocks)`; the demo turns the predictor's
    # model half with `self.predictor.model.half()` (demo/predictor.py). On main the class
    # passed as an argument bound nothing, so the blocks stayed float32.
    results = lint_project(load("half_d2_block_class"), SETTINGS)
    assert findings(results) == [("detectron2/modeling/backbone/resnet.py", 38, "AMP110")]
    held = half_classes(load("half_d2_block_class"))
    assert held[("detectron2/modeling/backbone/resnet.py", "BottleneckBlock")] == (
        "build_model(self.cfg) at detectron2/engine/defaults.py:9 made float16 in demo/predictor.py, "
        "as a submodule of GeneralizedRCNN, in `self.stages` of ResNet")
    clean = load("half_d2_block_class", [("-1e9", "torch.finfo(x.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # the block class passed is another one (the stem): BottleneckBlock is built by nobody
    other = load("half_d2_block_class", [("block_class=BottleneckBlock,", "block_class=BasicStem,")])
    assert ("detectron2/modeling/backbone/resnet.py", "BottleneckBlock") not in half_classes(other)
    assert findings(lint_project(other, SETTINGS)) == []
    # without the cast nothing is half
    assert findings(lint_project(load("half_d2_block_class", [("self.predictor.model.half()", "pass")]), SETTINGS)) == []
