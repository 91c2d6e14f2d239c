"""Two false reports on mosaicml/composer's trainer (found reading real code, r16-realread).

tests/projects/scaler_composer_trainer: composer layout (composer/trainer/trainer.py `Trainer.fit`
-> `_train_batch` -> `_train_microbatches` -> `_train_microbatch`).

- AMP121: `_train_batch` steps each of `self.optimizers` once (`for optimizer in ...:
  scaler.step(optimizer)`) and `fit` updates after the call. GradScaler allows several optimizers
  stepped before one `update()`; main took the callee's loop over optimizers, composed at the
  call, to repeat one optimizer's step (amplint/analysis/rules/amp121_scaler_update_missing.py
  `_repeating_loop`). Twin: a callee loop stepping the same optimizer each time is reported.
- AMP122: `loss = cast(torch.Tensor, self.scaler.scale(loss))` is the scaled loss (`typing.cast`
  returns its argument); main did not see through the cast and called `loss.backward()`
  unscaled (amplint/analysis/facts/names.py `uncast`). Twin: a cast of the unscaled loss is
  reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_composer_trainer"
FIT_CALL = ("composer/trainer/trainer.py", 23, "AMP121")
MICRO_CALL = ("composer/trainer/trainer.py", 28, "AMP122")


def findings(files, code):
    return code_findings(files, code)[0]


def test_each_optimizer_stepped_once_in_the_callee_then_one_update():
    assert findings(load(NAME), "AMP121") == []


def test_twin_the_callee_loop_steps_one_optimizer_again():
    files = load(NAME, (("                self.scaler.step(optimizer)\n",
                         "                self.scaler.step(self.optimizers[0])\n"),))
    assert findings(files, "AMP121") == [FIT_CALL]


def test_typing_cast_of_the_scaled_loss_is_scaled():
    assert findings(load(NAME), "AMP122") == []


def test_twin_typing_cast_of_the_unscaled_loss_is_reported():
    files = load(NAME, (("cast(torch.Tensor, self.scaler.scale(loss))", "cast(torch.Tensor, loss)"),))
    assert findings(files, "AMP122") == [MICRO_CALL]
