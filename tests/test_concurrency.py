"""Two `amplint --fix` processes on one tree at once, as pre-commit may run them (issue 7):
every file ends up untouched or correctly fixed (by one of the two), never half-written, never
a mix, and no temporary file is left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules import all_rules

TEMPLATES = [
    # AMP121 (safe) and AMP103 (unsafe): the two runs below fix different things.
    "import torch\n"
    "scaler = torch.amp.GradScaler('cuda')\n"
    "def train_{i}(model, loader, opt):\n"
    "    for x, y in loader:\n"
    "        x = x.cuda().half()\n"
    "        with torch.autocast('cuda'):\n"
    "            loss = model(x, y) * {i}\n"
    "        scaler.scale(loss).backward()\n"
    "        scaler.step(opt)\n",
    # AMP104 and AMP102 (safe)
    "import torch\nimport torch.nn.functional as F\n"
    "def step_{i}(model, x, y, opt):\n"
    "    with torch.autocast('cuda'):\n"
    "        p = torch.sigmoid(model(x))\n"
    "        loss = F.binary_cross_entropy(p, y) + {i}\n"
    "        loss.backward()\n"
    "    opt.step()\n",
    # clean
    "import torch\n"
    "def ok_{i}(model, x):\n"
    "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
    "        return model(x) + {i}\n",
]
FILES = 60
PROGRESS = re.compile(r"amplint: \d+/\d+ files, .*\d+ s$")  # amplint/run/progress.py's log line


def expected_versions(text):
    versions = {text}
    for unsafe in (False, True):
        settings = Settings(Settings.default().select, unsafe_fixes=unsafe)
        fixed = lint_source("f.py", text, settings, fix=True).fixed_source
        if fixed is not None:
            versions.add(fixed)
    return versions


@pytest.mark.parametrize("second", [("--fix",), ("--fix", "--unsafe-fixes")])
def test_two_fix_processes_on_one_tree(tmp_path, second):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    tree = tmp_path / "src"
    originals = {}
    for i in range(FILES):
        folder = tree / f"pkg{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        text = TEMPLATES[i % len(TEMPLATES)].format(i=i)
        (folder / f"mod{i}.py").write_text(text)
        originals[f"pkg{i % 4}/mod{i}.py"] = text
    allowed = {name: expected_versions(text) for name, text in originals.items()}
    assert sum(len(v) > 1 for v in allowed.values()) >= FILES * 2 // 3 - 1  # most are fixable

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    commands = [[sys.executable, "-m", "amplint", "--fix", "src"],
                [sys.executable, "-m", "amplint", *second, "src"]]
    procs = [subprocess.Popen(c, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode in (0, 1), err
        assert "Traceback" not in err and "internal error" not in err, err
        for line in err.splitlines():  # the only complaint allowed: the other one got there first
            if PROGRESS.match(line):
                continue  # a loaded machine: the run passed 10 s and said it is still working
            assert "changed on disk since it was read" in line or "cannot re-read" in line, line

    changed = 0
    for name, text in originals.items():
        now = (tree / name).read_text()
        assert now in allowed[name], f"{name} is neither untouched nor correctly fixed:\n{now}"
        compile(now, name, "exec")
        changed += now != text
    assert changed >= FILES // 2  # the runs did fix things
    leftovers = [os.path.join(d, f) for d, _, files in os.walk(tree) for f in files
                 if f.startswith(".amplint-")]
    assert not leftovers

    # And the tree is now stable: one more run of the later kind changes nothing fixable.
    final = subprocess.run([sys.executable, "-m", "amplint", *second, "src"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in final.stderr
    again = {name: (tree / name).read_text() for name in originals}
    rerun = subprocess.run([sys.executable, "-m", "amplint", *second, "src"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
    assert {name: (tree / name).read_text() for name in originals} == again, rerun.stderr
