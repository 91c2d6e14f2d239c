"""A spectrum made with a float32 window is float32 whatever the signal's dtype: torch 2.13
promotes a float16 signal with the float32 window in `torch.stft` (complex64), and its
`torch.view_as_real` is float32 (found reading fresh real trees, r17-realread: AMP141 + AMP140
in NVIDIA/DeepLearningExamples wav2vec2's common/features.py, `x = self.stft(x)`, then
`x.pow(2).sum(-1)` and `torch.log(x + 1e-20)`, in the half model's feature extractor).

tests/projects/spectrum_dle_wav2vec2: DeepLearningExamples wav2vec2 layout (common/features.py
the feature extractor with its `stft` method, wav2vec2/model.py the model holding it,
inference.py halving the model). amplint/analysis/facts/spectrum_returns.py, asked by
half_values.py; the op names in dtype_rules.WINDOW_PROMOTE / REAL_VIEWS. Twins, reported: a
window left in the module's dtype, a spectrum cast back to half in the method, a method with
another return that is not such a spectrum.
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

NAME = "spectrum_dle_wav2vec2"
FEATURES = "common/features.py"
WINDOW = "window=self.window.to(dtype=torch.float)"


def findings(*edits):
    return sorted(code_findings(load(NAME, edits), "AMP141")[0]
                  + code_findings(load(NAME, edits), "AMP140")[0])


def test_the_float32_window_spectrum_is_float32_in_the_half_model():
    assert findings() == []


@pytest.mark.parametrize("edit, shift", [
    ((WINDOW, "window=self.window"), 0),
    (("return torch.view_as_real(spec)", "return torch.view_as_real(spec).half()"), 0),
    (("        return torch.view_as_real(spec)\n",
      "        if audio.dim() == 1:\n            return audio\n        return torch.view_as_real(spec)\n"), 2),
], ids=["window-in-module-dtype", "cast-back-to-half", "another-return"])
def test_twins_are_reported(edit, shift):
    assert findings(edit) == [(FEATURES, 20 + shift, "AMP141"), (FEATURES, 22 + shift, "AMP140")]


def test_the_premise_holds_in_torch():
    torch = pytest.importorskip("torch")
    signal = torch.randn(2, 4000).half()
    window = torch.hann_window(400, dtype=torch.float16)
    spec = torch.stft(signal, n_fft=512, hop_length=160, win_length=400,
                      window=window.to(dtype=torch.float), return_complex=True)
    assert spec.dtype == torch.complex64
    assert torch.view_as_real(spec).dtype == torch.float32
    assert spec.real.dtype == spec.imag.dtype == torch.float32


def test_a_method_calling_no_window_op_is_not_searched(monkeypatch):
    """Cost (fairseq, round 42: 0.28 s): `self.m(x)` in float16 code asks whether `m` returns such
    a spectrum; a method that calls no window-promoting op cannot, and its body is walked once to
    say so, not searched for each local each time it is called."""
    from amplint.analysis.facts import spectrum_returns

    calls = []
    real = spectrum_returns._assigned_once
    monkeypatch.setattr(spectrum_returns, "_assigned_once", lambda *a: calls.append(a) or real(*a))
    uses = "".join(f"        h = self.norm(h) + 1e-8 * {i}\n" for i in range(20))
    source = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n"
              "    def norm(self, x):\n        y = x.mean(-1, keepdim=True)\n        return y\n\n"
              "    def forward(self, h):\n" + uses + "        return h\n\n\nnet = Net().half()\n")
    code_findings({"probe/model.py": source}, "AMP140")
    assert calls == []
