"""AMP150 through a no-grad helper METHOD (facts/nograd_methods.nograd_params on methods;
project/nograd_entries EntryNoGradArgs): `self.pl_hook.gen_ulb_targets(self.model, x)` where the
method is decorated `@torch.no_grad()` (or holds `with torch.no_grad():`) and runs its `model`
argument, followed by a grad forward of the same model in the same autocast region.

tests/projects/nogradmethod_usb is laid out like microsoft/Semi-supervised-learning (USB):
semilearn/core/{algorithmbase.py, hooks/pseudo_label.py}, semilearn/algorithms/fixmatch/
fixmatch.py, scripts/train.py. USB's hooks take logits; here `PseudoLabelingHook.gen_ulb_targets`
takes the model and runs it under no_grad (the FixMatch reference implementations' shape).
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "nogradmethod_usb"
AMP150 = ("semilearn/algorithms/fixmatch/fixmatch.py", 17, "AMP150")
CALL = "            pseudo_label, mask = self.pl_hook.gen_ulb_targets(self.model, x_ulb_w)\n"
DECO = "    @torch.no_grad()\n    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):\n"
HOOK = "        self.pl_hook = PseudoLabelingHook(p_cutoff)\n"


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP150", SETTINGS)


def test_the_helper_method_of_another_file_is_followed():
    found, results = findings()
    assert found == [AMP150]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150"]
    assert "through `self.pl_hook.gen_ulb_targets` (`PseudoLabelingHook.gen_ulb_targets`, defined at " \
           "semilearn/core/hooks/pseudo_label.py:11), which runs its `model` under no_grad" in message


@pytest.mark.parametrize("edits", [
    ((CALL, CALL.replace("(self.model, x_ulb_w)", "(model=self.model, x_ulb_w=x_ulb_w)")),),
    ((DECO, "    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):\n"),
     ("        logits = model(x_ulb_w)\n", "        with torch.no_grad():\n            logits = model(x_ulb_w)\n")),
])
def test_call_and_definition_forms(edits):
    assert findings(*edits)[0] == [AMP150]


@pytest.mark.parametrize("edits", [
    # the autocast keeps no cache
    (('torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)'),),
    # not no_grad
    ((DECO, "    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):\n"),),
    # it runs another model than its argument
    (("        logits = model(x_ulb_w)\n", "        logits = self.teacher(x_ulb_w)\n"),),
    # it binds the parameter again before the forward
    (("        logits = model(x_ulb_w)\n", "        model = self.teacher\n        logits = model(x_ulb_w)\n"),),
    # the model goes to another slot
    ((CALL, CALL.replace("(self.model, x_ulb_w)", "(x_ulb_w, self.model)")),),
    # the receiver may hold another hook, whose method runs the model with grad
    ((HOOK, "        self.pl_hook = PseudoLabelingHook(p_cutoff) if p_cutoff else SoftHook()\n"),
     ("from semilearn.core.hooks import PseudoLabelingHook\n",
      "from semilearn.core.hooks import PseudoLabelingHook\n\n\nclass SoftHook:\n"
      "    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):\n        return model(x_ulb_w).softmax(-1), 1.0\n")),
])
def test_clean_twins_stay_silent(edits):
    assert findings(*edits)[0] == []


SAME_FILE = (
    "import torch\n"
    "class FixMatch:\n"
    "    @torch.no_grad()\n"
    "    def pseudo_label(self, model, weak):\n"
    "        return model(weak).argmax(-1)\n"
    "    def guess(self, net, weak):\n"
    "        with torch.no_grad():\n"
    "            return net(weak).argmax(-1)\n"
    "    @staticmethod\n"
    "    @torch.no_grad()\n"
    "    def static_label(model, weak):\n"
    "        return model(weak).argmax(-1)\n"
    "    def step(self, model, weak, strong):\n"
    "        with torch.autocast('cuda', dtype=torch.float16):\n"
    "            a = self.pseudo_label(model, weak)\n"
    "            b = self.guess(model, weak=weak)\n"
    "            c = FixMatch.static_label(model, weak)\n"
    "            return model(strong), a, b, c\n"
    "def outside(model, weak, strong):\n"
    "    helper = FixMatch()\n"
    "    with torch.autocast('cuda'):\n"
    "        labels = helper.pseudo_label(model, weak)\n"
    "        return model(strong), labels\n"
)


def test_same_file_methods():
    lines = [d.line for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics if d.code == "AMP150"]
    assert lines == [18, 23]


def test_same_file_twins():
    """A subclass of the file overriding the helper with a grad version: `self.pseudo_label`
    may run either, so nothing; a helper that runs its argument in a nested def (later)."""
    source = (
        "import torch\n"
        "class Base:\n"
        "    @torch.no_grad()\n"
        "    def pseudo_label(self, model, weak):\n"
        "        return model(weak).argmax(-1)\n"
        "    def later(self, model, weak):\n"
        "        @torch.no_grad()\n"
        "        def run():\n"
        "            return model(weak)\n"
        "        return run\n"
        "    def step(self, model, weak, strong):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            a = self.pseudo_label(model, weak)\n"
        "            r = self.later(model, weak)\n"
        "            return model(strong), a, r\n"
        "class WithGrad(Base):\n"
        "    def pseudo_label(self, model, weak):\n"
        "        return model(weak).argmax(-1)\n"
    )
    assert [d for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP150"] == []
    without = source.split("class WithGrad")[0]
    lines = [d.line for d in lint_source("t.py", without, SETTINGS).diagnostics if d.code == "AMP150"]
    assert lines == [15]


def test_warm_run_follows_an_edit_of_the_hook_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "semilearn/core/hooks/pseudo_label.py",
                                    ((DECO, "    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):\n"),),
                                    "AMP150", [AMP150])
