"""A region opened through a context-manager METHOD of another file, on an instance the class
flow follows (project/context_methods.py): `with self._precision.forward_context():` where the
receiver holds a plugin whose method returns an autocast (or is a `@contextmanager` yielding
under one).

tests/projects/ctxmethod_fabric is laid out like Lightning-AI/pytorch-lightning's
src/lightning/fabric (fabric.py, wrappers.py `_FabricModule.forward` running the user's module
under `precision.forward_context()`, plugins/precision/{precision,amp}.py `Precision` /
`MixedPrecision.forward_context`), with an example script. It is renamed (package `minifabric`,
class `Engine`) so that amplint's built-in knowledge of Lightning's `Fabric` does not decide it:
the region has to come from the plugin's method. It reaches the example's
`F.binary_cross_entropy` on probabilities (AMP102) through `self._forward_module(...)`.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "ctxmethod_fabric"
AMP102 = ("examples/train_classifier.py", 16, "AMP102")
RETURNS = "        return torch.autocast(self.device, dtype=torch.float16)\n"
PLUGIN = "        self._precision = MixedPrecision(precision, accelerator)\n"
IMPORT = "from .plugins import MixedPrecision\n"


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def message_of(results, code):
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == code]
    return message


def test_the_region_reaches_the_users_module_through_the_wrapper():
    found, results = findings("AMP102")
    assert found == [AMP102]
    message = message_of(results, "AMP102")
    assert "self._precision.forward_context() at minifabric/fabric/wrappers.py:11" in message
    assert "`MixedPrecision.forward_context()` of minifabric/fabric/plugins/precision/amp.py:12 returns the " \
           "autocast at minifabric/fabric/plugins/precision/amp.py:13)" in message


def test_a_contextmanager_method_opens_it_too():
    edits = ((RETURNS, "        with torch.autocast(self.device, dtype=torch.float16):\n            yield\n"),
             ("    def forward_context(self):\n        with", "    @contextlib.contextmanager\n"
              "    def forward_context(self):\n        with"),
             ("import torch\n\nfrom .precision", "import contextlib\n\nimport torch\n\nfrom .precision"))
    found, results = findings("AMP102", *edits)
    assert found == [AMP102]
    assert "yields under the autocast region" in message_of(results, "AMP102")


def test_a_receiver_that_may_hold_the_plain_plugin_is_maybe_enabled():
    edits = ((PLUGIN, "        self._precision = MixedPrecision(precision, accelerator) if precision != "
                      "'32-true' else Precision()\n"),
             (IMPORT, "from .plugins import MixedPrecision, Precision\n"))
    found, results = findings("AMP102", *edits)
    assert found == [AMP102]
    assert "on some paths" in message_of(results, "AMP102")


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("probs = torch.sigmoid(self.head(self.backbone(images)))\n"
                               "        return F.binary_cross_entropy(probs, targets)",
                               "logits = self.head(self.backbone(images))\n"
                               "        return F.binary_cross_entropy_with_logits(logits, targets)"))[0] == []


@pytest.mark.parametrize("edits", [
    # the plugin's method opens nothing
    ((RETURNS, "        return nullcontext()\n"), ("import torch\n", "from contextlib import nullcontext\n\nimport torch\n")),
    # it opens a disabled autocast
    ((RETURNS, RETURNS.replace("dtype=torch.float16)", "dtype=torch.float16, enabled=False)")),),
    # the receiver holds only the full-precision plugin
    ((PLUGIN, "        self._precision = Precision()\n"), (IMPORT, "from .plugins import Precision\n")),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []


def test_warm_run_follows_an_edit_of_the_plugin_only(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "minifabric/fabric/plugins/precision/amp.py",
        ((RETURNS, RETURNS.replace("dtype=torch.float16)", "dtype=torch.float16, enabled=False)")),),
        "AMP102", [AMP102])


def test_the_callers_of_the_method_come_from_the_call_index_not_a_scan(monkeypatch):
    """The files holding `.forward_context(` are looked up among those the class flow's call
    index says call `forward_context` (every such text calls it: `.` is no word character)
    where the index is built when the method seeds are made (the mixed monorepo tree: both
    of its method names), not found by a scan of every text (on start: one whole-tree scan a
    method name, counted by scan_view). Where it is not built, the scan answers. The finding
    is the same either way."""
    import amplint.analysis.project as project_module
    from amplint.analysis.project import build, context_methods, scan_view

    inner = context_methods.method_region_seeds

    def index_first(project):
        project.flow.call_words.files_calling("forward")  # (as a class flow question before it would)
        return inner(project)

    project = build(load(NAME), SETTINGS)  # (this small project asks no name before the seeds)
    assert scan_view.scans_made(project)[".forward_context("] == 1

    monkeypatch.setattr(project_module, "method_region_seeds", index_first)
    project = build(load(NAME), SETTINGS)
    assert ".forward_context(" not in scan_view.scans_made(project)
    assert code_findings(load(NAME), "AMP102", SETTINGS)[0] == [AMP102]
