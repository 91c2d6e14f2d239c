"""A constructor's parameter default kept on `self` is the fill's value where every construction
of the file leaves it out (facts/param_defaults.py attr_default, read by facts/fills.py for
AMP110): on main `self.mask_fill` was no constant.

tests/projects/params_transformer_fill: jadore801120/attention-is-all-you-need-pytorch layout
(transformer/Modules.py's `ScaledDotProductAttention` and `MultiHeadAttention`,
transformer/Models.py's encoder, train.py's loop), in a fork whose attention takes its mask fill
as `__init__(self, temperature, attn_dropout=0.1, mask_fill=-1e9)`, keeps it as
`self.mask_fill` and fills with it; `MultiHeadAttention` builds it as
`ScaledDotProductAttention(temperature=d_k ** 0.5)`, and train.py runs the encoder under a
float16 CPU autocast: under torch 2.13 the matmul scores are float16 and `masked_fill(mask == 0,
-1e9)` raises 'value cannot be converted to type c10::Half without overflow' (checked below).
Clean twin: the default is -1e4, which float16 holds.
"""

from __future__ import annotations

import os
import sys

import pytest

from project_files import PROJECTS, code_findings, load

NAME = "params_transformer_fill"
MODULES = f"{NAME}/transformer/Modules.py"
DEFAULT = "mask_fill=-1e9):"
FINDING = ("transformer/Modules.py", 18, "AMP110")


def _amp110(replace=()):
    return code_findings(load(NAME, replace), "AMP110")


def test_the_constructor_default_is_the_fill():
    found, results = _amp110()
    assert found == [FINDING]
    [diagnostic] = [d for d in results[MODULES].diagnostics if d.code == "AMP110"]
    assert "`self.mask_fill` (= -1e+09)" in diagnostic.message
    assert "train.py:10" in diagnostic.message
    assert diagnostic.fix is None  # another construction may pass another value


def test_clean_twin_a_default_float16_holds():
    assert _amp110(((DEFAULT, "mask_fill=-1e4):"),))[0] == []


def test_a_construction_that_passes_it_leaves_it_unknown():
    built = "ScaledDotProductAttention(temperature=d_k ** 0.5)"
    assert _amp110(((built, "ScaledDotProductAttention(temperature=d_k ** 0.5, mask_fill=-3e4)"),))[0] == []
    assert _amp110(((built, "ScaledDotProductAttention(d_k ** 0.5, 0.1, -3e4)"),))[0] == []


def test_another_store_of_the_attribute_leaves_it_unknown():
    built = "        self.attention = ScaledDotProductAttention(temperature=d_k ** 0.5)\n"
    for store in ("        self.attention.mask_fill = -3e4\n", "        self.attention.mask_fill += 1.0\n"):
        assert _amp110(((built, built + store),))[0] == []


def test_a_subclass_the_project_never_builds_leaves_the_default():
    # round 43: the value comes from what the project's constructions pass (facts/bound_values.py):
    # a subclass nobody builds in the project does not change what MultiHeadAttention's
    # construction fills with (-1e9 on that path); one that is built with another value does
    sub = ("\n\nclass LocalAttention(ScaledDotProductAttention):\n    pass\n")
    ret = '        return torch.matmul(attn, v), attn\n'
    assert _amp110(((ret, ret + sub),))[0] == [FINDING]
    built = sub + "\n\nLOCAL = LocalAttention(8.0, mask_fill=-3e4)\n"
    assert _amp110(((ret, ret + built),))[0] == []


def test_the_parameter_rebound_in_init_leaves_it_unknown():
    store = "        self.mask_fill = mask_fill\n"
    assert _amp110(((store, "        mask_fill = max(mask_fill, -6e4)\n" + store),))[0] == []


def _run(tmp_path, replace=()):
    root = tmp_path / NAME
    for path, text in load(NAME, replace).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sys.path.insert(0, str(root))
    try:
        for name in [n for n in sys.modules if n == "train" or n.startswith("transformer")]:
            del sys.modules[name]
        import train

        train.main()
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "train" or n.startswith("transformer")]:
            del sys.modules[name]


def test_torch_raises_on_the_project_and_not_on_its_twin(tmp_path):
    pytest.importorskip("torch")
    assert os.path.isdir(os.path.join(PROJECTS, NAME))
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        _run(tmp_path / "hazard")
    _run(tmp_path / "clean", ((DEFAULT, "mask_fill=-1e4):"),))
