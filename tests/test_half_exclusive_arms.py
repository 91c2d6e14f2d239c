"""An input cast to half in one arm of an `if` and read by autocast only in the other arm (or
in the opposite arm of an `if` with the same fixed test) is never mixed with autocast (found
reading fresh real trees, r17-realread: AMP103 ×5 in baaivision/EVA's BEiT-style engines,
`if loss_scaler is None: samples = samples.half()` for the DeepSpeed fp16 engine, the
`torch.cuda.amp.autocast()` forward only when a loss scaler is given).

tests/projects/half_arms_eva_deepspeed: EVA-02/asuka layout (engine_for_pretraining.py,
engine_for_finetuning.py). amplint/analysis/facts/branch_arms.py `exclusive_arms`, asked by
AMP103's `_read_in_region`. Twins, reported: the test's name rebound in the loop, a test that
calls a function, and the autocast forward in the same arm as the cast.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "half_arms_eva_deepspeed"
PRE = "engine_for_pretraining.py"
FINE = "engine_for_finetuning.py"


def amp103(*edits):
    return code_findings(load(NAME, edits), "AMP103")[0]


def test_half_cast_in_the_deepspeed_arm_only_is_silent():
    assert amp103() == []


def test_twin_the_test_rebound_in_the_loop_is_reported():
    edit = ("        loss_value = loss.item()\n", "        loss_value = loss.item()\n        loss_scaler = None\n")
    assert amp103(edit) == [(PRE, 22, "AMP103"), (PRE, 24, "AMP103")]


def test_twin_a_test_that_calls_is_reported():
    edit = ("        if loss_scaler is None:\n            samples = samples.half()",
            "        if callable(loss_scaler):\n            samples = samples.half()")
    assert amp103(edit) == [(FINE, 20, "AMP103")]


def test_twin_the_autocast_forward_in_the_same_arm_is_reported():
    edit = ("            samples = samples.half()\n            loss, output = train_class_batch(",
            "            samples = samples.half()\n            with torch.cuda.amp.autocast():\n"
            "                loss, output = train_class_batch(")
    assert amp103(edit) == [(FINE, 20, "AMP103")]
