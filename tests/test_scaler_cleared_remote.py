"""AMP122 across files: the dry run's `optimizer.zero_grad()` travels with its backward
(r17-scaler; the cross-file rest of r16-realread's icefall finding).

tests/projects/scaler_icefall_kws_finetune: k2-fsa/icefall's KWS recipe layout
(egs/gigaspeech/KWS/zipformer/finetune.py imports `scan_pessimistic_batches_for_oom` from the
sibling train.py, whose body is `loss.backward(); optimizer.zero_grad()` on the largest
batches; finetune.py then builds the scaler and trains with `scaler.scale(loss).backward();
scaler.step(optimizer)`). The same-file case was silent since round 40 (`cleared_between`);
across files the protocol summary carried the backward but not the `zero_grad`, so main
reported AMP122 at finetune.py's scan call, as in icefall's gigaspeech and wenetspeech KWS
recipes. The summaries now carry a function's `zero_grad` events with its protocol events.
Twins, still reported: no zero_grad, a zero_grad of another object, a conditional one.
"""

from __future__ import annotations

import pytest
from project_files import code_findings, load

NAME = "scaler_icefall_kws_finetune"
FINETUNE_CALL = ("egs/gigaspeech/KWS/zipformer/finetune.py", 27, "AMP122")
TRAIN_CALL = ("egs/gigaspeech/KWS/zipformer/train.py", 43, "AMP122")
ZERO = "            loss.backward()\n            optimizer.zero_grad()\n"


def amp122(files):
    return code_findings(files, "AMP122")[0]


def test_dry_run_of_another_file_cleared_before_training_is_not_reported():
    assert amp122(load(NAME)) == []


def test_twin_dry_run_without_zero_grad_is_reported_at_both_calls():
    files = load(NAME, ((ZERO, "            loss.backward()\n            pass\n"),))
    assert amp122(files) == [FINETUNE_CALL, TRAIN_CALL]


def test_twin_zero_grad_of_another_object_is_reported():
    files = load(NAME, ((ZERO, "            loss.backward()\n            model.zero_grad()\n"),))
    assert amp122(files) == [FINETUNE_CALL, TRAIN_CALL]


def test_twin_conditional_zero_grad_is_reported():
    files = load(NAME, ((ZERO, "            loss.backward()\n"
                               "            if params.clear: optimizer.zero_grad()\n"),))
    assert amp122(files) == [FINETUNE_CALL, TRAIN_CALL]


def test_torch_cleared_dry_run_leaves_the_scaled_step_alone():
    """torch 2.13 CPU: a dry run's unscaled backward followed by `optimizer.zero_grad()` leaves
    no gradient for the scaler's first step, which then equals a step with no dry run; without
    the zero_grad the unscaled gradients enter that step (divided by the loss scale)."""
    torch = pytest.importorskip("torch")

    def weights(dry_run, clear):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        if dry_run:
            model(x).pow(2).mean().backward()
            if clear:
                opt.zero_grad()
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        scaler.scale(model(x).pow(2).mean()).backward()
        scaler.step(opt)
        scaler.update()
        return model.weight.detach().clone()

    assert torch.equal(weights(True, True), weights(False, False))
    assert not torch.equal(weights(True, False), weights(False, False))
