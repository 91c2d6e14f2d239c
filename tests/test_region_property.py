"""A region opened through a PROPERTY that returns the autocast (facts/context_properties.py,
project/context_attrs.py): `with self.<prop>:` enters what the property returns, on the class
of the file itself or a base class of another file.

tests/projects/prop_speechbrain is laid out like speechbrain/speechbrain (speechbrain/core.py
Brain with its `training_ctx` property and fit_batch, speechbrain/nnet/losses.py bce_loss,
recipes/VoxCeleb/VAD/train.py with a VADBrain(Brain) subclass that overrides fit_batch). The
recipe file names no region word (it is outside the first pass); its `with self.training_ctx:`
reaches losses.py's `F.binary_cross_entropy` (AMP102, twice); a backward moved inside the `with`
is AMP104 in the recipe.
"""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.regions import Enabled

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "prop_speechbrain"
AMP102 = [("speechbrain/nnet/losses.py", 8, "AMP102"), ("speechbrain/nnet/losses.py", 9, "AMP102")]
RECIPE = "recipes/VoxCeleb/VAD/train.py"
BACKWARD_INSIDE = ("            loss = bce_loss(predictions, batch.targets.to(self.device), length=batch.lens)\n"
                   "        self.scaler.scale(loss).backward()\n",
                   "            loss = bce_loss(predictions, batch.targets.to(self.device), length=batch.lens)\n"
                   "            self.scaler.scale(loss).backward()\n")
PROPERTY = ("    @property\n    def training_ctx(self):\n"
            "        return torch.autocast(self.device, dtype=torch.float16, enabled=self.precision == \"fp16\")\n")


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def test_the_subclass_region_reaches_the_loss_of_another_file():
    found, results = findings("AMP102")
    assert found == AMP102
    message = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"][0]
    assert "under `self.training_ctx` at recipes/VoxCeleb/VAD/train.py:19, the property " \
           "`Brain.training_ctx` at speechbrain/core.py:19" in message


def test_the_subclass_file_sees_the_region_itself():
    assert findings("AMP104", BACKWARD_INSIDE)[0] == [(RECIPE, 22, "AMP104")]


@pytest.mark.parametrize("edits", [
    # the subclass overrides the property (its own file reads it: a null context)
    (("class VADBrain(Brain):\n",
      "class VADBrain(Brain):\n    @property\n    def training_ctx(self):\n        return contextlib.nullcontext()\n\n"),
     ("import sys\n", "import contextlib\nimport sys\n")),
    # some file stores the attribute: which value the `with` enters is not known
    (("    brain.fit(", "    brain.training_ctx = None\n    brain.fit("),),
    # the property returns a disabled autocast
    ((PROPERTY, PROPERTY.replace("enabled=self.precision == \"fp16\"", "enabled=False")),),
    # a plain method, not a property: `with self.training_ctx:` would enter a bound method
    ((PROPERTY, PROPERTY.replace("    @property\n", "")),),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


SAME_FILE = (
    "import contextlib\n"
    "import torch\n"
    "from base import Remote\n"
    "class Base:\n"
    "    @property\n"
    "    def ctx(self):\n"
    "        return torch.autocast('cuda', dtype=torch.bfloat16)\n"
    "    @property\n"
    "    def maybe(self):\n"
    "        return torch.autocast('cuda', enabled=self.amp)\n"
    "    def step(self, model, x):\n"
    "        with self.ctx:\n"
    "            model(x).mean().backward()\n"
    "class Child(Base):\n"
    "    def step2(self, model, x):\n"
    "        with self.ctx:\n"
    "            model(x).mean().backward()\n"
    "        with self.maybe:\n"
    "            model(x).mean().backward()\n"
    "class FP32(Base):\n"
    "    @property\n"
    "    def ctx(self):\n"
    "        return contextlib.nullcontext()\n"
    "class Stored(Base):\n"
    "    def __init__(self):\n"
    "        self.ctx = contextlib.nullcontext()\n"
    "    def step3(self, model, x):\n"
    "        with self.ctx:\n"
    "            model(x).mean().backward()\n"
    "class Mixed(Remote, Base):\n"
    "    def step4(self, model, x):\n"
    "        with self.ctx:\n"
    "            model(x).mean().backward()\n"
)


def test_same_file_properties():
    """Base.step: maybe (the FP32 subclass overrides `ctx` with a null context); Child: enabled,
    bfloat16, through its base; maybe for an `enabled=` not a literal; nothing where the class
    stores the attribute itself, or a base of another file comes first."""
    module = cst.parse_module(SAME_FILE)
    facts = FileFacts(module)
    found = [(module.code_for_node(w.items[0].item), r.enabled, r.dtype)
             for w, _, r in facts.regions.explicit_regions()]
    assert found == [("self.ctx", Enabled.MAYBE, "bfloat16"), ("self.ctx", Enabled.TRUE, "bfloat16"),
                     ("self.maybe", Enabled.MAYBE, "float16")]
