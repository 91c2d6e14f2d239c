"""`self.<method>()` whose method the enclosing class defines (issue 26): what the method returns
is the call's value. The project is laid out like MIC-DKFZ/nnUNet v2: nnUNetTrainer stores
`self.loss = self._build_loss()` in on_train_start(), `_build_loss` returns the region loss
DC_and_BCE_loss (compound_losses.py) wrapped in DeepSupervisionWrapper (deep_supervision.py),
and train_step calls `self.loss(...)` under autocast; the fork's region loss runs `nn.BCELoss` on
sigmoid probabilities (AMP102). Missed on main: a call on `self` was never a value of the flow
("`self.loss`: no store of a project class found")."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
NNUNET = "self_method_nnunet"
HAZARD = ("nnunetv2/training/loss/compound_losses.py", 31, "AMP102")
FIX = [("self.ce = nn.BCELoss(**bce_kwargs)", "self.ce = nn.BCEWithLogitsLoss(**bce_kwargs)"),
       ("ce_loss = self.ce(probs, target_regions)", "ce_loss = self.ce(net_output, target_regions)")]
TRAINER = NNUNET + "/nnunetv2/training/nnUNetTrainer/nnUNetTrainer.py"


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def test_the_loss_a_method_of_the_trainer_builds_is_followed():
    files = load(NNUNET)
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "self.loss <- DC_and_BCE_loss(...) at training/nnUNetTrainer/nnUNetTrainer.py:22" in message
    assert findings(load(NNUNET, FIX)) == []
    assert not [call for _, call, _ in build(files).unresolved if call.startswith("self.loss")]


def test_only_the_method_that_is_called_counts():
    # the region loss is built by another method nothing calls; `_build_loss` makes a clean one
    files = load(NNUNET, [("    def _build_loss(self):\n",
                           "    def _build_ce_loss(self):\n        return nn.CrossEntropyLoss()\n\n"
                           "    def _build_region_loss(self):\n"),
                          ("self.loss = self._build_loss()", "self.loss = self._build_ce_loss()")])
    assert findings(files) == []


def test_a_callable_held_in_an_attribute_is_not_a_method():
    # `self.make_loss` is an attribute the trainer is given, not a method it defines
    files = load(NNUNET, [("self.num_epochs = 1000", "self.num_epochs = 1000\n        self.make_loss = nn.MSELoss"),
                          ("self.loss = self._build_loss()", "self.loss = self.make_loss()")])
    assert findings(files) == []
