"""A class named by a config's dotted-path string and built by a project import helper (issue 26,
amplint/analysis/project/config_targets.py): CompVis/taming-transformers' shape
(tests/projects/config_target_taming), `self.loss = instantiate_from_config(lossconfig)` in
VQModel.__init__, main.py's helper returning `get_obj_from_str(config["target"])(...)` and
`get_obj_from_str` returning `getattr(importlib.import_module(module), cls)`, the YAML giving
`params: lossconfig: target: ...VQWithDiscriminator` under the mapping whose `target:` names
VQModel. Main leaves `self.loss` unresolved and misses the hazard; anything short of every
string naming one project class resolves nothing."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
NAME = "config_target_taming"
LOSS = "taming/modules/losses/vqperceptual.py"
HAZARDS = [(LOSS, 36, "AMP102"), (LOSS, 37, "AMP102")]
FIX = [("F.binary_cross_entropy(torch.sigmoid(logits_real),", "F.binary_cross_entropy_with_logits(logits_real,"),
       ("F.binary_cross_entropy(torch.sigmoid(logits_fake.detach()),", "F.binary_cross_entropy_with_logits(logits_fake.detach(),")]
OTHER_YAML = NAME + "/configs/other.yaml"
OTHER = """model:
  target: taming.models.vqgan.VQModel
  params:
    lossconfig:
      target: %s
"""


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def test_the_yaml_target_under_the_parameter_is_the_class_built():
    files = load(NAME)
    assert findings(files) == HAZARDS
    message = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics][0]
    assert "lossconfig: target: taming.modules.losses.vqperceptual.VQWithDiscriminator at configs/custom_vqgan.yaml:12" in message
    assert findings(load(NAME, FIX)) == []


def test_configs_naming_two_classes_resolve_nothing():
    files = load(NAME)
    files[OTHER_YAML] = OTHER % "taming.modules.losses.DummyLoss"
    assert findings(files) == []
    assert any("2 different classes" in why for _, _, why in build(files).unresolved)
    # the same class named again (through its package's re-export or not): still that class
    files[OTHER_YAML] = OTHER % "taming.modules.losses.vqperceptual.VQWithDiscriminator"
    assert findings(files) == HAZARDS


def test_a_string_outside_the_project_or_a_python_call_resolves_nothing():
    files = load(NAME)
    files[OTHER_YAML] = OTHER % "torch.nn.BCELoss"
    assert findings(files) == []
    # VQModel built by Python code too: the config it passes is out of sight
    files = load(NAME)
    files[NAME + "/sample.py"] = ("from taming.models.vqgan import VQModel\n\n\ndef load(cfg):\n"
                                  "    return VQModel(ddconfig=cfg.dd, lossconfig=cfg.loss, n_embed=16, embed_dim=4)\n")
    assert findings(files) == []


def test_a_helper_that_is_no_import_helper_resolves_nothing():
    # get_obj_from_str answering from a table, not importlib: not followed
    files = load(NAME, [("    return getattr(importlib.import_module(module, package=None), cls)",
                         "    return TABLE[cls]")])
    assert findings(files) == []
    # the instantiator reading another argument than its config's key
    files = load(NAME, [('return get_obj_from_str(config["target"])(', 'return get_obj_from_str(DEFAULT)(')])
    assert findings(files) == []
    # the argument rebound in __init__ before the call
    files = load(NAME, [("        self.loss = instantiate_from_config(lossconfig)",
                         "        lossconfig = {\"target\": \"taming.modules.losses.DummyLoss\"}\n"
                         "        self.loss = instantiate_from_config(lossconfig)")])
    assert findings(files) == []
