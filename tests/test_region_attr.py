"""A region opened through an attribute a base class of another file stores
(project/context_attrs.py): `with self.autocast:` in a recipe's `fit_batch`, where
`self.autocast = torch.autocast(...)` is stored by the base class's `__init__`.

tests/projects/attrctx_speechbrain is laid out like speechbrain/speechbrain (speechbrain/core.py
`Brain`, speechbrain/nnet/losses.py, recipes/VoxCeleb/SpeakerRec/train_speaker_verif.py
`SpeakerBrain(sb.Brain)`), a fork whose `Brain` keeps its autocast context in an attribute. The
region reaches `bce_loss`'s `F.binary_cross_entropy` on probabilities (AMP102) in a third file.
Clean twins: the loss computed after the block, a disabled autocast, the attribute stored again
by the subclass or from outside the hierarchy, a base outside the project."""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "attrctx_speechbrain"
RECIPE = "recipes/VoxCeleb/SpeakerRec/train_speaker_verif.py"
AMP102 = ("speechbrain/nnet/losses.py", 6, "AMP102")
STORE = '        self.autocast = torch.autocast("cuda", dtype=torch.float16)\n'
LOSS = '            loss = bce_loss(torch.sigmoid(logits), batch["same"].to(self.device))\n'


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def test_the_region_the_base_class_stores_reaches_the_loss_of_a_third_file():
    found, results = findings("AMP102")
    assert found == [AMP102]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]
    assert f"under `self.autocast` at {RECIPE}:18, stored by `Brain.__init__` at speechbrain/core.py:12" in message


def test_the_recipe_file_sees_the_region_too():
    moved = ("        return loss.detach().item()\n",
             "        torch.nn.functional.binary_cross_entropy(torch.sigmoid(logits), loss)\n"
             "        return loss.detach().item()\n")
    inside = ('            loss = bce_loss(', '            probs = torch.nn.functional.binary_cross_entropy('
              'torch.sigmoid(logits), batch["same"])\n            loss = bce_loss(')
    found, _ = findings("AMP102", moved, inside)
    assert (RECIPE, 20, "AMP102") in found and (RECIPE, 26, "AMP102") not in found


def test_the_loss_after_the_block_is_clean():
    moved = LOSS.replace("            loss", "        loss").replace("(logits)", "(logits.float())")
    after = (LOSS + "        self.scaler", moved + "        self.scaler")
    assert findings("AMP102", after)[0] == []


def test_a_disabled_autocast_opens_no_region():
    assert findings("AMP102", (STORE, STORE.replace("dtype=torch.float16", "enabled=False")))[0] == []


def test_the_subclass_storing_the_attribute_itself_decides():
    own = ("class SpeakerBrain(sb.Brain):\n",
           "class SpeakerBrain(sb.Brain):\n    def on_fit_start(self):\n"
           "        self.autocast = contextlib.nullcontext()\n\n")
    imports = ("import sys\n", "import contextlib\nimport sys\n")
    assert findings("AMP102", own, imports)[0] == []


def test_a_store_from_outside_the_hierarchy_is_not_followed():
    outside = ("    brain.fit(", "    brain.autocast = contextlib.nullcontext()\n    brain.fit(")
    assert findings("AMP102", outside, ("import sys\n", "import contextlib\nimport sys\n"))[0] == []


def test_a_base_outside_the_project_may_store_it_first():
    assert findings("AMP102", ("class SpeakerBrain(sb.Brain):", "class SpeakerBrain(LoggingMixin, sb.Brain):"),
                    ("import sys\n", "import sys\nfrom hyperpyyaml import LoggingMixin\n"))[0] == []
