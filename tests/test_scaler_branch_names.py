"""AMP122 across a method of another file: the callee's `if self.fp16_scaler is not None:` arms,
composed at `model.forward_backward(...)`, test the caller's `model.fp16_scaler`; the caller's
`if fp16_scaler is not None:` tests it too when `fp16_scaler = model.fp16_scaler` is its one
binding (amplint/analysis/facts/scaler_flow.py `Branch.also`). The unscaled backward of the
`else` arm and the scaler's step then never run on one pass.

tests/projects/scaler_dinov2_meta_arch: facebookresearch/dinov2 layout (dinov2/train/
ssl_meta_arch.py `SSLMetaArch.backprop_loss` / `forward_backward`, dinov2/train/train.py
`do_train`). main reported AMP122 at the `forward_backward` call. Twins: the loop testing
`model.fp16_scaler` itself is silent alike; a `backprop_loss` that never scales is reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_dinov2_meta_arch"
CALL = ("dinov2/train/train.py", 16, "AMP122")


def amp122(files):
    return code_findings(files, "AMP122")[0]


def test_scaler_none_arms_named_through_an_alias_and_the_receiver_are_exclusive():
    assert amp122(load(NAME)) == []


def test_twin_the_loop_tests_the_attribute_itself():
    files = load(NAME, (("        if fp16_scaler is not None:\n", "        if model.fp16_scaler is not None:\n"),))
    assert amp122(files) == []


def test_twin_backprop_that_never_scales_is_reported():
    files = load(NAME, (("        if self.fp16_scaler is not None:\n            self.fp16_scaler.scale(loss).backward()\n"
                         "        else:\n            loss.backward()\n", "        loss.backward()\n"),))
    assert amp122(files) == [CALL]
