"""One function calls a trainer's `fit` several times, and `fit` steps every optimizer of a loop and
updates the scaler once after it (GradScaler allows several steps, one per optimizer, before one
update). Each call updates after its own step: the step of the second call is not to be paired
with the update of the first one ("runs every iteration but update only after the loop").

tests/projects/scaler_speechbrain_refit: speechbrain/speechbrain layout (speechbrain/core.py
`Brain.fit` -> `_fit_train` -> `fit_batch` -> `optimizers_step`, `for opt in
valid_optimizers.values(): self.scaler.step(opt)` then `self.scaler.update()`), with the
Voicebank MetricGAN recipe's `train_discriminator` calling `self.fit(...)` three times.

Twin: the callee steps once per batch and updates only after its batch loop: reported where it is
written (core.py), and no longer once more at each of the recipe's calls.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_speechbrain_refit"
CORE = "speechbrain/core.py"
RECIPE = "recipes/Voicebank/enhance/MetricGAN/train.py"

BATCH_STEP = (
    "        for batch in train_set:\n"
    "            self.fit_batch(batch)\n",
    "        for batch in train_set:\n"
    "            loss = self.compute_forward(batch, Stage.TRAIN).mean()\n"
    "            self.scaler.scale(loss).backward()\n"
    "            self.scaler.step(self.optimizer)\n"
    "        self.scaler.update()\n",
)


def amp121(files):
    return code_findings(files, "AMP121")[0]


def test_fit_called_three_times_is_silent():
    assert amp121(load(NAME)) == []


def test_twin_update_after_the_batch_loop_is_reported_in_the_callee_only():
    found = amp121(load(NAME, (BATCH_STEP,)))
    assert found == [(CORE, 47, "AMP121")]
    assert not [f for f in found if f[0] == RECIPE]


def test_twin_one_fit_call_stays_silent():
    files = load(NAME)
    path = f"{NAME}/{RECIPE}"
    text = files[path]
    start = text.index("        if self.historical_set:")
    files[path] = text[:start]
    assert amp121(files) == []
