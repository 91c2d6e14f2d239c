"""AMP122: an unscaled backward whose gradients `optimizer.zero_grad()` clears before the
scaler's step is no input of that step (found reading k2-fsa/icefall, r16-realread), or one that runs before the
step in the step's own iteration (icefall's VITS recipes: `optimizer_d.zero_grad();
scaler.scale(loss_d).backward(); scaler.step(optimizer_d)`).

tests/projects/scaler_icefall_oom_scan: icefall layout (egs/librispeech/ASR/zipformer/train.py
`run` -> `scan_pessimistic_batches_for_oom`: `loss.backward(); optimizer.zero_grad()` on the
largest batches, a dry run for OOM; then `train_one_epoch`: `scaler.scale(loss).backward();
scaler.step(optimizer)`). main reported AMP122 at the scan call, in 61 recipes of icefall.
The flow now holds `zero_grad` events (amplint/analysis/facts/scaler_flow.py; composed with a
callee's protocol events, counted in no limit) and AMP122 asks `cleared_between`
(amplint/analysis/facts/scaler_paths.py). Twins: no zero_grad, a zero_grad of another object,
and a conditional one, are reported as before; so is a dry run whose zero_grad comes before its
backward when training clears only after its step.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_icefall_oom_scan"
SCAN_CALL = ("egs/librispeech/ASR/zipformer/train.py", 43, "AMP122")
ZERO = "            loss.backward()\n            optimizer.zero_grad()\n"


def amp122(files):
    return code_findings(files, "AMP122")[0]


def test_dry_run_backward_cleared_before_training_is_not_reported():
    assert amp122(load(NAME)) == []


def test_twin_dry_run_without_zero_grad_is_reported():
    assert amp122(load(NAME, ((ZERO, "            loss.backward()\n            pass\n"),))) == [SCAN_CALL]


def test_twin_zero_grad_of_another_object_is_reported():
    files = load(NAME, ((ZERO, "            loss.backward()\n            model.zero_grad()\n"),))
    assert amp122(files) == [SCAN_CALL]


def test_twin_conditional_zero_grad_is_reported():
    files = load(NAME, ((ZERO, "            loss.backward()\n"
                               "            if params.clear: optimizer.zero_grad()\n"),))
    assert amp122(files) == [SCAN_CALL]


SCAN_FIRST = "            optimizer.zero_grad()\n            loss.backward()\n"
TRAIN = ("            scaler.scale(loss).backward()\n            scaler.step(optimizer)\n"
         "            scaler.update()\n            optimizer.zero_grad()\n")
TRAIN_FIRST = ("            optimizer.zero_grad()\n            scaler.scale(loss).backward()\n"
               "            scaler.step(optimizer)\n            scaler.update()\n")


def test_cleared_in_the_training_iteration_before_its_step():
    assert amp122(load(NAME, ((ZERO, SCAN_FIRST), (TRAIN, TRAIN_FIRST)))) == []


def test_twin_training_clears_only_after_its_step_is_reported():
    assert amp122(load(NAME, ((ZERO, SCAN_FIRST),))) == [SCAN_CALL]
