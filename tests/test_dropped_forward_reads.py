"""A half cast whose only reads in the autocast region feed forwards whose results are dropped
(found reading real trees, r18-realread, the four "debatable" findings decided this round:
AMP103 in facebookresearch/hiera benchmarking.py, `input.half()` then `model(input)` as a
statement in a `no_grad` throughput loop; ×2 in mosaicml/llm-foundry tests/models/test_model.py
`test_model_to`, `mpt.bfloat16()` then `_ = mpt(...)` under autocast). No number, loss or
gradient comes of such a forward, so the precision the cast loses is never read.

tests/projects/dropped_levit_speed: facebookresearch/LeViT layout (speed_test.py measuring
throughput with `inputs.half()` under autocast; a dtype round trip of the model).
amplint/analysis/facts/dropped_forwards.py `dropped_only_names`, read by AMP103's region readers.
Twins, reported: the output kept and reduced, the argument read outside `no_grad`, a forward
whose loss is kept beside the dropped one.
"""

from __future__ import annotations

from project_files import code_findings, load

SPEED = "dropped_levit_speed"
TEST = "speed_test.py"


def amp103(*edits):
    return code_findings(load(SPEED, edits), "AMP103")[0]


def test_casts_read_only_by_dropped_forwards_are_silent():
    assert amp103() == []


def test_twin_a_kept_output_is_reported():
    found = amp103(("                model(inputs)\n", "                total = model(inputs).sum()\n"))
    assert found == [(TEST, 11, "AMP103")]


def test_twin_an_argument_read_outside_no_grad_is_reported():
    found = amp103(("        with torch.no_grad():\n", "        if True:\n"))
    assert found == [(TEST, 11, "AMP103")]


def test_twin_a_kept_loss_beside_the_dropped_forward_is_reported():
    edit = ("        _ = model(images)\n", "        _ = model(images)\n        loss = model(images).sum()\n")
    found = amp103(edit)
    assert found == [(TEST, 22, "AMP103")]
