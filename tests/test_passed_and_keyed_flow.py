"""The class flow, context-sensitive for two shapes (issue 26, round 45): a helper that hands back
its own parameter answers each call with that call's argument (project/passed_returns.py), and a
dict display read by a literal key gives that key's entry only (project/dict_keys.py). Each
project is laid out like the public repository its test names; the true hazard is found, the
class only the other calls or keys reach stays silent (both were reported before: AMP101 and
AMP141), and the clean twin (the true hazard fixed) is silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
YOLO = "passed_yolov10_deparallel"
SAM = "keyed_mobile_sam_registry"


def findings(files):
    return project_findings(lint_project(files, SETTINGS))


def half_classes(files):
    return {(path.split("/", 1)[1], cls) for path, cls in build(files).flow.half_instances()}


def test_yolov10_de_parallel_returns_each_calls_own_model():
    # THU-MIG/yolov10 (ultralytics layout): `de_parallel(model)` in utils/torch_utils.py returns
    # `model.module if is_parallel(model) else model`; the exporter halves the detection model it
    # unwraps, SAM's predictor unwraps its float32 Sam. Before, the helper returned every
    # caller's model to every caller: Sam's PromptEncoder (AMP101) and its LayerNorm2d (AMP141)
    # were reported as float16 code
    files = load(YOLO)
    assert findings(files) == [("ultralytics/nn/tasks.py", 14, "AMP141")]
    held = half_classes(files)
    assert ("ultralytics/nn/tasks.py", "DetectionModel") in held
    assert ("ultralytics/models/sam/modules/sam.py", "Sam") not in held
    clean = load(YOLO, [("var = (x - u).pow(2).mean(1, keepdim=True)",
                         "var = (x - u).float().pow(2).mean(1, keepdim=True).to(x.dtype)")])
    assert findings(clean) == []


def test_yolov10_de_parallel_rebinding_its_parameter_or_returning_another_model():
    # the same helper written with a rebinding (yolov5's older `de_parallel`, many forks):
    # `if is_parallel(model): model = model.module` then `return model`
    files = load(YOLO, [("    return model.module if is_parallel(model) else model",
                         "    if is_parallel(model):\n        model = model.module\n    return model")])
    assert findings(files) == [("ultralytics/nn/tasks.py", 14, "AMP141")]
    # a helper with another return (a new model when none is given) is no identity: every
    # call's argument flows to every call, as before
    files = load(YOLO, [("    return model.module if is_parallel(model) else model",
                         "    if model is None:\n        return nn.Identity()\n"
                         "    return model.module if is_parallel(model) else model")])
    assert ("ultralytics/models/sam/modules/sam.py", "Sam") in half_classes(files)


def test_mobile_sam_registry_read_by_a_literal_key():
    # ChaoningZhang/MobileSAM: app/app.py builds `sam_model_registry[model_type](checkpoint=...)`
    # with `model_type = "vit_t"` and halves it; the registry in mobile_sam/build_sam.py also
    # holds the ViT-H builder. Before, every builder's model was the result: the ViT-H encoder's
    # `torch.zeros` was reported as float16 code (AMP101)
    files = load(SAM)
    assert findings(files) == [("mobile_sam/modeling/tiny_vit_sam.py", 14, "AMP141")]
    held = half_classes(files)
    assert ("mobile_sam/modeling/mobile_sam.py", "MobileSam") in held
    assert ("mobile_sam/modeling/sam.py", "Sam") not in held
    clean = load(SAM, [("s = (x - u).pow(2).mean(1, keepdim=True)",
                        "s = (x - u).float().pow(2).mean(1, keepdim=True).to(x.dtype)")])
    assert findings(clean) == []
    # the key written out at the lookup
    literal = load(SAM, [("sam_model_registry[model_type](", 'sam_model_registry["vit_t"](')])
    assert findings(literal) == [("mobile_sam/modeling/tiny_vit_sam.py", 14, "AMP141")]


def test_mobile_sam_builder_indexing_the_registry_with_its_parameter():
    # `build_sam(name)` returns `sam_model_registry[name](checkpoint)`; every call passes "vit_t"
    files = load(SAM, [
        ("sam_model_registry[model_type](checkpoint=sam_checkpoint)", 'build_sam("vit_t", checkpoint=sam_checkpoint)'),
        ("from mobile_sam import sam_model_registry", "from mobile_sam.build_sam import build_sam"),
    ])
    assert findings(files) == [("mobile_sam/modeling/tiny_vit_sam.py", 14, "AMP141")]


def test_a_key_no_literal_fixes_keeps_every_entry():
    # `model_type = sys.argv[1]`: any builder may run, as before; a key the dict lacks: none
    unknown = load(SAM, [('model_type = "vit_t"', "import sys\nmodel_type = sys.argv[1]")])
    assert ("mobile_sam/modeling/sam.py", "Sam") in half_classes(unknown)
    missing = load(SAM, [("sam_model_registry[model_type](", 'sam_model_registry["vit_b"](')])
    assert half_classes(missing) == set()
