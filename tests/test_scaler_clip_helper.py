"""A helper of another file that clips and steps, after its caller unscaled (r16b-scalerfp).

tests/projects/scaler_swin_clip_helper: microsoft/Swin-Transformer layout (main.py
`train_one_epoch` runs `scaler.scale(loss).backward(); scaler.unscale_(optimizer)` and calls
utils.py `clip_and_step(model, optimizer, scaler, max_norm)`, which clips and steps). Main
reported AMP120 inside the helper, with a "safe" fix inserting a second `unscale_` (which
raises 'unscale_() has already been called on this optimizer since the last update()'): the
helper's flow holds no scale, and its scaler is a parameter, so what was done to the gradients
before the call is the caller's (facts/scaler_paths.py `parameter_scaler`). The caller's flow,
which composes the helper, is where a missing unscale shows.
Twin: the caller does not unscale; reported at its call.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_swin_clip_helper"


def findings(files):
    return code_findings(files, "AMP120")[0]


def test_the_caller_unscaled_before_the_helper_clips():
    assert findings(load(NAME)) == []


def test_twin_the_caller_does_not_unscale():
    files = load(NAME, (("        scaler.unscale_(optimizer)\n", ""),))
    assert findings(files) == [("main.py", 14, "AMP120")]
