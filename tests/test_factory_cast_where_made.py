"""A factory whose float32 value never meets other data: cast where it is made to another
value's dtype, compared (a bool), or rebound to such a cast before anything reads it (found
reading fresh real trees, r17-realread: AMP101 ×2 in NVIDIA/DeepLearningExamples FastPitch's
waveglow/model.py `torch.randn(...).to(spect.dtype)`, ×3 in its wav2vec2 layerdrop
`torch.rand(1) > self.layerdrop`, ×1 in facebookresearch/esm `torch.zeros(...).type_as(mask)`,
×1 in OpenNMT/OpenNMT-py's cnn_decoder.py `pad = torch.zeros(...)`, `pad = pad.type_as(x)`
under the trainer's autocast).

tests/projects/factory_dle_waveglow: DeepLearningExamples FastPitch layout (models.py
`get_model` halves WaveGlow; waveglow/model.py `infer`). tests/projects/factory_onmt_cnn_decoder:
OpenNMT-py layout (onmt/trainer.py autocast, onmt/model_builder.py, onmt/decoders/cnn_decoder.py).
amplint/analysis/facts/value_meets.py `cast_where_made` (the fp16 side of AMP101) and AMP101's
region side now asking `cast_where_rebound`. Twins, reported: a `.to(device)` (no dtype), a
factory added to half data before the comparison, a rebinding to `.float()`, no rebinding.
"""

from __future__ import annotations

from project_files import code_findings, load

WAVEGLOW = "factory_dle_waveglow"
MODEL = "waveglow/model.py"
ONMT = "factory_onmt_cnn_decoder"
DECODER = "onmt/decoders/cnn_decoder.py"


def amp101(name, *edits):
    return code_findings(load(name, edits), "AMP101")[0]


def test_cast_to_another_values_dtype_and_compared_factories_are_silent():
    assert amp101(WAVEGLOW) == []


def test_twin_a_device_only_move_is_reported():
    edit = ("device=spect.device).to(spect.dtype)", "device=spect.device).to(spect.device)")
    assert amp101(WAVEGLOW, edit) == [(MODEL, 27, "AMP101")]


def test_twin_a_factory_mixed_before_the_comparison_is_reported():
    edit = ("(torch.rand(1) > self.layerdrop)", "((torch.rand(1) + audio).mean() > self.layerdrop)")
    assert amp101(WAVEGLOW, edit) == [(MODEL, 31, "AMP101")]


def test_rebound_to_a_cast_before_the_concatenation_under_autocast_is_silent():
    assert amp101(ONMT) == []


def test_twin_rebound_to_float32_is_reported():
    assert amp101(ONMT, ("pad = pad.type_as(x)", "pad = pad.float()")) == [(DECODER, 25, "AMP101")]


def test_twin_no_rebinding_is_reported():
    assert amp101(ONMT, ("        pad = pad.type_as(x)\n", "")) == [(DECODER, 25, "AMP101")]
