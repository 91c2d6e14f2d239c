"""Half spreads to every module a half model holds (issue 26 "Containers", "Other carriers";
amplint/analysis/project/halfspread.py): modules in `nn.ModuleList([...])`,
`nn.Sequential(*[...])`, lists filled by `.append` and wrapped later, instances a project helper
returns, and casts written as a statement (`model.half()`). Each project is laid out like the
public repository its test names, and has a clean twin (the same files, the hazard fixed) that
must stay silent; each hazard is missed on main."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
FINFO = ("-1e9", "torch.finfo(x.dtype).min")


def findings(results):
    return project_findings(results)


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


def half_classes(files):
    return {(path.split("/", 1)[1], cls): cite for (path, cls), (_, cite, _) in build(files).flow.half_instances().items()}


def test_mae_blocks_in_a_module_list():
    # facebookresearch/mae: `self.blocks = nn.ModuleList([Block(...) for i in range(depth)])`
    # in models_mae.py (timm's Block vendored under util/vit.py), built by the
    # `mae_vit_large_patch16` alias of a factory; the demo turns the model half with the
    # statement `model.half()`
    results = lint_project(load("half_mae_blocks"), SETTINGS)
    assert findings(results) == [("util/vit.py", 31, "AMP110")]
    (message,) = messages(results, "AMP110")
    assert ("models_mae.mae_vit_large_patch16() at demo/mae_visualize.py:10 made float16 in "
            "demo/mae_visualize.py, in `self.blocks` of MaskedAutoencoderViT, as a submodule of Block") in message
    clean = load("half_mae_blocks", [("-1e9", "torch.finfo(attn.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # without the cast nothing is half
    assert findings(lint_project(load("half_mae_blocks", [("        model.half()\n", "")]), SETTINGS)) == []


def test_plain_list_of_non_modules_is_not_converted():
    # `.half()` converts registered modules only: a plain class kept in a list of the model
    # (here a mask hook) stays float32, while the blocks beside it are half
    hook = (
        "\n\nclass KeyMaskHook:\n"
        "    def __call__(self, attn, key_mask):\n"
        "        return attn.masked_fill(~key_mask[:, None, None, :], -1e9)\n"
    )
    files = load("half_mae_blocks", [
        ("        return x + self.mlp(self.norm2(x))\n", "        return x + self.mlp(self.norm2(x))\n" + hook),
        ("from util.vit import Block, PatchEmbed", "from util.vit import Block, KeyMaskHook, PatchEmbed"),
        ("        self.norm_pix_loss = norm_pix_loss\n",
         "        self.norm_pix_loss = norm_pix_loss\n        self.hooks = [KeyMaskHook()]\n"),
        FINFO_ATTN,
    ])
    assert "self.hooks = [KeyMaskHook()]" in files["half_mae_blocks/models_mae.py"]
    held = half_classes(files)
    assert ("util/vit.py", "Block") in held and ("util/vit.py", "KeyMaskHook") not in held
    assert findings(lint_project(files, SETTINGS)) == []


FINFO_ATTN = ("attn.masked_fill(~key_mask[:, None, None, :], -1e9)\n        attn = attn.softmax",
              "attn.masked_fill(~key_mask[:, None, None, :], torch.finfo(attn.dtype).min)\n        attn = attn.softmax")


def test_timm_blocks_in_a_sequential_of_a_default_block_fn():
    # huggingface/pytorch-image-models: `self.blocks = nn.Sequential(*[block_fn(...) for i in
    # range(depth)])` with `block_fn=Block` a default argument, Attention in timm/layers;
    # `model = model.half()` in inference.py
    results = lint_project(load("half_timm_sequential"), SETTINGS)
    assert findings(results) == [("timm/layers/attention.py", 22, "AMP110")]
    held = half_classes(load("half_timm_sequential"))
    assert held[("timm/layers/attention.py", "Attention")] == (
        "vit_small_patch16_224(pretrained=True) at inference.py:15 made float16 in inference.py, "
        "in `self.blocks` of VisionTransformer, as a submodule of Block")
    assert ("timm/layers/mlp.py", "Mlp") in held
    clean = load("half_timm_sequential", [("-1e9", "torch.finfo(attn.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # cast to float32 instead: nothing is half
    assert findings(lint_project(load("half_timm_sequential", [("model.half()", "model.float()")]), SETTINGS)) == []


def test_detectron2_backbone_from_a_helper_with_stages_in_sequentials():
    # facebookresearch/detectron2: `self.backbone = build_backbone(cfg)` in GeneralizedRCNN, the
    # helper returning `build_resnet_backbone(cfg)`'s ResNet, whose stages are
    # `nn.Sequential(*blocks)` of the lists `ResNet.make_stage` fills by `.append`; the demo
    # turns the predictor's model half with the statement `self.predictor.model.half()`. The real
    # make_stage is given `block_class=BottleneckBlock` (tests/test_carriers.py); this fork's
    # make_stage builds the blocks itself
    results = lint_project(load("half_d2_backbone"), SETTINGS)
    assert findings(results) == [("detectron2/modeling/backbone/resnet.py", 38, "AMP110")]
    (message,) = messages(results, "AMP110")
    assert ("build_model(self.cfg) at detectron2/engine/defaults.py:9 made float16 in demo/predictor.py, "
            "as a submodule of GeneralizedRCNN, in `self.stages` of ResNet") in message
    clean = load("half_d2_backbone", [FINFO])
    assert findings(lint_project(clean, SETTINGS)) == []
    # the cast on another object (the predictor itself is no module): nothing is half
    other = load("half_d2_backbone", [("self.predictor.model.half()", "self.predictor.half()")])
    assert findings(lint_project(other, SETTINGS)) == []


def test_guided_diffusion_torso_in_a_sequential_subclass():
    # openai/guided-diffusion: UNetModel.convert_to_fp16 converts the torso (`self.input_blocks`, a
    # ModuleList of TimestepEmbedSequential, and `self.middle_block =
    # TimestepEmbedSequential(ResBlock(...), AttentionBlock(...), ResBlock(...))`, a project
    # subclass of nn.Sequential keeping torch's constructor); scripts/image_sample.py calls it on
    # the model `create_model_and_diffusion` returns in a tuple. The real method converts with
    # `.apply(convert_module_to_f16)`, which the flow facts do not record: this fork calls
    # `.half()` on each part
    results = lint_project(load("half_guided_diffusion"), SETTINGS)
    assert findings(results) == [("guided_diffusion/unet.py", 88, "AMP110")]
    held = half_classes(load("half_guided_diffusion"))
    assert held[("guided_diffusion/unet.py", "QKVAttention")] == (
        "TimestepEmbedSequential(...) at guided_diffusion/unet.py:108 made float16 in guided_diffusion/unet.py, "
        "as a submodule of TimestepEmbedSequential, as a submodule of AttentionBlock")
    assert ("guided_diffusion/nn.py", "GroupNorm32") in held
    clean = load("half_guided_diffusion", [("-1e9", "th.finfo(weight.dtype).min")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # the middle block built by a constructor of its own: its arguments are not its elements
    own_init = load("half_guided_diffusion", [(
        "class TimestepEmbedSequential(nn.Sequential, TimestepBlock):\n",
        "class TimestepEmbedSequential(nn.Sequential, TimestepBlock):\n"
        "    def __init__(self, *layers):\n        super().__init__()\n\n",
    )])
    assert findings(lint_project(own_init, SETTINGS)) == []
    # the torso left in float32: nothing is half
    torso = "        self.input_blocks.half()\n        self.middle_block.half()\n"
    fp32 = load("half_guided_diffusion", [(torso, "        pass\n")])
    assert findings(lint_project(fp32, SETTINGS)) == []
