"""AMP126 through step-and-update helpers (issue 26: scaler events inside a helper, same file or
another, composed at each call with the call's optimizer bound to the helper's parameter).

tests/projects/scaler_cyclegan_step_helpers is laid out like junyanz/pytorch-CycleGAN-and-pix2pix
(train.py, models/base_model.py BaseModel, models/pix2pix_model.py and models/cycle_gan_model.py
with optimize_parameters, models/networks.py, util/) in a fork with one GradScaler per model that
runs both scaled backwards first and then steps each optimizer through a helper that steps AND
updates: a method of the same class (`self.amp_step(optimizer)`, pix2pix) and a function of
util/amp.py (`step_and_update(scaler, optimizer)`, CycleGAN). The update between the two steps
unscales the second optimizer's gradients, scaled with the old scale, with the new one. Twins
that stay silent: the upstream order (each network stepped right after its own backward: the
second backward is scaled after the update), helpers that only step with one update after both,
and helpers whose update is behind a flag the first call turns off (`update=False`). A twin that
steps in a loop over the two optimizers through the helpers is reported at the loop's call.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "scaler_cyclegan_step_helpers"
PIX = f"{NAME}/models/pix2pix_model.py"
CYCLE = f"{NAME}/models/cycle_gan_model.py"

UPSTREAM_ORDER = (
    ("        self.backward_D()\n", "        self.backward_D()\n        self.amp_step(self.optimizer_D)\n"),
    ("        self.amp_step(self.optimizer_D)\n        self.amp_step(self.optimizer_G)\n",
     "        self.amp_step(self.optimizer_G)\n"),
    ("        self.scaler.scale(loss_G).backward()\n",
     "        self.scaler.scale(loss_G).backward()\n        step_and_update(self.scaler, self.optimizer_G)\n"),
    ("        step_and_update(self.scaler, self.optimizer_G)\n        step_and_update(self.scaler, self.optimizer_D)\n",
     "        step_and_update(self.scaler, self.optimizer_D)\n"),
)
STEP_ONLY = (
    ("        self.scaler.step(optimizer)\n        self.scaler.update()\n", "        self.scaler.step(optimizer)\n"),
    ("        self.amp_step(self.optimizer_G)\n",
     "        self.amp_step(self.optimizer_G)\n        self.scaler.update()\n"),
    ("    scaler.step(optimizer)\n    scaler.update()\n", "    scaler.step(optimizer)\n"),
    ("        step_and_update(self.scaler, self.optimizer_D)\n",
     "        step_and_update(self.scaler, self.optimizer_D)\n        self.scaler.update()\n"),
)
FLAGGED_UPDATE = (
    ("    def amp_step(self, optimizer):\n        self.scaler.step(optimizer)\n        self.scaler.update()\n",
     "    def amp_step(self, optimizer, update=True):\n        self.scaler.step(optimizer)\n"
     "        if update:\n            self.scaler.update()\n"),
    ("        self.amp_step(self.optimizer_D)\n", "        self.amp_step(self.optimizer_D, update=False)\n"),
    ("def step_and_update(scaler, optimizer):", "def step_and_update(scaler, optimizer, update=True):"),
    ("    scaler.step(optimizer)\n    scaler.update()\n",
     "    scaler.step(optimizer)\n    if update:\n        scaler.update()\n"),
    ("        step_and_update(self.scaler, self.optimizer_G)\n",
     "        step_and_update(self.scaler, self.optimizer_G, update=False)\n"),
)
LOOPED = (
    ("        step_and_update(self.scaler, self.optimizer_G)\n"
     "        step_and_update(self.scaler, self.optimizer_D)\n",
     "        for optimizer in (self.optimizer_G, self.optimizer_D):\n"
     "            step_and_update(self.scaler, optimizer)\n"),
    ("        self.amp_step(self.optimizer_D)\n        self.amp_step(self.optimizer_G)\n",
     "        for optimizer in [self.optimizer_D, self.optimizer_G]:\n            self.amp_step(optimizer)\n"),
)


def _findings(files):
    return sorted(((path, d.line, d.code), d) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics if d.code.startswith("AMP12"))


def _changed(replace):
    files = load(NAME, replace)
    for old, new in replace:
        assert new in files[PIX] or new in files[CYCLE] or new in files[f"{NAME}/util/amp.py"], new
    return files


def test_update_inside_a_step_helper_between_two_optimizers_is_reported_at_the_first_call():
    found = _findings(load(NAME))
    assert [key for key, _ in found] == [(CYCLE, 50, "AMP126"), (PIX, 52, "AMP126")]
    cycle, pix = (d for _, d in found)
    assert cycle.message.startswith(
        "`self.scaler.update()` (util/amp.py:12, through this call) between the steps of "
        "`self.optimizer_G` (util/amp.py:11, through the call at line 50) and `self.optimizer_D` "
        "(util/amp.py:11, through the call at line 51)")
    assert pix.message.startswith(
        "`self.scaler.update()` (line 42, through this call) between the steps of "
        "`self.optimizer_D` (line 41, through the call at line 52) and `self.optimizer_G` "
        "(line 41, through the call at line 53)")
    # the far end, for chain duplicates: the helper's own update (no finding there)
    assert (cycle.through, pix.through) == ((f"{NAME}/util/amp.py", 12), (PIX, 42))


@pytest.mark.parametrize("replace", [UPSTREAM_ORDER, STEP_ONLY, FLAGGED_UPDATE],
                         ids=["upstream-order", "step-only-helpers", "flagged-update"])
def test_clean_twins_are_silent(replace):
    assert _findings(_changed(replace)) == []


def test_a_loop_over_both_optimizers_through_the_helpers_is_reported():
    found = _findings(_changed(LOOPED))
    assert [key for key, _ in found] == [(CYCLE, 51, "AMP126"), (PIX, 53, "AMP126")]
    assert found[0][1].message.startswith(
        "`self.scaler.update()` (util/amp.py:12, through this call) inside the loop that steps "
        "each of the 2 optimizers of `(self.optimizer_G, self.optimizer_D)` (`self.scaler.step` "
        "at util/amp.py:11, through the call at line 51)")


def test_the_update_between_two_steps_misscales_the_second_optimizer():
    """The hazard on torch's CPU GradScaler: after a clean step the scale grows
    (growth_interval=1), so the second optimizer's gradients, scaled by S, are unscaled by 2 S
    and its SGD update is half the true one."""
    torch = pytest.importorskip("torch")

    def run(update_between):
        torch.manual_seed(0)
        gen, disc = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
        opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
        x = torch.randn(8, 4)
        scaler.scale(gen(x).sum()).backward()
        scaler.scale(disc(x).sum()).backward()
        before = disc.weight.detach().clone()
        scaler.step(opt_g)
        if update_between:
            scaler.update()
        scaler.step(opt_d)
        scaler.update()
        return disc.weight.detach() - before

    right, wrong = run(False), run(True)
    assert torch.allclose(wrong, right / 2)
