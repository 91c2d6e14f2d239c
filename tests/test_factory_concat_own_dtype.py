"""A factory's value concatenated with itself, or with a value cast to its dtype, meets no other
dtype (found reading fresh real trees, r20-realread: AMP101 in open-mmlab/mmagic
mmagic/models/editors/pggan/pggan_generator.py:235, `noise_batch = torch.randn(...)` on one
branch and `noise_generator(...)` (may be half) on another, then `torch.cat([noise_batch,
label.to(noise_batch)])`: the message said the float32 tensor "concatenates it with
`noise_batch`", the very tensor, whose dtype `label.to(noise_batch)` takes).

tests/projects/factory_mmagic_noise: mmagic layout (mmagic/models/editors/pggan/
pggan_generator.py registered in mmagic/registry.py, configs/pggan/ with AmpOptimWrapper).
amplint/analysis/facts/buffer_writes.py `hazardous_write` now looks for the half value of a
cat/stack among the items that are neither the tensor itself nor a cast to its dtype
(`x.to(buf)`, `x.type_as(buf)`, `x.to(buf.dtype)`, `x.to(dtype=buf.dtype)`,
`x.type(buf.dtype)`), and returns that value (AMP101's message names it). Twins, reported: a
submodule's output concatenated instead, a cast to the device only.
"""

from __future__ import annotations

from project_files import code_findings, load

NOISE = "factory_mmagic_noise"
GENERATOR = "mmagic/models/editors/pggan/pggan_generator.py"
CAT = "torch.cat([noise_batch, label.to(noise_batch)], dim=1)"


def amp101(*edits):
    findings, results = code_findings(load(NOISE, edits), "AMP101")
    messages = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP101"]
    return findings, messages


def test_concatenated_with_itself_cast_to_its_dtype_is_silent():
    assert amp101()[0] == []


def test_own_variations_of_the_cast_are_silent():
    for cast in ("label.type_as(noise_batch)", "label.to(noise_batch.dtype)",
                 "label.to(dtype=noise_batch.dtype)", "label.type(noise_batch.dtype)"):
        assert amp101((CAT, f"torch.cat([noise_batch, {cast}], dim=1)"))[0] == [], cast
    stacked = "torch.stack([noise_batch, noise_batch.to(noise_batch)], dim=1)"
    assert amp101((CAT, stacked))[0] == []


def test_twin_a_submodules_output_is_reported_and_named():
    findings, messages = amp101((CAT, "torch.cat([noise_batch, self.label_proj(label)], dim=1)"))
    assert findings == [(GENERATOR, 25, "AMP101")]
    assert "concatenates it with `self.label_proj(label)`" in messages[0]


def test_twin_a_cast_to_the_device_only_is_reported():
    edit = (CAT, "torch.cat([noise_batch, self.label_proj(label).to(noise_batch.device)], dim=1)")
    assert amp101(edit)[0] == [(GENERATOR, 25, "AMP101")]
