"""A subclass that backpropagates itself and leaves the scaler to a method it inherits from a
class of another file: the base's `self.scaler` is a scaler of the subclass's methods too
(scaler_remote `inherited_scalers`), and a file holding `.backward(` and `self.` is a caller of
the cross-file protocol summaries even without a scaler word (scaler_summaries `is_caller`).

tests/projects/scaler_speechbrain_fit_batch: speechbrain/speechbrain layout (speechbrain/core.py
`Brain.fit_batch/optimizers_step`, recipes/LibriSpeech/ASR/train.py `ASR(sb.Brain)` overriding
`fit_batch`): the recipe's override backpropagates the loss unscaled, then calls
`self.optimizers_step()`, which unscales and steps through Brain's `self.scaler` (AMP122 at the
backward; the first `unscale_` raises).

Twins: the override scales the loss; the inherited step uses no scaler; the inherited step makes a
scaler of its own.
"""

from __future__ import annotations

from project_files import code_findings, load

from amplint.analysis.project.scaler_summaries import is_caller

NAME = "scaler_speechbrain_fit_batch"
RECIPE = "recipes/LibriSpeech/ASR/train.py"
BACKWARD = "        loss.backward()\n"


def amp12(files):
    return code_findings(files, "AMP122")


def test_override_backpropagates_unscaled_and_the_inherited_step_unscales():
    found, results = amp12(load(NAME))
    assert found == [(RECIPE, 27, "AMP122")]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP122")
    assert "`self.scaler.step` at speechbrain/core.py:27, through the call at line 29," in message
    assert "'AssertionError: Attempted unscale_ but _scale is None.'" in message


def test_twin_override_scales_the_loss_is_silent():
    files = load(NAME, ((BACKWARD, "        self.scaler.scale(loss).backward()\n"),))
    assert amp12(files)[0] == []


def test_twin_inherited_step_without_a_scaler_is_silent():
    files = load(NAME, (("        self.scaler.unscale_(self.optimizer)\n", ""),
                        ("        self.scaler.step(self.optimizer)\n        self.scaler.update()\n",
                         "        self.optimizer.step()\n")))
    assert amp12(files)[0] == []


def test_twin_inherited_step_with_a_scaler_of_its_own_is_silent():
    files = load(NAME, (("    def optimizers_step(self):\n",
                         "    def optimizers_step(self):\n        scaler = torch.amp.GradScaler(\"cuda\")\n"),
                        ("self.scaler.unscale_(self.optimizer)", "scaler.unscale_(self.optimizer)"),
                        ("        self.scaler.step(self.optimizer)\n        self.scaler.update()\n"
                         "        self.optimizer.zero_grad",
                         "        scaler.step(self.optimizer)\n        scaler.update()\n"
                         "        self.optimizer.zero_grad")))
    assert amp12(files)[0] == []


def test_a_method_that_backpropagates_is_a_caller():
    recipe = load(NAME)["scaler_speechbrain_fit_batch/" + RECIPE]
    assert "caler" not in recipe
    assert is_caller(recipe) and is_caller(recipe.encode())
    assert not is_caller("def f(loss):\n    loss.backward()\n")
