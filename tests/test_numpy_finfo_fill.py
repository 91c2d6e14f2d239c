"""numpy's `finfo(numpy.float32).min` (and `.max`, float64's) is the same constant as torch's
`torch.finfo(torch.float32).min`: a fill of a float16 tensor with it raises (AMP110).

tests/projects/finfo_icefall_numpy: k2-fsa/icefall layout (egs/librispeech/ASR/conformer_ctc/
train.py builds `Conformer` of conformer.py and runs `compute_loss` under a CUDA autocast enabled
by `--use-fp16`; each `ConformerEncoderLayer` calls `MultiHeadedAttention` of attention.py), in a
fork whose attention masks its scores with `np.finfo(np.float32).min`. Under torch 2.13 a
float16 tensor's `masked_fill(mask, np.finfo(np.float32).min)` raises 'value cannot be
converted to type c10::Half without overflow' (a Python float of it too), and the bfloat16
matmul output of a CPU autocast raises the same for c10::BFloat16 (float32's minimum is below
bfloat16's). On main the numpy constant was not read. Clean twin: `torch.finfo(scores.dtype).min`.
"""

from __future__ import annotations

from amplint.analysis.diagnostics import Applicability

from project_files import code_findings, load

NAME = "finfo_icefall_numpy"
ATTENTION = f"{NAME}/egs/librispeech/ASR/conformer_ctc/attention.py"
FILL = "scores = scores.masked_fill(mask, np.finfo(np.float32).min)"
FINDING = ("egs/librispeech/ASR/conformer_ctc/attention.py", 30, "AMP110")


def _amp110(replace=()):
    return code_findings(load(NAME, replace), "AMP110")


def test_numpy_float32_minimum_overflows_float16():
    assert FILL in load(NAME)[ATTENTION]
    found, results = _amp110()
    assert found == [FINDING]
    diagnostic = next(d for d in results[ATTENTION].diagnostics if d.code == "AMP110")
    assert "conformer.py:17" in diagnostic.message
    # the same value in float32: the fix is safe
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE


def test_a_name_bound_to_a_python_float_of_it():
    bound = ("min_value = float(np.finfo(np.float32).min)\n"
             "        scores = scores.masked_fill(mask, min_value)")
    assert _amp110(((FILL, bound),))[0] == [("egs/librispeech/ASR/conformer_ctc/attention.py", 31, "AMP110")]


def test_the_dtype_by_its_string_and_the_maximum():
    assert _amp110(((FILL, FILL.replace("np.float32).min", '"float32").max')),))[0] == [FINDING]


def test_float32_minimum_overflows_bfloat16_too():
    region = ('torch.autocast("cuda", enabled=params.use_fp16)', 'torch.autocast("cpu", dtype=torch.bfloat16)')
    assert _amp110((region,))[0] == [FINDING]


def test_clean_twin_reads_the_scores_dtype():
    assert _amp110(((FILL, "scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)"),))[0] == []


def test_numpy_float16_minimum_fits():
    assert _amp110(((FILL, FILL.replace("np.float32", "np.float16")),))[0] == []


def test_another_modules_finfo_is_not_read():
    # `np` bound to something else than numpy: its finfo is not known
    assert _amp110((("import numpy as np\n", "import mpmath as np\n"),))[0] == []
