"""A region opened through a context-manager CLASS (facts/context_functions.entered_regions,
project/context_openers.py): `with Cls(...):` runs its body under what `Cls.__enter__` enters
(`self._autocast.__enter__()` of an autocast bound in `__init__` or `__enter__`,
`stack.enter_context(torch.autocast(...))`), in the class's own file or in another.

tests/projects/ctxclass_d2 is laid out like facebookresearch/detectron2 (detectron2/engine/
train_loop.py SimpleTrainer / AMPTrainer.run_step, detectron2/modeling, detectron2/utils,
tools/train_net.py). detectron2's AMPTrainer writes `with autocast(dtype=self.precision):`
itself; here the autocast is factored into detectron2/utils/amp.py's `AutocastContext`. The
region reaches modeling/mask_loss.py's `F.binary_cross_entropy` on probabilities (AMP102).
"""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.regions import Enabled

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "ctxclass_d2"
AMP102 = ("detectron2/modeling/mask_loss.py", 7, "AMP102")
IMPORT = "from ..utils.amp import AutocastContext\n"
WITH = "        with AutocastContext(self.precision):\n"
BACKWARD = ("            losses = mask_rcnn_loss(pred_mask_logits, gt_masks)\n        self.optimizer.zero_grad()\n"
            "        self.grad_scaler.scale(losses).backward()\n",
            "            losses = mask_rcnn_loss(pred_mask_logits, gt_masks)\n            self.optimizer.zero_grad()\n"
            "            self.grad_scaler.scale(losses).backward()\n")
AMP104 = ("detectron2/engine/train_loop.py", 41, "AMP104")
BOUND = '        self._autocast = torch.autocast(device_type, dtype=precision)\n'


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def message_of(results, code):
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == code]
    return message


def test_the_region_reaches_the_loss_of_another_file():
    found, results = findings("AMP102")
    assert found == [AMP102]
    message = message_of(results, "AMP102")
    assert "AutocastContext() at detectron2/engine/train_loop.py:37" in message
    assert "`AutocastContext()` of detectron2/utils/amp.py:4 enters the autocast at " \
           "detectron2/utils/amp.py:8)" in message


def test_the_calling_file_sees_the_region_itself():
    assert findings("AMP104", BACKWARD)[0] == [AMP104]


@pytest.mark.parametrize("imported, written", [
    ("from detectron2.utils.amp import AutocastContext\n", "AutocastContext"),
    ("from ..utils import amp\n", "amp.AutocastContext"),
    ("from ..utils.amp import AutocastContext as Amp\n", "Amp"),
])
def test_import_forms(imported, written):
    edits = ((IMPORT, imported), (WITH, WITH.replace("AutocastContext(", f"{written}(")))
    assert findings("AMP102", *edits)[0] == [AMP102]
    assert findings("AMP104", BACKWARD, *edits)[0] == [AMP104]


def test_entered_under_an_if_is_maybe_enabled():
    edits = (("        self._autocast.__enter__()\n",
              "        if is_amp_enabled(self.precision):\n            self._autocast.__enter__()\n"),
             ("        self._autocast = torch", "        self.precision = precision\n        self._autocast = torch"))
    found, results = findings("AMP102", *edits)
    assert found == [AMP102]
    assert "on some paths" in message_of(results, "AMP102")


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("F.binary_cross_entropy(mask_probs, ", "F.binary_cross_entropy_with_logits("
                                                                       "pred_mask_logits, "))[0] == []


@pytest.mark.parametrize("edits", [
    # the class enters a disabled autocast
    ((BOUND, BOUND.replace("dtype=precision)", "dtype=precision, enabled=False)")),),
    # `__enter__` enters nothing
    (("        self._autocast.__enter__()\n", "        pass\n"),),
    # no `__exit__`: not a context manager
    (("    def __exit__(self, exc_type, exc, tb):\n        return self._autocast.__exit__(exc_type, exc, tb)\n", ""),),
    # another class of that name in the calling file
    ((IMPORT, "class AutocastContext:\n    def __init__(self, precision):\n        pass\n"
              "    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return None\n"),),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
    assert findings("AMP104", BACKWARD, *edits)[0] == []


SAME_FILE = (
    "import contextlib\n"
    "import torch\n"
    "class Fixed:\n"
    "    def __enter__(self):\n"
    "        self.ctx = torch.autocast('cuda', dtype=torch.bfloat16)\n"
    "        self.ctx.__enter__()\n"
    "    def __exit__(self, *exc):\n"
    "        self.ctx.__exit__(*exc)\n"
    "class Off:\n"
    "    def __enter__(self):\n"
    "        self.ctx = torch.autocast('cuda', enabled=False)\n"
    "        self.ctx.__enter__()\n"
    "    def __exit__(self, *exc):\n"
    "        self.ctx.__exit__(*exc)\n"
    "class Stack:\n"
    "    def __init__(self, use_amp):\n"
    "        self.use_amp = use_amp\n"
    "        self.stack = contextlib.ExitStack()\n"
    "    def __enter__(self):\n"
    "        if self.use_amp:\n"
    "            self.stack.enter_context(torch.autocast('cuda'))\n"
    "        return self\n"
    "    def __exit__(self, *exc):\n"
    "        return self.stack.__exit__(*exc)\n"
    "class NoExit:\n"
    "    def __enter__(self):\n"
    "        self.c = torch.autocast('cuda')\n"
    "        self.c.__enter__()\n"
    "def step(model, x):\n"
    "    with Fixed():\n"
    "        model(x).mean().backward()\n"
    "    with Off():\n"
    "        model(x).mean().backward()\n"
    "    with Stack(True):\n"
    "        model(x).mean().backward()\n"
    "    with NoExit():\n"
    "        model(x).mean().backward()\n"
    "def by_param(model, x, Fixed):\n"
    "    with Fixed():\n"
    "        model(x).mean().backward()\n"
)


def test_same_file_classes():
    """Without the project pass: `Fixed` and `Off` both bind `self.ctx` (each class reads its
    own assignments: enabled vs disabled), `Stack` enters under an `if` (maybe), `NoExit` has
    no `__exit__`, and a parameter named `Fixed` is not the class."""
    module = cst.parse_module(SAME_FILE)
    facts = FileFacts(module)
    got = [(module.code_for_node(w.items[0].item), r.enabled)
           for w, _, r in facts.regions.explicit_regions() if r.opener is not None]
    assert got == [("Fixed()", Enabled.TRUE), ("Off()", Enabled.FALSE), ("Stack(True)", Enabled.MAYBE)]
    lines = [d.line for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics if d.code == "AMP104"]
    assert lines == [31, 35]
    assert all(d.fix is None for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics)


def test_warm_run_follows_an_edit_of_the_class_only(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "detectron2/utils/amp.py", (("        self._autocast.__enter__()\n", "        pass\n"),),
        "AMP102", [AMP102])
