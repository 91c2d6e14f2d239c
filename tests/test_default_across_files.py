"""A parameter's default is the value a fill gets where every call that reaches the function under
an autocast region, in any file, leaves the parameter out (facts/param_defaults.py reads the
arguments the project pass saw at those calls: EntryRegion.args).

tests/projects/default_drqa_mask: facebookresearch/DrQA layout (scripts/reader/train.py builds
`DocReader` of drqa/reader/model.py, whose `update` runs `RnnDocReader` of drqa/reader/rnn_reader.py
under a float16 CUDA autocast; its `LinearSeqAttn` of drqa/reader/layers.py masks its linear
scores with `utils.mask_scores(scores, x_mask)` of drqa/reader/utils.py), in a fork whose
masking helper fills with a default `fill=-1e30`: the linear output is float16 under the
region and `masked_fill(mask, -1e30)` raises 'value cannot be converted to type c10::Half
without overflow' (torch 2.13, CPU autocast float16: the linear gives float16 and the fill
raises; under bfloat16 it does not, bfloat16 has float32's range). On main the default was
read only where every call was in the helper's own file. Clean twin: the caller passes DrQA's
own `float("-inf")`.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "default_drqa_mask"
CALL = "scores = utils.mask_scores(scores, x_mask)"
FINDING = ("drqa/reader/utils.py", 6, "AMP110")


def _amp110(replace=()):
    return code_findings(load(NAME, replace), "AMP110")[0]


def test_a_default_that_no_reaching_call_passes_is_the_fill():
    assert CALL in load(NAME)[f"{NAME}/drqa/reader/layers.py"]
    assert _amp110() == [FINDING]


def test_the_finding_offers_no_fix():
    # other calls may pass another value: the default is not rewritten
    _, results = code_findings(load(NAME), "AMP110")
    found = [d for d in results[f"{NAME}/drqa/reader/utils.py"].diagnostics if d.code == "AMP110"]
    assert len(found) == 1 and found[0].fix is None
    assert "drqa/reader/layers.py:18" in found[0].message


def test_clean_twin_passes_the_fill_by_keyword():
    assert _amp110(((CALL, 'scores = utils.mask_scores(scores, x_mask, fill=float("-inf"))'),)) == []


def test_a_fill_passed_by_position_is_not_the_default():
    assert _amp110(((CALL, "scores = utils.mask_scores(scores, x_mask, -65504.0)"),)) == []


def test_a_starred_call_may_pass_it():
    assert _amp110(((CALL, "scores = utils.mask_scores(*(scores, x_mask))"),)) == []


def test_every_reaching_call_must_leave_it_out():
    # a second call under the same region passes the fill: which value a call gets is not
    # told apart per call, so the default is no longer known (a miss, never a guess)
    twice = CALL + "\n        utils.mask_scores(scores, x_mask, fill=-1e4)"
    assert _amp110(((CALL, twice),)) == []


def test_a_function_its_own_file_passes_on_is_unknown():
    helper = "def uniform_weights(x, x_mask):"
    stored = "MASKERS = {'scores': mask_scores}\n\n\n" + helper
    assert _amp110(((helper, stored),)) == []


def test_a_call_through_a_value_is_unknown():
    # the attention keeps the helper and calls it: no plain call shows the arguments
    files = (
        ("        self.linear = nn.Linear(input_size, 1)\n",
         "        self.linear = nn.Linear(input_size, 1)\n        self.mask = utils.mask_scores\n"),
        (CALL, "scores = self.mask(scores, x_mask)"),
    )
    assert _amp110(files) == []


SEEDED = (
    ("from drqa.reader.rnn_reader import RnnDocReader\n",
     "from drqa.reader import utils\nfrom drqa.reader.rnn_reader import RnnDocReader\n"),
    ("            score_s = self.network(*inputs)\n",
     "            score_s = utils.mask_scores(self.network(*inputs), inputs[1] == 0{})\n"),
)


def test_a_call_written_under_the_region_counts_too():
    # the region's own call of the helper (a seed of the project pass) leaves it out as well
    found = _amp110(tuple((old, new.format("")) for old, new in SEEDED))
    assert found == [FINDING]


def test_a_call_written_under_the_region_that_passes_it():
    assert _amp110(tuple((old, new.format(", fill=-1e4")) for old, new in SEEDED)) == []
