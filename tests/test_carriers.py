"""Carriers of classes, casts and wrappers that the class flow did not follow (issue 26
"Functions and classes as values", "Other carriers"): a class passed as an argument and
instantiated by the callee, `.apply(fn)` with a converter defined in another module, casts
written as statements through `.to(...)` / `.type(...)`, and fields of dataclasses. Each project
is laid out like the public repository its test names and has a clean twin (the same files,
the hazard fixed) that must stay silent; each hazard is missed on main (07ab81a)."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()


def findings(results):
    return project_findings(results)


def half_classes(files):
    return {(path.split("/", 1)[1], cls): cite for (path, cls), (_, cite, _) in build(files).flow.half_instances().items()}


# half_d2_backbone with detectron2's real spelling: the block class is an argument of make_stage
D2_BLOCK_CLASS = (
    ("def make_stage(num_blocks, *,", "def make_stage(block_class, num_blocks, *,"),
    ("blocks.append(BottleneckBlock(in_channels,", "blocks.append(block_class(in_channels,"),
    ("        blocks = ResNet.make_stage(\n", "        blocks = ResNet.make_stage(\n            block_class=BottleneckBlock,\n"),
)


def d2_block_class(replace=()):
    return load("half_d2_backbone", D2_BLOCK_CLASS + tuple(replace))


def test_detectron2_block_class_passed_to_make_stage():
    # facebookresearch/detectron2: `ResNet.make_stage(block_class=BottleneckBlock, ...)` in
    # build_resnet_backbone; the static method builds `block_class(in_channels, ...)` into the
    # lists that become the stages' `nn.Sequential(*blocks)`; the demo turns the predictor's
    # model half with `self.predictor.model.half()` (demo/predictor.py). On main the class
    # passed as an argument bound nothing, so the blocks stayed float32.
    results = lint_project(d2_block_class(), SETTINGS)
    assert findings(results) == [("detectron2/modeling/backbone/resnet.py", 38, "AMP110")]
    held = half_classes(d2_block_class())
    assert held[("detectron2/modeling/backbone/resnet.py", "BottleneckBlock")] == (
        "build_model(self.cfg) at detectron2/engine/defaults.py:9 made float16 in demo/predictor.py, "
        "as a submodule of GeneralizedRCNN, in `self.stages` of ResNet")
    clean = d2_block_class([("-1e9", "torch.finfo(x.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # the block class passed is another one (the stem): BottleneckBlock is built by nobody
    other = d2_block_class([("block_class=BottleneckBlock,", "block_class=BasicStem,")])
    assert ("detectron2/modeling/backbone/resnet.py", "BottleneckBlock") not in half_classes(other)
    assert findings(lint_project(other, SETTINGS)) == []
    # without the cast nothing is half
    assert findings(lint_project(d2_block_class([("self.predictor.model.half()", "pass")]), SETTINGS)) == []


# half_guided_diffusion with the torso converted as openai/guided-diffusion does it: through
# `.apply` of converters that live in their own module (fp16_util.py)
GD = "half_guided_diffusion"
GD_CONVERTERS = f"{GD}/guided_diffusion/fp16_util.py"
FP16_UTIL = '''\
"""Helpers for 16-bit training (this fork keeps only the module converters)."""

import torch.nn as nn


def convert_module_to_f16(layer):
    """Turn the weights of convolutions to float16."""
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        layer.weight.data = layer.weight.data.half()
        if layer.bias is not None:
            layer.bias.data = layer.bias.data.half()


def convert_module_to_f32(layer):
    """Undo convert_module_to_f16."""
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        layer.weight.data = layer.weight.data.float()
        if layer.bias is not None:
            layer.bias.data = layer.bias.data.float()
'''
GD_APPLY = (
    ("from .nn import conv_nd,", "from .fp16_util import convert_module_to_f16, convert_module_to_f32\n"
     "from .nn import conv_nd,"),
    ("        self.input_blocks.half()\n        self.middle_block.half()\n",
     "        self.input_blocks.apply(convert_module_to_f16)\n"
     "        self.middle_block.apply(convert_module_to_f16)\n\n"
     "    def convert_to_fp32(self):\n"
     "        \"\"\"\n        Convert the torso of the model back to float32.\n        \"\"\"\n"
     "        self.input_blocks.apply(convert_module_to_f32)\n"
     "        self.middle_block.apply(convert_module_to_f32)\n"),
)


def gd_apply(replace=()):
    files = load(GD, GD_APPLY)
    files[GD_CONVERTERS] = FP16_UTIL
    for old, new in replace:
        files = {path: text.replace(old, new) for path, text in files.items()}
    return files


def test_guided_diffusion_apply_of_a_converter_from_another_module():
    # openai/guided-diffusion: `UNetModel.convert_to_fp16` runs
    # `self.input_blocks.apply(convert_module_to_f16)` with the converter in fp16_util.py
    # (`layer.weight.data = layer.weight.data.half()`); scripts/image_sample.py calls it under
    # `if args.use_fp16`. The blocks' attention then runs in float16.
    results = lint_project(gd_apply(), SETTINGS)
    assert findings(results) == [("guided_diffusion/unet.py", 89, "AMP110")]
    held = half_classes(gd_apply())
    assert ("guided_diffusion/unet.py", "QKVAttention") in held and ("guided_diffusion/nn.py", "GroupNorm32") in held
    assert ("guided_diffusion/unet.py", "UNetModel") not in held  # the torso only, not the model
    clean = gd_apply([("-1e9", "th.finfo(weight.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # the float32 converter only: nothing is half
    to_f32 = gd_apply([(".apply(convert_module_to_f16)", ".apply(convert_module_to_f32)")])
    assert half_classes(to_f32) == {} and findings(lint_project(to_f32, SETTINGS)) == []
    # a converter that casts something else than the module it is given: not a half cast
    other = gd_apply([("layer.weight.data = layer.weight.data.half()", "print(th.zeros(1).half())"),
                                   ("layer.bias.data = layer.bias.data.half()", "pass"),
                                   ("import torch.nn as nn\n", "import torch as th\nimport torch.nn as nn\n")])
    assert half_classes(other) == {}
    # a converter outside the linted files is not guessed from its name
    files = gd_apply()
    del files[GD_CONVERTERS]
    assert half_classes(files) == {} and findings(lint_project(files, SETTINGS)) == []


LLAVA_CAST = "vision_tower.to(device=device_map, dtype=torch.float16)"


def test_llava_statement_to_dtype_in_another_file():
    # haotian-liu/LLaVA: llava/model/builder.py `load_pretrained_model` builds the vision tower
    # (llava/model/multimodal_encoder/builder.py -> clip_encoder.CLIPVisionTower) and converts
    # it with the statement `vision_tower.to(device=device_map, dtype=torch.float16)`; on main
    # only `.half()` statements (and kept `.to(...)` values) were casts.
    results = lint_project(load("half_llava_to_dtype"), SETTINGS)
    assert findings(results) == [("llava/model/multimodal_encoder/clip_encoder.py", 13, "AMP110")]
    held = half_classes(load("half_llava_to_dtype"))
    assert held[("llava/model/multimodal_encoder/clip_encoder.py", "PatchScorer")].endswith(
        "made float16 in model/builder.py, as a submodule of CLIPVisionTower")
    clean = load("half_llava_to_dtype", [("-1e9", "torch.finfo(scores.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    for form in ("vision_tower.to(torch.float16)", "vision_tower.to(dtype=torch.half)",
                 "vision_tower.type(torch.float16)", "vision_tower.type(torch.cuda.HalfTensor)"):
        files = load("half_llava_to_dtype", [(LLAVA_CAST, form)])
        assert findings(lint_project(files, SETTINGS)) == [
            ("llava/model/multimodal_encoder/clip_encoder.py", 13, "AMP110")], form
    for form in ("vision_tower.to(dtype=torch.bfloat16)", "vision_tower.type(torch.cuda.BFloat16Tensor)"):
        bf16 = half_classes(load("half_llava_to_dtype", [(LLAVA_CAST, form)]))
        assert bf16 and all("made bfloat16" in cite for cite in bf16.values()), form
    # not a half dtype, or no dtype at all: nothing is half
    for form in ("vision_tower.to(device=device_map, dtype=torch.float32)", "vision_tower.to(device_map)",
                 "vision_tower.type(torch.cuda.FloatTensor)"):
        files = load("half_llava_to_dtype", [(LLAVA_CAST, form)])
        assert half_classes(files) == {} and findings(lint_project(files, SETTINGS)) == [], form


def test_accelerate_dataclass_fields_carry_the_model_class_and_the_criterion():
    # huggingface/accelerate examples/by_feature: the training settings are a dataclass
    # (src/textcls/config.py) whose `model_cls: type = PooledClassifier` and
    # `criterion: nn.Module = field(default_factory=SoftBCE)` are read as `cfg.model_cls(...)`
    # and `cfg.criterion(...)` under float16 autocast in examples/by_feature/multilabel.py. On
    # main a dataclass held nothing (no `__init__` stores), so neither forward was reached.
    results = lint_project(load("carrier_accelerate_dataclass"), SETTINGS)
    assert findings(results) == [("src/textcls/losses.py", 12, "AMP102"), ("src/textcls/models.py", 16, "AMP102")]
    (message,) = [d.message for p, r in results.items() for d in r.diagnostics if p.endswith("losses.py")]
    assert "field(default_factory=SoftBCE) at src/textcls/config.py:16" in message
    clean = load("carrier_accelerate_dataclass", [
        ("nn.functional.binary_cross_entropy(torch.sigmoid(logits), labels)",
         "nn.functional.binary_cross_entropy_with_logits(logits, labels)"),
        ("probs = torch.sigmoid(logits)\n", ""),
        ("nn.functional.binary_cross_entropy(probs, labels)",
         "nn.functional.binary_cross_entropy_with_logits(logits, labels)"),
    ])
    assert findings(lint_project(clean, SETTINGS)) == []
    # not a dataclass: `cfg.criterion` is the class attribute (a `Field`), nothing is built;
    # `cfg.model_cls` is still the class attribute `PooledClassifier` (a class attribute holding
    # a class is followed through the instance: r5-fresh2), so the model's finding stays
    plain = load("carrier_accelerate_dataclass", [("@dataclass\n", "")])
    assert findings(lint_project(plain, SETTINGS)) == [("src/textcls/models.py", 16, "AMP102")]


def test_dataclass_field_given_at_the_construction_site_and_never_mixed():
    # the default is torch's loss; the example passes the project's by keyword
    by_keyword = load("carrier_accelerate_dataclass", [
        ("field(default_factory=SoftBCE)", "field(default_factory=nn.BCEWithLogitsLoss)"),
        ("TrainingConfig(mixed_precision=args.mixed_precision)",
         "TrainingConfig(mixed_precision=args.mixed_precision, criterion=SoftBCE())"),
        ("from textcls.config import TrainingConfig",
         "from textcls.config import TrainingConfig\nfrom textcls.losses import SoftBCE"),
    ])
    assert ("src/textcls/losses.py", 12, "AMP102") in findings(lint_project(by_keyword, SETTINGS))
    # a second class of the file with a field of the same name: the flow facts keep class
    # bodies' names together, so neither field is read (the eval loss is not taken for it)
    shared = load("carrier_accelerate_dataclass", [(
        "    criterion: nn.Module = field(default_factory=SoftBCE)\n",
        "    criterion: nn.Module = field(default_factory=SoftBCE)\n\n\n"
        "@dataclass\nclass EvalConfig:\n    criterion: nn.Module = field(default_factory=nn.BCEWithLogitsLoss)\n",
    )])
    assert ("src/textcls/losses.py", 12, "AMP102") not in findings(lint_project(shared, SETTINGS))
    assert ("src/textcls/models.py", 16, "AMP102") in findings(lint_project(shared, SETTINGS))


# pytorch-image-models (timm): every model's `__init__` ends with `self.apply(self._init_weights)`
# (or `named_apply(partial(_init_weights, ...), self)`), an initialiser that casts nothing. The
# class flow reads a file for `.apply(fn)` only when `fn` may be a converter, so the number of
# files it summarises does not grow with the number of such models.
TIMM_MODEL = '''\
"""{name}: a timm-style model whose weights are initialised through `self.apply`."""

import torch.nn as nn


class {name}(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.norm(self.proj(x))
'''
TIMM_CONVERT = '''\
"""Export helper: cast a model's linear layers to half for inference."""

