"""A module run under no_grad in `if not training:` and with grad in `if training:` of the same
autocast region never runs both ways in one pass: the two `if`s test the same fixed name with
opposite outcomes (found reading fresh real trees, r18-realread: AMP150 ×2 in
facebookresearch/jepa's frozen-evaluation loops). amplint/analysis/facts/branch_arms.py reads
`not t` as the other arm of `t`; AMP150 asks it besides the arms of one `if`.

tests/projects/nograd_arms_vjepa_eval: facebookresearch/jepa layout
(evals/image_classification_frozen/eval.py and evals/video_classification_frozen/eval.py
`run_one_epoch`, src/utils.py AverageMeter). Twins, reported: the grad forward outside any
`if`, the test rebound in the loop, and `if not evaluating:` against `if training:`.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "nograd_arms_vjepa_eval"
IMAGE = "evals/image_classification_frozen/eval.py"
VIDEO = "evals/video_classification_frozen/eval.py"


def amp150(*edits):
    return code_findings(load(NAME, edits), "AMP150")[0]


def test_nograd_and_grad_forwards_in_negated_arms_are_silent():
    assert amp150() == []


def test_twin_grad_forward_outside_the_if_is_reported():
    edit = ("            if training:\n                outputs = classifier(outputs)\n",
            "            outputs = classifier(outputs)\n")
    assert amp150(edit) == [(IMAGE, 17, "AMP150")]


def test_twin_the_test_rebound_in_the_loop_is_reported():
    edit = ("    for itr, data in enumerate(data_loader):\n",
            "    for itr, data in enumerate(data_loader):\n        training = itr % 2 == 0\n")
    assert amp150(edit) == [(IMAGE, 19, "AMP150"), (VIDEO, 25, "AMP150")]


def test_twin_another_name_is_reported():
    assert amp150(("if not training:", "if not evaluating:")) == [
        (IMAGE, 18, "AMP150"), (VIDEO, 24, "AMP150")]
