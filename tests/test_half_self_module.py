"""AMP103: a cast statement of a module held on `self` (`self.vae.to(dtype=torch.float16)`) is
mixed with an autocast region of the same function only when the region reads that module
(`self.vae...`), not whenever it reads some `self.` attribute
(amplint/analysis/rules/amp103_half_with_autocast.py `_self_module`).

tests/projects/half_diffusers_community_sdxl: huggingface/diffusers community pipeline layout
(examples/community/mixture_tiling_sdxl.py: `__call__` runs `self.unet` under
`torch.amp.autocast` in the denoising loop, then upcasts the VAE to decode and casts it back to
fp16). main reported the cast back as "a half cast of an input mixed with autocast" (line 32)
because the region reads `self.unet`. Twin: a region that runs the VAE itself is reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "half_diffusers_community_sdxl"
CAST = ("examples/community/mixture_tiling_sdxl.py", 32, "AMP103")


def amp103(files):
    return code_findings(files, "AMP103")[0]


def test_cast_back_of_a_module_the_region_never_reads_is_silent():
    assert amp103(load(NAME)) == []


def test_twin_a_region_that_runs_the_vae_is_reported():
    files = load(NAME, (("                noise_pred = self.unet(latent_model_input",
                         "                noise_pred = self.vae.decode(latent_model_input"),))
    assert amp103(files) == [CAST]