import torch.nn as nn


def cast_linear_to_half(m):
    if isinstance(m, nn.Linear):
        m.half()


def export_half(model):
    model.apply(cast_linear_to_half)
    return model
'''


def timm_models(count):
    files = {f"timm/models/net{i}.py": TIMM_MODEL.format(name=f"Net{i}") for i in range(count)}
    files["timm/utils/export.py"] = TIMM_CONVERT
    files["timm/__init__.py"] = ""
    return files


def test_timm_apply_of_an_initialiser_does_not_summarise_every_model():
    for count in (2, 12):
        project = build(timm_models(count))
        project.flow.half_instances()
        assert "timm/utils/export.py" in project.parsed  # `.apply(cast_linear_to_half)`: a converter
        assert not [path for path in project.parsed if path.startswith("timm/models/")], count
    # an initialiser that does cast (a cast word in its body) is read as a possible converter;
    # the test is by name, so it is given a name of its own here
    files = timm_models(3)
    files["timm/models/net1.py"] = files["timm/models/net1.py"].replace(
        "nn.init.zeros_(m.bias)", "m.bias.data = m.bias.data.half()").replace("_init_weights", "_init_half")
    project = build(files)
    project.flow.half_instances()
    assert [path for path in project.parsed if path.startswith("timm/models/")] == ["timm/models/net1.py"]
