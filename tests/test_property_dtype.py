"""A property's value is what its getter returns, through the class's bases in other files
(amplint/analysis/project/property_entries.py, facts/property_dtypes.py; read by AMP111).

tests/projects/property_dtype_albef imitates salesforce/ALBEF's layout: models/xbert.py (a BERT
text encoder adapted from transformers), models/model_retrieval.py (ALBEF), Retrieval.py (the
training script, here with autocast + GradScaler), and transformers' ModuleUtilsMixin vendored in
models/modeling_utils.py. `BertSelfAttention(nn.Module, ModuleUtilsMixin)` fills its float16
scores with `torch.finfo(self.dtype).min`; `dtype` is the mixin's property returning
`next(self.parameters()).dtype`, float32 for the float32 model under autocast: 'value cannot be
converted to type c10::Half without overflow'. The corrected twin takes the scores' own dtype.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "property_dtype_albef"
FINDING = ("models/xbert.py", 39, "AMP111")
FILL = "attention_scores.masked_fill(attention_mask == 0, torch.finfo(self.dtype).min)"
ATTENTION = "class BertSelfAttention(nn.Module, ModuleUtilsMixin):"
GETTER = "        return next(self.parameters()).dtype\n"


def amp111(files):
    return code_findings(files, "AMP111", SETTINGS)


def test_an_inherited_parameter_dtype_property_fills_half_scores():
    found, results = amp111(load(NAME))
    assert found == [FINDING]
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP111"]
    assert "the property `dtype` of ModuleUtilsMixin at models/modeling_utils.py:13" in diagnostic.message
    assert "under the autocast region at Retrieval.py:12" in diagnostic.message
    assert diagnostic.fix is not None


def test_twin_taking_the_scores_dtype_is_silent():
    files = load(NAME, ((FILL, FILL.replace("self.dtype", "attention_scores.dtype")),))
    assert amp111(files)[0] == []


def test_the_property_through_two_bases_is_found():
    files = load(NAME, ((ATTENTION, "class BertSelfAttention(BertPreTrainedModel):"),))
    assert amp111(files)[0] == [FINDING]


def test_a_getter_returning_something_else_is_not_guessed():
    files = load(NAME, ((GETTER, "        return getattr(self, '_dtype', torch.float16)\n"),))
    assert amp111(files)[0] == []


def test_a_base_outside_the_project_first_may_define_it():
    """`PreTrainedModel` of transformers comes first in the lookup and defines `dtype` itself: not known."""
    files = load(NAME, ((ATTENTION, "class BertSelfAttention(PreTrainedModel, ModuleUtilsMixin):"),
                        ("from torch import nn\n", "from torch import nn\nfrom transformers import PreTrainedModel\n")))
    assert amp111(files)[0] == []


def test_a_class_storing_the_attribute_is_not_read():
    files = load(NAME, (("        self.num_attention_heads = config.num_attention_heads\n",
                         "        self.num_attention_heads = config.num_attention_heads\n"
                         "        self.dtype = torch.float16\n"),))
    assert amp111(files)[0] == []


def test_a_model_made_half_is_not_reported():
    """`.half()` on the model: its parameters share the scores' float16 (AMP103's business)."""
    files = load(NAME, (("    model = ALBEF().to(device)\n", "    model = ALBEF().to(device).half()\n"),))
    assert amp111(files)[0] == []


def test_no_region_no_finding():
    files = load(NAME, (('        with torch.autocast("cuda", dtype=torch.float16):\n',
                         '        with torch.autocast("cuda", enabled=False):\n'),))
    assert amp111(files)[0] == []


def test_warm_run_follows_an_edit_of_the_mixin_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "models/modeling_utils.py",
                                    ((GETTER, "        return torch.float16\n"),), "AMP111", [FINDING])
