"""A Lightning `trainer: precision:` YAML that names its LightningModule by the name the class is
registered under (threestudio-project/threestudio: `system_type: "dreamfusion-system"` beside
`trainer: precision: 16-mixed`, `@threestudio.register("dreamfusion-system")` on the class) runs
that class, not every LightningModule of the project (framework_scope._registered_runs,
registered_names.py); a base class the file binds through `from .dreamfusion import *` is
followed like an imported one (resolve.base_ref). The project, tests/projects/
strings_threestudio_registry, is our own code shaped like threestudio: Magic123 computes a
binary_cross_entropy too, but only a `precision: 32` config selects it."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
PROJECT = "strings_threestudio_registry"
DREAMFUSION_BCE = ("threestudio/systems/dreamfusion.py", 12, "AMP102")
DREAMFUSION = PROJECT + "/threestudio/systems/dreamfusion.py"
ONLY_EFF = "configs/dreamfusion-sd.yaml"


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def messages(files, code):
    return [d.message for result in lint_project(files, SETTINGS).values() for d in result.diagnostics
            if d.code == code]


def test_yaml_runs_the_system_it_names_by_registered_name():
    # the two 16-mixed YAMLs name dreamfusion-system and efficient-dreamfusion-system; Magic123's
    # only YAML trains in fp32: its binary_cross_entropy never runs under autocast
    files = load(PROJECT)
    assert findings(files) == [DREAMFUSION_BCE]
    (message,) = messages(files, "AMP102")
    assert "; system_type: efficient-dreamfusion-system -> EffDreamFusion in threestudio/systems/" in message
    assert "given to the Trainer of configs/dreamfusion-sd-eff.yaml, registered as 'efficient-dreamfusion-system'" in message
    project = build(files)
    assert not project.unresolved
    assert not project.entries_for(PROJECT + "/threestudio/systems/magic123.py")


def test_clean_twin_is_silent():
    # the hazard fixed in DreamFusion: nothing is left (Magic123 was never under autocast)
    files = load(PROJECT)
    files[DREAMFUSION] = files[DREAMFUSION].replace("F.binary_cross_entropy(", "F.mse_loss(")
    assert "binary_cross_entropy" in files[PROJECT + "/threestudio/systems/magic123.py"]
    assert findings(files) == []


def test_base_through_a_star_import_is_a_lightning_module():
    # only the efficient config is 16-mixed: EffDreamFusion (`from .dreamfusion import *`, then
    # `class EffDreamFusion(DreamFusion)`) inherits DreamFusion.training_step, which still runs
    files = {k: v for k, v in load(PROJECT).items() if not k.endswith(ONLY_EFF)}
    assert findings(files) == [DREAMFUSION_BCE]
    (message,) = messages(files, "AMP102")
    assert "system_type: efficient-dreamfusion-system -> EffDreamFusion" in message
    assert "Lightning runs `DreamFusion.training_step` under autocast" in message


def test_star_import_limited_by_all_is_not_followed():
    # `__all__` of dreamfusion.py leaves DreamFusion out: the star import does not bind it, the
    # efficient config's system is not known to be a LightningModule, and that setting alone
    # stays a maybe-enabled region over every LightningModule (said in --show-regions); the
    # config that names DreamFusion itself is still scoped to it
    files = load(PROJECT)
    files[DREAMFUSION] = files[DREAMFUSION].replace(
        "import threestudio\n", "import threestudio\n\n__all__ = [\"threestudio\"]\n", 1)
    project = build(files)
    assert [where for _, where, _ in project.unresolved] == ["trainer.precision: 16-mixed at configs/dreamfusion-sd-eff.yaml:14"]
    assert ("threestudio/systems/magic123.py", 12, "AMP102") in findings(files)


def test_a_name_registered_twice_names_no_class():
    # Magic123 registered as "dreamfusion-system" too: that name is registered to two classes
    # and names neither, so dreamfusion-sd.yaml's setting is unresolved (the efficient config
    # still names its system exactly)
    files = load(PROJECT)
    path = PROJECT + "/threestudio/systems/magic123.py"
    files[path] = files[path].replace('"magic123-system"', '"dreamfusion-system"')
    project = build(files)
    assert [where for _, where, _ in project.unresolved] == [
        "trainer.precision: 16-mixed at configs/dreamfusion-sd.yaml:21"]
