"""A numeric constant imported from another module of the project is the fill it names (AMP110
across files).

tests/projects/const_onmt_attention: OpenNMT-py layout (onmt/constants.py holds the package's
constants, onmt/modules/multi_headed_attn.py the attention, onmt/encoder.py the Transformer
encoder, train.py a float16 CUDA autocast loop with a GradScaler), in a fork whose attention masks
padded keys with `-MASK_VALUE`, `MASK_VALUE = 1e18` imported from onmt/constants.py. Under
autocast the scores are float16 (the matmul of two Linear outputs) and torch 2.13 raises 'value
cannot be converted to type c10::Half without overflow' (checked below on CPU). On main the name
was read only when the file itself binds it. Clean twin: `torch.finfo(scores.dtype).min`.
"""

from __future__ import annotations

import pytest

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "const_onmt_attention"
ATTENTION = f"{NAME}/onmt/modules/multi_headed_attn.py"
CONSTANTS = f"{NAME}/onmt/constants.py"
FILL = "scores = scores.masked_fill(mask.unsqueeze(1), -MASK_VALUE)"
FINDING = ("onmt/modules/multi_headed_attn.py", 31, "AMP110")


def _amp110(replace=()):
    return code_findings(load(NAME, replace), "AMP110")[0]


def test_imported_constant_overflows_float16():
    assert FILL in load(NAME)[ATTENTION]
    assert _amp110() == [FINDING]


def test_premise_float16_fill_of_the_constant_raises():
    torch = pytest.importorskip("torch")
    scores = torch.zeros(2, 3, dtype=torch.float16)
    mask = torch.tensor([[True, False, False], [False, False, True]])
    with pytest.raises(RuntimeError, match="c10::Half"):
        scores.masked_fill(mask, -1e18)
    # under a CPU bfloat16 autocast the matmul is bfloat16, where 1e18 fits
    with torch.autocast("cpu", dtype=torch.bfloat16):
        product = torch.matmul(torch.randn(2, 4), torch.randn(4, 3))
    assert product.dtype == torch.bfloat16
    assert torch.isfinite(product.masked_fill(mask, -1e18).float()).all()


def test_clean_twin_reads_the_scores_dtype():
    fixed = "scores = scores.masked_fill(mask.unsqueeze(1), torch.finfo(scores.dtype).min)"
    assert _amp110(((FILL, fixed),)) == []


def test_bfloat16_region_holds_the_constant():
    assert _amp110((("dtype=torch.float16", "dtype=torch.bfloat16"),)) == []


def test_a_constant_float16_holds_is_no_fill_hazard():
    assert _amp110((("MASK_VALUE = 1e18", "MASK_VALUE = 1e4"),)) == []


def test_arithmetic_and_a_package_reexport():
    assert _amp110((("MASK_VALUE = 1e18", "MASK_VALUE = 10 ** 18"),)) == [FINDING]
    reexported = (("from onmt.constants import MASK_VALUE", "from onmt import MASK_VALUE"),
                  ("__all__ = [", "__all__ = ["))
    files = load(NAME, reexported)
    files[f"{NAME}/onmt/__init__.py"] = "from onmt.constants import MASK_VALUE\n"
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import lint_project
    from project_files import project_findings

    found = [f for f in project_findings(lint_project(files, Settings.default())) if f[2] == "AMP110"]
    assert found == [FINDING]


@pytest.mark.parametrize("rebound", [
    "MASK_VALUE = 1e18\nif LABEL_SMOOTHING:\n    MASK_VALUE = 1e4\n",  # bound twice
    "MASK_VALUE = 1e18\n\n\ndef set_mask_value(v):\n    global MASK_VALUE\n    MASK_VALUE = v\n",
    "MASK_VALUE = float('inf')\n",  # no finite number: AMP110 reads none
])
def test_a_constant_not_bound_once_to_a_number_is_not_read(rebound):
    assert _amp110((("MASK_VALUE = 1e18\n", rebound),)) == []


def test_a_local_binding_shadows_the_import():
    local = "        MASK_VALUE = 1e4\n        scores = torch.matmul("
    assert _amp110((("        scores = torch.matmul(", local),)) == []


def test_warm_run_follows_an_edit_of_the_constant(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "onmt/constants.py",
                                    (("MASK_VALUE = 1e18", "MASK_VALUE = 1e4"),), "AMP110",
                                    [("onmt/modules/multi_headed_attn.py", 31, "AMP110")])
