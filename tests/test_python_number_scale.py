"""A tensor scaled by a Python number computed with `math` keeps its dtype (the dtype fact values
`math.sqrt(d)`, `1.0 / math.sqrt(d)` as Python numbers; the escape walk reads the fact).

tests/projects/finfo_mingpt_scaled: karpathy/minGPT layout (projects/chargpt/chargpt.py builds
`GPT` of mingpt/model.py and runs `Trainer` of mingpt/trainer.py, which opens the float16
autocast region around `self.model(x, y)`). `Block.forward` calls `CausalSelfAttention` of
mingpt/attention.py, which scales the scores as minGPT does,
`att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))`, and masks them with
`torch.finfo(x.dtype).min`: `x` is the block's float32 LayerNorm output, `att` is float16,
and the float32 minimum overflows float16 (AMP111). On main the `math.sqrt` scale cut the
walk from `att` back to the matmul. Clean twin: `torch.finfo(att.dtype).min`.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings

SETTINGS = Settings.default()
NAME = "finfo_mingpt_scaled"
HAZARD = "torch.finfo(x.dtype).min"
FINDING = ("mingpt/attention.py", 28, "AMP111")


def _amp111(files):
    return [f for f in project_findings(lint_project(files, SETTINGS)) if f[2] == "AMP111"]


def test_scale_through_math_sqrt_is_followed():
    files = load(NAME)
    assert HAZARD in files[f"{NAME}/mingpt/attention.py"]
    assert _amp111(files) == [FINDING]


def test_division_by_math_sqrt_is_followed():
    files = load(NAME, (("* (1.0 / math.sqrt(k.size(-1)))", "/ math.sqrt(k.size(-1))"),))
    assert _amp111(files) == [FINDING]


def test_clean_twin_is_silent():
    assert _amp111(load(NAME, ((HAZARD, "torch.finfo(att.dtype).min"),))) == []


def test_a_tensor_scale_is_not_a_python_number():
    # `k.new_tensor(...)` is a tensor: the walk stops there, as before (no guess)
    files = load(NAME, (("(1.0 / math.sqrt(k.size(-1)))", "k.new_tensor(1.0).rsqrt()"),))
    assert _amp111(files) == []


def test_a_local_bound_to_a_python_number_is_followed():
    files = load(NAME, (("        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n",
                         "        scale = 1.0 / math.sqrt(k.size(-1))\n"
                         "        att = (q @ k.transpose(-2, -1)) * scale\n"),))
    assert _amp111(files) == [("mingpt/attention.py", 29, "AMP111")]


def test_a_local_bound_to_a_tensor_is_not_a_python_number():
    files = load(NAME, (("        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n",
                         "        scale = k.new_tensor(1.0).rsqrt()\n"
                         "        att = (q @ k.transpose(-2, -1)) * scale\n"),))
    assert _amp111(files) == []
