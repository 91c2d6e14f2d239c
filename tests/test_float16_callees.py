"""A module-level helper that a method of a float16 module calls runs on the float16 values passed
to it (amplint/analysis/facts/float16_scope.py `float16_callees`): AMP140 and AMP141 walk it, and a
parameter there is float16 where every caller of the file passes float16, or where another
file's float16 code passes it float16 (amplint/analysis/project/float16_args.py, EntryFloat16Args).

tests/projects/stylegan_half_mapping: NVlabs/stylegan3 layout (training/networks.py with the
module-level `normalize_2nd_moment(x, dim=1, eps=1e-8)` that `MappingNetwork.forward` calls on
the latent, FullyConnectedLayer, SynthesisNetwork, Generator; gen_images.py loading the generator
through a helper), in a fork whose generation script offers `--fp16` by halving the whole
generator. The helper squares and averages the float16 latent and adds 1e-8. Twins: the helper
squares `x.float()`; the mapping network passes `z.float()`; no `.half()` at all.

Proven on CPU under torch (real `.half()`): the float16 latent of magnitude 300 squares past
65504, so the normalised latent is all zeros (float32: unit second moment); a zero latent gives
NaN (1e-8 is 0 in float16, rsqrt(0) = inf, 0 * inf = NaN), the float32 twin 0.

tests/projects/sam_half_attn_utils: facebookresearch/segment-anything layout
(segment_anything/build_sam.py build_sam_vit_b, segment_anything/modeling/image_encoder.py
ImageEncoderViT/Block/Attention, scripts/ with an embedding script) in a fork that moved the
attention arithmetic into segment_anything/modeling/attn_utils.py and writes the softmax out by
hand; the script halves the encoder under `--half`. `Attention.forward` (image_encoder.py, a
class the script makes float16) passes its float16 scores to `attention_probs` of attn_utils.py.
Twins: the softmax in float32; the scores passed as `attn.float()`; no `.half()`. Proven on CPU:
float16 scores of 12 give NaN probabilities (exp(12) > 65504), the float32 softmax 1/n.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings

SETTINGS = Settings.default()
NAME = "stylegan_half_mapping"
HELPER = "    return x * (x.square().mean(dim=dim, keepdim=True) + eps).rsqrt()\n"
FLOAT32_HELPER = "    return x * (x.float().square().mean(dim=dim, keepdim=True) + eps).rsqrt().to(x.dtype)\n"
FINDINGS = [("training/networks.py", 6, "AMP140"), ("training/networks.py", 6, "AMP141")]


def findings(replace=()):
    results = lint_project(load(NAME, replace), SETTINGS)
    return project_findings(results)


def test_helper_called_by_a_float16_module_is_float16_code():
    results = lint_project(load(NAME), SETTINGS)
    assert project_findings(results) == FINDINGS
    for result in results.values():
        for diag in result.diagnostics:
            assert "passed by `MappingNetwork.forward` of a float16 module" in diag.message
            assert "gen_images.py" in diag.message


def test_twin_helper_in_float32_is_silent():
    assert findings([(HELPER, FLOAT32_HELPER)]) == []


def test_twin_caller_passes_float32_is_silent():
    assert findings([("x = normalize_2nd_moment(z)", "x = normalize_2nd_moment(z.float())")]) == []


def test_twin_generator_never_halved_is_silent():
    assert findings([("        G = G.half()\n", "        G = G.float()\n")]) == []


@pytest.mark.torch
def test_float16_helper_overflows_and_its_eps_vanishes():
    torch = pytest.importorskip("torch")
    scope, twin = {"torch": torch}, {"torch": torch}
    exec("def normalize_2nd_moment(x, dim=1, eps=1e-8):\n" + HELPER, scope)
    exec("def normalize_2nd_moment(x, dim=1, eps=1e-8):\n" + FLOAT32_HELPER, twin)
    big = torch.full((2, 512), 300.0)
    assert torch.all(scope["normalize_2nd_moment"](big.half()) == 0)  # 300 ** 2 is inf in float16
    fixed = twin["normalize_2nd_moment"](big.half())
    assert fixed.dtype == torch.float16 and torch.allclose(fixed.float(), torch.ones(2, 512))
    zero = torch.zeros(2, 512)
    assert torch.isnan(scope["normalize_2nd_moment"](zero.half())).all()  # 1e-8 is 0 in float16
    assert not torch.isnan(twin["normalize_2nd_moment"](zero.half())).any()


SAM = "sam_half_attn_utils"
SOFTMAX = "    e = scores.exp()\n    return e / e.sum(dim=-1, keepdim=True)\n"
FLOAT32_SOFTMAX = "    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)\n"


def sam_findings(replace=()):
    return project_findings(lint_project(load(SAM, replace), SETTINGS))


def test_float16_scores_passed_to_a_helper_of_another_file():
    results = lint_project(load(SAM), SETTINGS)
    assert project_findings(results) == [("segment_anything/modeling/attn_utils.py", 12, "AMP141")]
    (diag,) = results[f"{SAM}/segment_anything/modeling/attn_utils.py"].diagnostics
    assert "passed by `Attention.forward` of float16 code, at segment_anything/modeling/image_encoder.py:19" \
        in diag.message


def test_twin_helper_softmax_in_float32_is_silent():
    assert sam_findings([(SOFTMAX, FLOAT32_SOFTMAX)]) == []


def test_twin_scores_passed_in_float32_is_silent():
    assert sam_findings([("attn = attention_probs(attn)", "attn = attention_probs(attn.float())")]) == []


def test_twin_encoder_never_halved_is_silent():
    assert sam_findings([("        encoder = encoder.half()\n", "        encoder = encoder.float()\n")]) == []


@pytest.mark.torch
def test_float16_handwritten_softmax_is_nan_where_float32_is_not():
    torch = pytest.importorskip("torch")
    scope, twin = {"torch": torch}, {"torch": torch}
    exec("def attention_probs(scores):\n" + SOFTMAX, scope)
    exec("def attention_probs(scores):\n" + FLOAT32_SOFTMAX, twin)
    scores = torch.full((1, 2, 4, 4), 12.0).half()
    assert torch.isnan(scope["attention_probs"](scores)).all()  # exp(12) = 162755 > 65504
    fixed = twin["attention_probs"](scores)
    assert fixed.dtype == torch.float16 and torch.allclose(fixed.float(), torch.full((1, 2, 4, 4), 0.25))


def test_only_files_whose_float16_methods_call_an_imported_name_are_parsed(monkeypatch):
    """Counted, not timed (issue 34): float16_args parses a candidate with LibCST only when a
    method of its float16 classes (or a function of the file they call) calls a name it
    imports. In the SAM project that is image_encoder.py alone (then attn_utils.py is summarised,
    to find its `attention_probs`): embed_images.py casts to half but holds no class; build_sam.py
    holds no float16 class."""
    import amplint.analysis.project as project_module
    from amplint.analysis.engine import Settings as _Settings
    from amplint.analysis.project import build
    from amplint.analysis.project.float16_args import float16_arg_entries

    parsed = []
    real = project_module.parse_or_none
    monkeypatch.setattr(project_module, "parse_or_none", lambda text: parsed.append(text) or real(text))
    edits = (("attn = attention_probs(attn)", "attn = attn.softmax(-1)"),
             ("x = window_partition(x, self.window_size)", "x = x.unflatten(1, (-1, self.window_size))"))
    for replace, expected in (((), ["class Attention", "def attention_probs"]), (edits, [])):
        files = load(SAM, replace)
        project = build(files, _Settings.default())
        parsed.clear()
        found = float16_arg_entries(project, sorted(files))
        assert len(parsed) == len(expected)
        assert all(mark in text for mark, text in zip(expected, parsed))
        assert bool(found) == bool(expected)


def test_a_bare_parameter_of_the_float16_method_is_not_told_to_another_file():
    """Only a value computed from the module's own submodules travels (float16_args
    `_activation`): a forward input may be token ids or lengths (fairseq's tacotron2
    `get_mask_from_lengths(memory_lengths)` from `Decoder.forward`)."""
    assert sam_findings([("attn = attention_probs(attn)", "attn = attention_probs(x)")]) == []
