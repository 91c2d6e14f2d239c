"""AMP150 through a helper called with `**kwargs` (a miss found reading
lucidrains/imagen-pytorch's ElucidatedImagen), and a region of another file that turns the
autocast cache off (a false finding the clean twin below showed).

tests/projects/nograd_imagen_bound_forward: lucidrains/imagen-pytorch layout (train.py runs the
diffusion wrapper under a float16 `torch.autocast`; imagen_lite/elucidated.py's
`ElucidatedDiffusion.forward` self-conditions: `self.preconditioned(unet.forward, ...)` under
`torch.no_grad()`, then `self.preconditioned(unet.forward, ..., **kwargs)` with grad, and the helper
runs its `unet_forward` parameter straight in its body). The same pair without the `**kwargs` is
reported at the helper's forward; the `**kwargs` cannot fill `unet_forward`, which the call passes
positionally before it. Clean twin: `cache_enabled=False` on the autocast.

Cause (amplint/analysis/facts/grad_forwards.py, `_forwarded_arguments`): any starred argument in the
helper call gave up, even where the parameter the helper runs is bound by an explicit argument
before it. And the twin's `cache_enabled=False` in train.py did not reach the helper's file: the
project's EntryRegion carried no cache setting (now `cache_off`, every region reaching it).
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

PROJECT = "nograd_imagen_bound_forward"
HELPER_FORWARD = [("imagen_lite/elucidated.py", 22, "AMP150")]
STAR_CALL = "self.preconditioned(unet.forward, noised, sigmas, **kwargs)"


def test_helper_called_with_star_kwargs_still_forwards_its_explicit_module():
    files = load(PROJECT)
    assert STAR_CALL in files[f"{PROJECT}/imagen_lite/elucidated.py"]
    without_star = load(PROJECT, [(STAR_CALL, STAR_CALL.replace("**kwargs", 'self_cond=kwargs.get("self_cond")'))])
    assert code_findings(without_star, "AMP150")[0] == HELPER_FORWARD
    no_cache = load(PROJECT, [("enabled=fp16):", "enabled=fp16, cache_enabled=False):")])
    assert "cache_enabled=False" in no_cache[f"{PROJECT}/train.py"]
    assert code_findings(no_cache, "AMP150")[0] == []

    assert code_findings(files, "AMP150")[0] == HELPER_FORWARD


def test_cache_disabled_in_the_calling_file_silences_the_helper_forward():
    """The region is opened in train.py with `cache_enabled=False`; the pair runs in
    imagen_lite/elucidated.py, which the region reaches through the project pass: no weight cast
    is cached, so there is nothing to report (it was reported: EntryRegion carried no cache
    setting). With the cache on, the same pair is reported."""
    star_less = [(STAR_CALL, STAR_CALL.replace("**kwargs", 'self_cond=kwargs.get("self_cond")'))]
    no_cache = load(PROJECT, star_less + [("enabled=fp16):", "enabled=fp16, cache_enabled=False):")])
    assert "cache_enabled=False" in no_cache[f"{PROJECT}/train.py"]
    assert code_findings(no_cache, "AMP150")[0] == []
    assert code_findings(load(PROJECT, star_less), "AMP150")[0] == HELPER_FORWARD
