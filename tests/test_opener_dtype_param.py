"""A region opened through a method (or function) whose autocast takes `dtype=` from its own
parameter (facts/opener_dtypes.py, issue 26): the dtype is the call's argument for it, else the
parameter's default, as Python binds it; the same summary for a method of this file and for one
of another file (project/context_methods.py, context_openers.py).

opener_dtype_lavis is shaped like salesforce/LAVIS (lavis/models/base_model.py
`BaseModel.maybe_autocast(self, dtype=...)`, the BLIP-2 Q-Former model inheriting it in another
file, an ALBEF pretraining module with its own `maybe_autocast` and loop), in a fork whose
default is bfloat16:
- train.py (another file's method on a local `model = Blip2Qformer()`) and
  lavis/tasks/albef_pretrain.py (`self.maybe_autocast()` of the same class) enable a GradScaler
  while the only region is a bfloat16 autocast: AMP124. Before this summary the dtype was
  unknown and nothing was reported.
- Twins: a call passing `torch.float16` (positional or keyword), a float16 default, and a method
  that binds its `dtype` again stay silent; another file's call passing any argument gives no
  dtype (it is not read there).
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import code_findings, load

NAME = "opener_dtype_lavis"
FOUND = [("lavis/tasks/albef_pretrain.py", 18, "AMP124"),
         ("train.py", 9, "AMP124")]
SELF_CALL = "            with self.maybe_autocast():\n"
OTHER_CALL = "            with model.maybe_autocast():\n"


def findings(replace=()):
    return code_findings(load(NAME, replace), "AMP124", Settings.default())[0]


def test_the_parameter_default_gives_the_region_its_dtype_in_both_files():
    assert findings() == FOUND


def test_a_float16_argument_gives_a_float16_region():
    assert findings(((SELF_CALL, SELF_CALL.replace("()", "(torch.float16)")),
                     (OTHER_CALL, OTHER_CALL.replace("()", "(dtype=torch.float16)")))) == []


def test_a_bfloat16_argument_of_the_same_file_is_read():
    assert findings(((SELF_CALL, SELF_CALL.replace("()", "(dtype=torch.bfloat16)")),)) == FOUND


def test_another_files_call_passing_an_argument_gives_no_dtype():
    assert findings(((OTHER_CALL, OTHER_CALL.replace("()", "(torch.bfloat16)")),)) == FOUND[:1]


def test_a_float16_default_is_silent():
    assert findings((("dtype=torch.bfloat16):", "dtype=torch.float16):"),)) == []


def test_a_method_that_binds_the_parameter_again_gives_no_dtype():
    body = '        return torch.autocast("cuda", dtype=dtype)\n'
    assert findings(((body, "        dtype = dtype or torch.float16\n" + body),)) == []


def test_the_default_is_the_dtype_autocast_runs_in():
    """torch 2.13, CPU: the region the default opens is a bfloat16 one."""
    torch = pytest.importorskip("torch")
    nn = torch.nn

    def maybe_autocast(dtype=torch.bfloat16):
        return torch.autocast("cpu", dtype=dtype)

    with maybe_autocast():
        out = nn.Linear(4, 4)(torch.randn(2, 4))
    assert out.dtype == torch.bfloat16
    with maybe_autocast(torch.float16):
        out = nn.Linear(4, 4)(torch.randn(2, 4))
    assert out.dtype == torch.float16
