"""The static linter never imports torch, and amplint.runtime explains itself without torch.
(Runs whether or not torch is installed: torch is hidden in a subprocess.)"""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HIDE_TORCH = textwrap.dedent("""
    import sys, importlib.abc
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"No module named {name!r}")
    sys.meta_path.insert(0, Block())
""")


def run(code):
    return subprocess.run([sys.executable, "-c", HIDE_TORCH + textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_amplint_and_cli_import_without_torch():
    proc = run("""
        import amplint, amplint.cli.main
        assert "torch" not in sys.modules
        print("ok")
    """)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr


def test_runtime_import_error_is_one_clear_line():
    proc = run("""
        try:
            import amplint.runtime
        except ImportError as exc:
            print("MSG:" + str(exc))
    """)
    assert "MSG:amplint.runtime needs torch: pip install 'amplint[runtime]'" in proc.stdout, proc.stderr
