"""A helper's arms and early `return` decided by the flag a call passes (r17-scaler; the composed
imprecision r16-effects left: a helper's `return` was dropped, and two calls of one helper shared
its `if` arms whatever each passed).

tests/projects/scaler_stylegan2_flag_helpers: rosinality/stylegan2-pytorch layout (train.py
`train` with `requires_grad`, `d_logistic_loss`, `g_nonsaturating_loss`; distributed.py; op.py)
with AMP added: the loop unscales each network's optimizer itself to log the true gradient norm,
then steps through a helper told so by a flag: `optimizer_step(..., clip=False)` (whose
`if clip: scaler.unscale_(optim)` does not run) and `clip_and_step(..., unscaled=True)` (whose
`if unscaled: ...; scaler.step(optim); return` returns before its own unscale). main reported
AMP123 at the discriminator's call (a second unscale composed from the `clip` arm) and inside
`clip_and_step` (its unscale after the step, past the `return`).

Now the composer drops a callee's events in an arm a literal flag argument rules out and those
after a `return` the call always reaches (facts/scaler_arms.py), and AMP123 pairs no step or
unscale with a later unscale that a `return`/`continue`/`break` always separates.
Twins, reported: `clip=True`, `unscaled=False`, and the helper without its `return`.
"""

from __future__ import annotations

import pytest
from project_files import code_findings, load

NAME = "scaler_stylegan2_flag_helpers"
D_CALL = "        optimizer_step(scaler, d_optim, discriminator, clip=False)\n"
G_CALL = "        clip_and_step(scaler, g_optim, generator, 10.0, unscaled=True)\n"
RETURN = "        scaler.step(optim)\n        return\n"


def amp123(files):
    return code_findings(files, "AMP123")[0]


def test_flags_that_skip_the_helpers_unscale_are_not_second_unscales():
    assert amp123(load(NAME)) == []


def test_twin_the_discriminators_call_asks_the_helper_to_unscale_again():
    files = load(NAME, ((D_CALL, D_CALL.replace("clip=False", "clip=True")),))
    assert amp123(files) == [("train.py", 55, "AMP123")]


def test_twin_the_generators_call_says_not_unscaled():
    files = load(NAME, ((G_CALL, G_CALL.replace("unscaled=True", "unscaled=False")),))
    assert amp123(files) == [("train.py", 65, "AMP123")]


def test_twin_the_helper_without_its_return_unscales_after_its_step():
    files = load(NAME, ((RETURN, "        scaler.step(optim)\n"),))
    assert amp123(files) == [("train.py", 34, "AMP123")]


def test_torch_second_unscale_raises_a_skipped_one_does_not():
    """torch 2.13 CPU: `unscale_` twice before `update()` raises; unscale_, step, update (the
    helper's `clip=False` path) runs."""
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    for second in (False, True):
        opt.zero_grad()
        scaler.scale(model(torch.randn(8, 4)).sum()).backward()
        scaler.unscale_(opt)
        if second:
            with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
                scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
