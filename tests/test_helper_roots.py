"""Class-flow calls in a same-file helper a region calls (flowfacts.FlowFacts.helper_roots):
`with torch.autocast(...): loss, preds, y = self.model_step(batch)` in training_step, whose
body calls `self.criterion(logits, y)` (ashleve/lightning-hydra-template's MNISTLitModule
shape, tests/projects/helper_step_lightning_template). The file's own analysis decides that the
helper runs under the region, so the project pass does not propagate from it; its calls that
only the class flow resolves were dropped (main misses the hazard). A helper no region calls,
and the fixed twin, stay silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
NAME = "helper_step_lightning_template"
HAZARD = ("src/models/components/multilabel_loss.py", 13, "AMP102")
FIX = [("return F.binary_cross_entropy(probs, target)",
        "return F.binary_cross_entropy_with_logits(logits, target)")]
REGION = "        with torch.autocast(\"cuda\", enabled=self.hparams.use_amp):\n            loss, preds, targets = self.model_step(batch)\n"


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def test_a_call_in_a_helper_the_region_calls_is_followed():
    files = load(NAME)
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "in MNISTLitModule.model_step under the autocast region at models/mnist_module.py:26" in message
    reached = [(call, target) for _, call, target in build(files).reached]
    assert any("in MNISTLitModule.model_step" in call and "MultiLabelLoss.forward" in target
               for call, target in reached)


def test_the_fixed_twin_is_silent():
    assert findings(load(NAME, FIX)) == []


def test_a_helper_no_region_calls_is_not_followed():
    # the same helper called outside any region (the autocast block gone): nothing runs under autocast
    files = load(NAME, [(REGION, "        loss, preds, targets = self.model_step(batch)\n")])
    assert findings(files) == []
    # a region whose autocast is off does not make the helper's calls run under autocast
    files = load(NAME, [("enabled=self.hparams.use_amp", "enabled=False")])
    assert findings(files) == []
