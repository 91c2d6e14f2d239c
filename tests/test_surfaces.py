"""One list of findings for every surface: on one multi-file project with cross-file hazards,
`amplint .`, each file named alone, every output format, --statistics, --write-baseline,
--add-noqa, --fix counts and flake8 agree (real binaries, in subprocesses)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

LOSSES = """\
import torch
import torch.nn.functional as F


def focal(logits, target):
    probs = torch.sigmoid(logits)
    return F.binary_cross_entropy(probs, target)


def masked(scores, mask):
    return scores.masked_fill(mask, -1e9)
"""
TRAIN = """\
import torch

from losses import focal, masked


def step(model, x, y, mask, opt, scaler):
    with torch.cuda.amp.autocast():
        h = model(x)
        loss = focal(h, y) + masked(h, mask).mean()
        scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
"""
EVAL = """\
import torch

from losses import focal


def evaluate(model, x, y):
    with torch.autocast("cuda"):
        out = model(x.half())
        return focal(out, y)
"""
# one fix (the import) resolves two findings
OLD_API = """\
from torch.cuda.amp import GradScaler, autocast


def run(model, x, use_amp):
    scaler = GradScaler(enabled=use_amp)
    with autocast(use_amp):
        return model(x), scaler
"""


def cli(*args, cwd, tool="amplint"):
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=cwd, capture_output=True,
                          text=True)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    (tmp_path / "losses.py").write_text(LOSSES)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "eval.py").write_text(EVAL)
    (tmp_path / "clean.py").write_text("def f(x):\n    return x\n")
    return tmp_path


def findings(cwd, *paths):
    result = cli("--output-format", "json", *paths, cwd=cwd)
    return sorted((d["filename"], d["line"], d["code"]) for d in json.loads(result.stdout))


def test_every_surface_reports_the_same_findings(project):
    reference = findings(project, ".")
    codes = Counter(code for _, _, code in reference)
    assert codes == Counter({"AMP102": 1, "AMP110": 1, "AMP103": 1, "AMP104": 1, "AMP120": 1,
                             "AMP130": 1}), reference
    # each file alone, and any split of the files, gives the same list
    alone = sorted(f for name in ("losses.py", "train.py", "eval.py", "clean.py")
                   for f in findings(project, name))
    assert alone == reference
    assert findings(project, "losses.py", "eval.py") == [f for f in reference if f[0] != "train.py"]
    # the machine formats
    sarif = json.loads(cli("--output-format", "sarif", ".", cwd=project).stdout)
    assert sorted((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"])
                  for r in sarif["runs"][0]["results"]) == reference
    junit = ET.fromstring(cli("--output-format", "junit", ".", cwd=project).stdout)
    assert sorted((case.get("file"), int(case.get("line")), case.find("failure").get("type"))
                  for case in junit.iter("testcase")) == reference
    github = cli("--output-format", "github", ".", cwd=project).stdout.splitlines()
    assert sorted((re.search(r"file=([^,]+)", line).group(1),
                   int(re.search(r",line=(\d+)", line).group(1)),
                   re.search(r"\((AMP\d+)\)", line).group(1)) for line in github) == reference
    text = cli(".", cwd=project).stdout
    assert f"Found {len(reference)} findings." in text
    stats = json.loads(cli("--statistics", "--output-format", "json", ".", cwd=project).stdout)
    assert {row["code"]: row["count"] for row in stats} == dict(codes)
    # flake8
    through = cli("--select", "AMP", ".", cwd=project, tool="flake8").stdout.splitlines()
    assert sorted((line.split(":")[0].removeprefix("./"), int(line.split(":")[1]),
                   line.split()[1]) for line in through) == reference
    one = cli("--select", "AMP", "losses.py", cwd=project, tool="flake8").stdout
    assert one.count("losses.py:") == 2, one
    # a baseline records them all, and then nothing is new
    wrote = cli("--write-baseline", "base.json", ".", cwd=project)
    assert f"Wrote {len(reference)} findings" in wrote.stderr
    assert findings(project, "--baseline", "base.json", ".") == []
    assert findings(project, "--baseline", "base.json", "losses.py") == []


def test_add_noqa_covers_cross_file_findings(project):
    count = len(findings(project, "."))
    added = cli("--add-noqa", ".", cwd=project)
    assert f"Added {count} noqa directives." in added.stderr
    assert "# noqa: AMP102" in (project / "losses.py").read_text()
    assert cli(".", cwd=project).returncode == 0
    assert "Added 0 noqa directives." in cli("--add-noqa", ".", cwd=project).stderr
    # and for a file named alone
    (project / "losses.py").write_text(LOSSES)
    assert "Added 2 noqa directives." in cli("--add-noqa", "losses.py", cwd=project).stderr
    assert cli(".", cwd=project).returncode == 0


def test_fix_counts_findings_and_show_fixes_lists_every_fix(project):
    (project / "old.py").write_text(OLD_API)
    reference = findings(project, ".")
    fixed = cli("--fix", "--unsafe-fixes", "--show-fixes", ".", cwd=project)
    out = fixed.stdout
    assert fixed.returncode == 0, out + fixed.stderr
    # every finding `amplint .` reported is fixed; the import rewrite fixes two AMP130 at once
    assert f"Found {len(reference)} findings ({len(reference)} fixed, 0 remaining)." in out
    applied = re.findall(r"^    line \d+: (AMP\d+) \(", out, re.M)
    assert len(applied) == len(reference) - 1
    assert f"Applied {len(applied)} fixes:" in out
    assert Counter(applied)["AMP130"] == 2  # train.py's and old.py's one import fix
    assert cli(".", cwd=project).returncode == 0
