"""A project linted from inside its package folder (`amplint basicsr/`): the folder holding every
file is itself a package (it has an `__init__.py`), so its modules import each other as
`basicsr.losses`, not `losses`. Laid out like XPixelGroup/BasicSR (basicsr/losses/basic_loss.py,
basicsr/models/*_model.py building its criteria with `from basicsr.losses import ...`).
Found on the fresh-layout benchmark (benchmarks/fresh_layouts.py, basicsr_decorator): before, every
absolute import of the package's own modules was "outside the linted files"."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings

SETTINGS = Settings.default()
BCE = "F.binary_cross_entropy(torch.sigmoid(pred), target)"


def findings(results):
    return project_findings(results)


def test_package_folder_resolves_its_own_absolute_imports():
    files = load("pkg_root_basicsr")
    assert all(path.startswith("pkg_root_basicsr/basicsr/") for path in files)
    assert findings(lint_project(files, SETTINGS)) == [("basicsr/losses/basic_loss.py", 21, "AMP102")]
    assert build(files, SETTINGS).package_prefix() == ["basicsr"]


def test_clean_twin_is_silent():
    files = load("pkg_root_basicsr", [(BCE, "F.binary_cross_entropy_with_logits(pred, target)")])
    assert findings(lint_project(files, SETTINGS)) == []


def test_no_package_marker_a_namespace_package():
    # without basicsr/__init__.py the folder is not a regular package but may be a namespace
    # package of its parent (PEP 420), as the folders inside a project are taken to be: no prefix,
    # but `basicsr.losses` names basicsr/losses/ exactly, as `losses` does (names nothing else
    # answers only)
    files = {k: v for k, v in load("pkg_root_basicsr").items() if not k.endswith("basicsr/__init__.py")}
    assert build(files, SETTINGS).package_prefix() == []
    assert findings(lint_project(files, SETTINGS)) == [("basicsr/losses/basic_loss.py", 21, "AMP102")]


def test_project_above_the_package_is_unchanged():
    # the usual layout (the repository's root above the package): no prefix, the same finding
    files = load("pkg_root_basicsr")
    files["pkg_root_basicsr/setup.py"] = "from setuptools import setup\nsetup(name='basicsr')\n"
    assert build(files, SETTINGS).package_prefix() == []
    assert findings(lint_project(files, SETTINGS)) == [("basicsr/losses/basic_loss.py", 21, "AMP102")]
