"""Every store of an attribute agrees ACROSS files (issue 26, facts/foreign_stores.py): a value a
file's facts read from its own stores is unknown when another project file stores the same
attribute name.

- params_transformer_fill (jadore801120/attention-is-all-you-need-pytorch layout): the
  attention keeps its constructor default `self.mask_fill` (-1e9, AMP110 under float16
  autocast); train.py then sets `module.mask_fill = -1e4` on every attention layer of the
  model, the usual fp16 fix, so the fill the region runs is -1e4 and nothing overflows.
- samefile_ctxconst_guided (openai/guided-diffusion's train_util.py in a fork that trains under
  autocast): the module constant `AMP_DTYPE = th.bfloat16` is the autocast's dtype (AMP124 with
  an always-enabled GradScaler); scripts/image_train.py patches `train_util.AMP_DTYPE =
  th.float16` for fp16 runs. The global is read when the region opens, so on that path the
  scaler scales float16 losses as it should.
Twins: the same stores of another attribute name leave the findings in place.
"""

from __future__ import annotations

from project_files import code_findings, load
from amplint.analysis.engine import Settings

SETTINGS = Settings.default()

FILL = "params_transformer_fill"
FILL_FOUND = [("transformer/Modules.py", 18, "AMP110")]
BUILT = "    model = Encoder(n_src_vocab=100)\n"


def _fill(store: str):
    loop = ("    for module in model.modules():\n"
            "        if isinstance(module, ScaledDotProductAttention):\n"
            f"            {store}\n")
    return code_findings(load(FILL, (
        ("from transformer.Models import Encoder\n",
         "from transformer.Models import Encoder\nfrom transformer.Modules import ScaledDotProductAttention\n"),
        (BUILT, BUILT + loop))), "AMP110", SETTINGS)[0]


def test_twin_the_default_is_still_the_fill():
    assert _fill("module.dropout.p = 0.0") == FILL_FOUND


def test_another_file_storing_the_attribute_leaves_the_default_unknown():
    assert _fill("module.mask_fill = -1e4  # fits float16") == []
    assert _fill("module.mask_fill *= 1e-5") == []
    assert _fill('setattr(module, "mask_fill", -1e4)') == []


CTX = "samefile_ctxconst_guided"
CTX_FOUND = [("guided_diffusion/train_util.py", 21, "AMP124")]
SCRIPT = "from guided_diffusion.train_util import TrainLoop\n"


def _ctx(patch: str):
    head = ("import torch as th\n\nimport guided_diffusion.train_util as train_util\n" + SCRIPT
            + "\n\ndef configure(args):\n    if args.fp16:\n" + f"        {patch}\n")
    return code_findings(load(CTX, ((SCRIPT, head),)), "AMP124", SETTINGS)[0]


def test_twin_a_patch_of_another_constant_keeps_the_finding():
    assert _ctx("train_util.LOG_DTYPE = th.float16") == CTX_FOUND


def test_a_constant_another_file_patches_is_not_the_region_dtype():
    assert _ctx("train_util.AMP_DTYPE = th.float16") == []


# the same constant read by an autocast decorator of the file
DECORATED = (
    ("        with autocast(self.use_fp16):\n"
     "            losses = self.diffusion.training_losses(self.model, batch, t, model_kwargs=cond)\n"
     "            loss = (losses[\"loss\"] * weights).mean()\n",
     "        loss = self.forward_losses(batch, t, weights, cond)\n"),
    ("    def run_step(self, batch, cond):\n",
     "    @th.autocast(\"cuda\", dtype=AMP_DTYPE)\n"
     "    def forward_losses(self, batch, t, weights, cond):\n"
     "        losses = self.diffusion.training_losses(self.model, batch, t, model_kwargs=cond)\n"
     "        return (losses[\"loss\"] * weights).mean()\n\n"
     "    def run_step(self, batch, cond):\n"),
)


def test_a_decorator_reads_the_constant_unless_another_file_patches_it():
    def found(patch):
        head = ("import torch as th\n\nimport guided_diffusion.train_util as train_util\n" + SCRIPT
                + "\n\ndef configure(args):\n    if args.fp16:\n" + f"        {patch}\n")
        return code_findings(load(CTX, ((SCRIPT, head),) + DECORATED), "AMP124", SETTINGS)[0]

    assert found("train_util.LOG_DTYPE = th.float16") == CTX_FOUND
    assert found("train_util.AMP_DTYPE = th.float16") == []
