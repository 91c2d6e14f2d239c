"""A GradScaler's `update()` in a lambda handed to a callback registry counts as an update of
that scaler elsewhere (amplint/analysis/facts/scaler_remote.lambda_updates, read by
ScalerAnalysis.updated_anywhere): when the lambda runs is the registry's business, which no
flow of the file shows, so AMP121 stays silent as for an update in another function.

tests/projects/lambda_update_mingpt: karpathy/minGPT layout (mingpt/model.py GPT with
configure_optimizers, mingpt/trainer.py Trainer with add_callback/trigger_callbacks("on_batch_end")
and run(), projects/chargpt/chargpt.py with its batch_end_callback) in a fork whose batch step is
a closure built by `_make_step(model, optimizer, scaler, ...)` and whose `build_trainer` registers
`lambda trainer: scaler.update()` on "on_batch_end". Before, the lambda's body was no flow, so
the closure's `scaler.step` was reported as never updated, with a "safe" fix inserting a second
`scaler.update()` per iteration (the second raises 'No inf checks were recorded prior to update.').
The control: the same project without the lambda is still reported."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

NAME = "lambda_update_mingpt"
SETTINGS = Settings.default()
REGISTER = '    trainer.add_callback("on_batch_end", lambda trainer: scaler.update())\n'


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics)


def test_an_update_registered_as_a_lambda_callback_is_an_update_elsewhere():
    assert findings(load(NAME)) == []
    # the controls: no lambda, or a lambda updating another object's scaler, leave it unupdated
    never = [(f"{NAME}/mingpt/trainer.py", 40, "AMP121")]
    assert findings(load(NAME, ((REGISTER, ""),))) == never
    other = REGISTER.replace("scaler.update()", "trainer.scaler.update()")
    assert findings(load(NAME, ((REGISTER, other),))) == never
