"""The README's runnable examples, run as a newcomer would (issue 33): every fenced block marked
`<!-- readme-example -->` (optionally `<!-- readme-example: exit=N -->`) is run in a temporary
folder holding a copy of `fixtures/`, and a `<!-- readme-output -->` console block after it must
appear, line by line and in order, in what the example printed.

- A `bash` block runs as one script. `pip install ...` and `python -m pytest ...` lines are left
  out (they install amplint and run this very suite). A command line whose comment says
  `exits N` has its own exit status checked; `exit=N` checks the status of the last line.
- A `python` block runs in a fresh interpreter; one that imports torch is skipped without torch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- readme-example(?::\s*exit=(\d+))? -->")
OUTPUT_MARK = "<!-- readme-output -->"
SKIPPED = re.compile(r"^\s*(pip install|python -m pip install|python -m pytest)\b")
EXITS = re.compile(r"#.*\bexits (\d+)")


@dataclass
class Example:
    line: int
    language: str
    code: str
    exit: int
    output: Optional[List[str]]

    def __str__(self):
        return f"README.md:{self.line} ({self.language})"


def _fenced(lines: List[str], start: int):
    """The fenced block that opens at or after `start`: (language, body, index after the fence)."""
    i = start
    while not lines[i].startswith("```"):
        i += 1
    language, body = lines[i][3:].strip(), []
    i += 1
    while not lines[i].startswith("```"):
        body.append(lines[i])
        i += 1
    return language, body, i + 1


def readme_examples(text: str) -> List[Example]:
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines):
        mark = MARK.fullmatch(line.strip())
        if not mark:
            continue
        language, body, after = _fenced(lines, number + 1)
        output = None
        # the documented output: the next marked console block, before any other fence
        for j in range(after, min(after + 6, len(lines))):
            if lines[j].startswith("```"):
                break
            if lines[j].strip() == OUTPUT_MARK:
                output = [o for o in _fenced(lines, j + 1)[1] if o.strip()]
                break
        found.append(Example(number + 1, language, "\n".join(body) + "\n",
                             int(mark.group(1) or 0), output))
    return found


EXAMPLES = readme_examples((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_marks_its_examples():
    kinds = sorted(e.language for e in EXAMPLES)
    assert kinds.count("bash") >= 2 and "python" in kinds, EXAMPLES


def test_example_parser_finds_marks_outputs_and_exit_codes():
    text = ("<!-- readme-example: exit=1 -->\n```bash\namplint x  # exits 1\n```\n\nprints\n\n"
            "<!-- readme-output -->\n```console\nFound 1 finding.\n\n```\n"
            "```bash\nnot marked\n```\n")
    [example] = readme_examples(text)
    assert (example.language, example.exit, example.output) == ("bash", 1, ["Found 1 finding."])


def _bash_script(code: str) -> str:
    """The block with the install/test lines left out and each `exits N` line's status echoed."""
    out = []
    for number, line in enumerate(code.splitlines()):
        if SKIPPED.match(line):
            continue
        expected = EXITS.search(line)
        if expected:
            command = line[: line.index("#")].rstrip()
            line = (f'{command}; status=$?; echo "@@exit {number} $status {expected.group(1)}"; '
                    '(exit $status)')
        out.append(line)
    return "\n".join(out) + "\n"


def _environment():
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.pop("AMPLINT_CACHE_DIR", None)  # the example's own folder holds its cache, as for a user
    return env


def _run(example: Example, folder: Path) -> subprocess.CompletedProcess:
    if example.language == "bash":
        assert shutil.which("amplint", path=_environment()["PATH"]), "amplint is not installed"
        command = ["bash", "-c", _bash_script(example.code)]
    else:
        command = [sys.executable, "-c", example.code]
    return subprocess.run(command, cwd=folder, env=_environment(), capture_output=True,
                          text=True, timeout=300)


def _in_order(expected: List[str], printed: List[str]) -> Optional[str]:
    """The first documented line that does not appear (in order) in what was printed."""
    position = 0
    for line in expected:
        try:
            position = printed.index(line.rstrip(), position) + 1
        except ValueError:
            return line
    return None


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_readme_example_runs_as_documented(example, tmp_path):
    if example.language == "python" and re.search(r"^\s*import torch", example.code, re.M):
        pytest.importorskip("torch", reason="pip install torch==2.13.0")
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    proc = _run(example, tmp_path)
    printed = [line.rstrip() for line in proc.stdout.splitlines()]
    for line in printed:
        if line.startswith("@@exit "):
            _, number, status, expected = line.split()
            command = example.code.splitlines()[int(number)]
            assert status == expected, f"{example}: `{command}` exited {status}\n{proc.stderr}"
    assert proc.returncode == example.exit, f"{example}: exit {proc.returncode}\n{proc.stderr}"
    if example.output is not None:
        shown = [line for line in printed if not line.startswith("@@exit ")]
        missing = _in_order(example.output, shown)
        assert missing is None, f"{example}: not printed: {missing!r}\n---\n{proc.stdout}"
