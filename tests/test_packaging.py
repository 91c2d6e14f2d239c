"""What a pre-commit environment gets: amplint and its light dependencies, no torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_runtime_dependencies_are_libcst_and_click_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dep.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
             for dep in project["dependencies"]}
    assert names == {"libcst", "click", "tomli"}
    assert any("torch" in dep for dep in project["optional-dependencies"]["runtime"])
    assert project["scripts"]["amplint"] == "amplint.cli.main:main"


def test_a_whole_run_over_the_fixtures_never_imports_torch():
    code = textwrap.dedent("""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith(("torch.", "numpy")):
                    raise ImportError(name)
        sys.meta_path.insert(0, Block())
        from amplint.cli.main import cli
        try:
            cli(["--no-cache", "--select", "ALL", "fixtures"], prog_name="amplint")
        except SystemExit as exc:
            assert exc.code == 1, exc.code
        assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules)
        print("RAN-WITHOUT-TORCH")
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert "RAN-WITHOUT-TORCH" in proc.stdout, proc.stderr[-2000:]
    assert "AMP102" in proc.stdout
