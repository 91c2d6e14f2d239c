"""AMP150: a call of a method of the class through `self` (`self.parse_unet_output(...)`) is no
module forward, whatever its name says (amplint/analysis/facts/grad_forwards.py `_module_key`).

tests/projects/nograd_dalle2_decoder: lucidrains/DALLE2-pytorch layout (dalle2_pytorch/
dalle2_pytorch.py `Decoder.p_losses`, dalle2_pytorch/trainer.py `DecoderTrainer` under
`accelerator.autocast()`, train_decoder.py). Self-conditioning runs `unet` under no_grad and then
with grad in one region: AMP150 at the grad forward (line 36). The plain method
`parse_unet_output`, called in both passes, has no weights whose casts could be cached: silent
(main reported it at line 37 because its name holds `unet`). Twins: the same name bound to a
module (`self.parse_unet_output = nn.Conv2d(...)`) is a module forward again; without the
no_grad pass nothing is reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "nograd_dalle2_decoder"
UNET = ("dalle2_pytorch/dalle2_pytorch.py", 36, "AMP150")
PARSE = ("dalle2_pytorch/dalle2_pytorch.py", 37, "AMP150")


def amp150(files):
    return code_findings(files, "AMP150")[0]


def test_self_method_named_like_a_model_is_no_forward():
    assert amp150(load(NAME)) == [UNET]


def test_twin_the_same_name_bound_to_a_module_is_a_forward():
    method = ("    def parse_unet_output(self, learned_variance, output):\n"
              "        if learned_variance:\n"
              "            output, _ = output.chunk(2, dim=1)\n"
              "        return output\n\n")
    files = load(NAME, ((method, ""), ("        self.unets = nn.ModuleList([unet])\n",
                                        "        self.unets = nn.ModuleList([unet])\n"
                                        "        self.parse_unet_output = nn.Conv2d(64, 64, 1)\n")))
    found = amp150(files)
    assert found == [("dalle2_pytorch/dalle2_pytorch.py", 32, "AMP150"), ("dalle2_pytorch/dalle2_pytorch.py", 33, "AMP150")]


def test_twin_without_the_nograd_pass_is_silent():
    files = load(NAME, (("        if unet.self_cond and random.random() < 0.5:\n", "        if False:\n"),
                        ("            with torch.no_grad():\n", "            if True:\n")))
    assert amp150(files) == []
