"""Splits keep their input's dtype: `q, k, v = qkv.unbind(0)`, `a, b = x.chunk(2, dim=-1)`,
`x.split(n, dim=...)`, `torch.split/chunk/unbind(x, ...)` give each part (an unpacked name, or
`x.chunk(2)[0]`) the dtype of `x`, under autocast too (no autocast list names them). The dtype
fact (amplint/analysis/facts/dtype_ops.py `Elements`, dtype_walk.py `bind`) and the float16 locals
(amplint/analysis/facts/half_values.py `note_assign`) take the step, so every rule reading them
gets it.

tests/projects/split_sam_attention: facebookresearch/segment-anything layout (`build_sam.py`,
`modeling/image_encoder.py` whose `Attention.forward` unbinds its qkv projection, `scripts/amg.py`
running the encoder under CPU bfloat16 autocast), with a write of the unbound `v` into a float32
`torch.zeros` buffer through a mask: that raises 'Index put requires the source and destination
dtypes match' (run it: `python scripts/amg.py`). The model package is declared with
`autocast-modules`. Twin: `v` split from a `.float()` copy is float32 and writes cleanly.

tests/projects/split_dino_half_knn: facebookresearch/dino layout (`eval_knn.py`,
`vision_transformer.py`, `utils.py`): `extract_features` runs the half model on `images.half()`
and splits the tokens with `torch.split`; the patch tokens' `.sum(dim=1)` is a float16 sum
(AMP141). Twin: the features taken `.float()` before the split.

tests/projects/split_nanogpt_probe: karpathy/nanoGPT layout (`model.py` whose
`CausalSelfAttention` splits `self.c_attn(x)` with `.split(self.n_embd, dim=2)`, `probe.py`):
the probe splits the first block's qkv projection under CPU bfloat16 autocast and feeds `v` to a
float32 `F.linear` after the region: 'mat1 and mat2 must have the same dtype' (run it:
`python probe.py`; AMP105 through amplint/analysis/facts/escape.py `_bind_parts`). Twin: the
projection taken `.float()` before the split.
"""

from __future__ import annotations

import os

import pytest

from project_files import PROJECTS, code_findings, load

SAM = "split_sam_attention"
NANOGPT = "split_nanogpt_probe"
DINO = "split_dino_half_knn"
DECLARED = (["segment_anything/modeling/**"], "cpu", "bfloat16", os.path.join(PROJECTS, SAM))


def _sam_amp101(files, monkeypatch):
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import lint_project

    monkeypatch.chdir(PROJECTS)
    results = lint_project(files, Settings.default(), declared=DECLARED)
    return sorted((path.split("/", 1)[1], d.line, d.code, d.message) for path, result in results.items()
                  for d in result.diagnostics if d.code == "AMP101")


def test_unbound_part_of_an_autocast_projection_written_into_a_float32_buffer(monkeypatch):
    (finding,) = _sam_amp101(load(SAM), monkeypatch)
    assert finding[:3] == ("segment_anything/modeling/image_encoder.py", 21, "AMP101")
    assert "`v` is bfloat16" in finding[3]


def test_twin_part_of_a_float32_copy_is_silent(monkeypatch):
    files = load(SAM, ((".unbind(0)", ".float().unbind(0)"),))
    assert _sam_amp101(files, monkeypatch) == []


def test_torch_split_of_half_features_is_a_float16_sum():
    findings, _ = code_findings(load(DINO), "AMP141")
    assert findings == [("eval_knn.py", 14, "AMP141")]


def test_twin_features_taken_float_before_the_split_are_silent():
    files = load(DINO, (("feats = model(samples)", "feats = model(samples).float()"),))
    assert code_findings(files, "AMP141")[0] == []


def test_part_of_a_split_escapes_the_region_into_a_float32_linear():
    findings, results = code_findings(load(NANOGPT), "AMP105")
    assert findings == [("probe.py", 19, "AMP105")]


def test_twin_projection_taken_float_before_the_split_is_silent():
    files = load(NANOGPT, (("c_attn(x).split(", "c_attn(x).float().split("),))
    assert code_findings(files, "AMP105")[0] == []


# -- the dtypes, against torch 2.13 on CPU ----------------------------------------------------
PROGRAM = '''import torch
lin = torch.nn.Linear(8, 24)
x = torch.randn(2, 8)
h = x.half()
a, b = h.chunk(2, dim=-1)
ha = a * 2
hb = b + 1
c, *rest = torch.split(h, [2, 6], dim=-1)
hc = c * 2
first = h.unbind(0)[0] * 2
with torch.autocast("cpu", dtype=torch.bfloat16):
    qkv = lin(x)
    q, k, v = qkv.chunk(3, dim=-1)
    sq = q * 2
    sk = k - 1
    u, w = torch.unbind(qkv.view(2, 2, 12), 1)
    su = u * 2
    t0, t1 = qkv.tensor_split(2, dim=-1)
    st = t1 * 2
f, g = x.float().chunk(2)
sf = f * 2
'''


def test_parts_match_execution():
    from dtype_recorder import compare, predictions, record

    pytest.importorskip("torch")
    observed = record(PROGRAM, "<split-program>", {})
    checked, confirmed, failures = compare(PROGRAM, observed, "bfloat16")
    assert not failures, "\n".join(failures)
    lines = PROGRAM.splitlines()
    known = {lines[span[0] - 1][span[1]:span[3]]: value.exact
             for span, value in predictions(PROGRAM).items() if span[0] == span[2]}
    # each part, as the fact reads its first use
    assert known["a * 2"] == known["b + 1"] == known["c * 2"] == "float16"
    assert known["h.unbind(0)[0] * 2"] == "float16"
    assert known["q * 2"] == known["k - 1"] == known["u * 2"] == known["t1 * 2"] == "bfloat16"
    assert known["f * 2"] == "float32"
    assert confirmed == checked, (checked, confirmed)
