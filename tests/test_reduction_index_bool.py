"""A sum of a comparison or an index op is no float16 reduction: `pred.eq(target).sum()` counts
bools (int64), whatever dtype `pred` was computed from (found reading fresh real trees,
r17-realread: AMP141 in microsoft/DeepSpeedExamples compression/cifar/utils.py, the accuracy
count of an fp16 model's test loop).

tests/projects/reduction_dse_cifar_accuracy: that layout (train.py halves the model and calls
utils.py `test(..., fp16=True)`, whose data is cast with `.half()`).
amplint/analysis/facts/half_values.py: the data chain stops at a comparison/predicate or index
op (the dtype tables' BOOL and INTEGER ops, as a method or a `torch.` function). Twin: the sum
of the float16 output itself stays reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "reduction_dse_cifar_accuracy"
COUNT = "pred.eq(target.data.view_as(pred)).cpu().sum()"


def amp141(*edits):
    return code_findings(load(NAME, edits), "AMP141")[0]


def test_counting_comparisons_of_float16_outputs_is_silent():
    assert amp141() == []


def test_twin_the_sum_of_the_float16_output_is_reported():
    assert amp141((COUNT, "output.data.cpu().sum()")) == [("utils.py", 15, "AMP141")]


def test_twin_the_sum_of_a_float16_difference_is_reported():
    edit = ("torch.eq(output.argmax(1), target).sum()", "torch.sub(output, output).sum()")
    assert amp141(edit) == [("utils.py", 16, "AMP141")]
