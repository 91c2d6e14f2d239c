"""Verify amplint's fixes on the user's own code: ``verify --entry smoke.py::step``.

The entry is a function ``step(device, dtype)`` in the user's project that builds the model and a
batch from a fixed seed, runs one training step (its autocast regions opened with the arguments
it is given, e.g. ``torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not
None)``) and returns the loss/outputs/gradients to compare (the fixture contract).

The project (default: the entry file's folder) is copied twice into a temporary directory:
*before* is the sources as they are, *after* is what ``amplint --fix`` makes of them (the real
CLI, in a subprocess).  The entry is then imported from each copy -- every module imported from
a copy is dropped from ``sys.modules`` between runs, so the two never share code -- and
:func:`amplint.runtime.verify.verify` makes its three checks, the hazard being any of the codes
amplint fixed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .verify import PairResult, default_device, verify

_IGNORE = shutil.ignore_patterns(".git", ".venv", "venv", "__pycache__", ".amplint_cache",
                                 "*.pyc", ".mypy_cache", ".pytest_cache", "node_modules")
CPU_NOTE = (
    "CPU cannot show: errors that only CUDA autocast raises (e.g. BCE 'unsafe to autocast'), "
    "GradScaler('cuda') behaviour, and CUDA's float16/bfloat16 kernels; run with --device cuda "
    "on a GPU for those"
)


def parse_entry(entry: str) -> Tuple[Path, str]:
    """``path/to/smoke.py::step`` -> (path, "step")."""
    path, sep, func = entry.rpartition("::")
    if not sep or not path or not func.isidentifier():
        raise ValueError(f"--entry must be path/to/file.py::function, not {entry!r}")
    return Path(path), func


def amplint_fix(root: Path, extra_args: Sequence[str] = ()) -> List[dict]:
    """Lint ``root`` (JSON findings), then ``amplint --fix`` it in place; return the findings."""
    base = [sys.executable, "-m", "amplint", "--no-cache", *extra_args]
    found = subprocess.run([*base, "--exit-zero", "--output-format", "json", "."],
                           capture_output=True, text=True, cwd=root)
    try:
        findings = json.loads(found.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"amplint did not report JSON: {found.stderr.strip()}") from exc
    fixed = subprocess.run([*base, "--fix", "--exit-zero", "."], capture_output=True,
                           text=True, cwd=root)
    if fixed.returncode not in (0, 1):
        raise RuntimeError(f"amplint --fix failed: {fixed.stderr.strip() or fixed.stdout.strip()}")
    return findings


@contextlib.contextmanager
def _imports_from(root: Path, drop: Sequence[Path]):
    """``root`` first on sys.path; modules loaded from any of ``drop`` are forgotten around it."""

    def purge():
        prefixes = tuple(str(p.resolve()) + os.sep for p in drop)
        for name, module in list(sys.modules.items()):
            filename = getattr(module, "__file__", None) or ""
            if filename and os.path.abspath(filename).startswith(prefixes):
                del sys.modules[name]

    purge()
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(root))
        purge()
        importlib.invalidate_caches()


def entry_runner(root: Path, relpath: Path, func: str, drop: Sequence[Path]):
    """A runner ``fn(device, dtype)`` calling ``func`` of ``root/relpath`` imported afresh."""

    def run(device, dtype):
        with _imports_from(root, drop):
            path = root / relpath
            spec = importlib.util.spec_from_file_location(f"_amplint_entry_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return getattr(module, func)(device, dtype)

    return run


@dataclass
class EntryResult:
    entry: str
    findings: List[dict]
    changed: List[str]
    result: Optional[PairResult]
    notes: List[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.result.status if self.result is not None else "SKIP"  # nothing was fixed

    def summary(self) -> str:
        lines = [f"entry {self.entry}: amplint found {len(self.findings)} finding(s), "
                 f"--fix changed {len(self.changed)} file(s)"]
        for f in self.findings:
            fix = (f.get("fix") or {}).get("applicability", "no fix")
            lines.append(f"  {f['code']} {f['filename']}:{f['line']} ({fix})")
        for path in self.changed:
            lines.append(f"  changed: {path}")
        lines.extend(f"  note: {n}" for n in self.notes)
        if self.result is not None:
            lines.append(self.result.summary())
        return "\n".join(lines)


def verify_entry(entry: str, *, project: Optional[Path] = None, device: Optional[str] = None,
                 dtypes: Optional[Sequence[torch.dtype]] = None,
                 lint_args: Sequence[str] = (),
                 fixer: Optional[Callable[[Path], List[dict]]] = None) -> EntryResult:
    """Run ``entry`` against the project's sources and against ``amplint --fix`` of them.

    ``lint_args`` go to both amplint runs (e.g. ``["--unsafe-fixes"]``); ``fixer(root)`` replaces
    :func:`amplint_fix` (it must fix ``root`` in place and return the findings)."""
    path, func = parse_entry(entry)
    path = path.resolve()
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such entry file")
    project = (project or path.parent).resolve()
    relpath = path.relative_to(project)
    device = device or default_device()
    tmp = Path(tempfile.mkdtemp(prefix="amplint-entry-"))
    try:
        before_root, after_root = tmp / "before", tmp / "after"
        shutil.copytree(project, before_root, ignore=_IGNORE)
        shutil.copytree(project, after_root, ignore=_IGNORE)
        findings = (fixer or (lambda r: amplint_fix(r, lint_args)))(after_root)
        changed = sorted(
            str(p.relative_to(after_root)) for p in after_root.rglob("*.py")
            if (before_root / p.relative_to(after_root)).read_bytes() != p.read_bytes())
        notes = [CPU_NOTE] if device == "cpu" else []
        if not changed:
            return EntryResult(entry, findings, changed, None,
                               notes + ["nothing to verify: amplint --fix changed no file"])
        codes = tuple(dict.fromkeys(f["code"] for f in findings if f.get("fix")))
        drop = [before_root, after_root]
        result = verify(entry_runner(before_root, relpath, func, drop),
                        entry_runner(after_root, relpath, func, drop),
                        code=codes or None, device=device, dtypes=dtypes, name=entry)
        return EntryResult(entry, findings, changed, result, notes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
