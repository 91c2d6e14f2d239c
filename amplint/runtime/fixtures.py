"""Runnable fixtures: discovery, loading and verification of ``fixtures/`` (the contract is in
fixtures/README.md).

A case ``fixtures/<CODE>/<case>.py`` pairs with ``<case>.fixed.py``; it is *runnable* when both
files define ``amplint_run(device, dtype)`` at module level (checked by parsing, before anything is
imported).  A module may also define ``amplint_dtypes(device) -> [dtype, ...]`` when its code fixes
its own autocast dtype: the other dtypes are then not run, and the result says so.
``fixtures/clean/<name>.py`` cases that define it are run alone: they must stay
silent and match their fp32 reference.  The rule code of a pair is its folder's name.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch

from .verify import EMULATED, PairResult, default_device, default_dtypes, verify

ENTRY = "amplint_run"
DTYPES_ENTRY = "amplint_dtypes"
_CODE = re.compile(r"AMP\d+")


@dataclass
class FixtureCase:
    name: str  # e.g. "AMP101/index_put"
    code: Optional[str]
    before: Optional[Path]  # None for a clean case
    after: Path
    runnable: bool
    why_not: str = ""
    runner: Optional[Path] = None  # fixtures/_run/<CODE>/<case>.py, when the pair has no entry


def defines_entry(path: Path) -> bool:
    """Whether ``path`` defines ``amplint_run`` at module level (parsed, not imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == ENTRY
               for node in tree.body)


RUNNERS = "_run"
SKIPS = "skips.txt"


def _runner_dir(folder: Path) -> Path:
    return folder.parent / RUNNERS


def _skip_reasons(runners: Path) -> Dict[str, str]:
    """``fixtures/_run/skips.txt``: ``CODE/case: why it cannot run`` per line."""
    path = runners / SKIPS
    if not path.is_file():
        return {}
    reasons = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#") and ":" in line:
            name, why = line.split(":", 1)
            reasons[name.strip()] = why.strip()
    return reasons


def discover(root: Path) -> List[FixtureCase]:
    """Every before/after pair (and clean case) under ``root``, in a stable order."""
    root = Path(root)
    cases: List[FixtureCase] = []
    files = [root] if root.is_file() else sorted(root.rglob("*.py"))
    for path in files:
        if (path.name.endswith(".fixed.py") or path.name in ("__init__.py", "conftest.py")
                or RUNNERS in path.parts):
            continue
        folder = path.parent.name
        name = f"{folder}/{path.stem}"
        code = folder if _CODE.fullmatch(folder) else None
        if folder == "clean":
            ok = defines_entry(path)
            why = "" if ok else f"a lint-only clean case (no {ENTRY}(): nothing is fixed, nothing to run)"
            cases.append(FixtureCase(name, None, None, path, ok, why))
            continue
        fixed = path.with_name(path.stem + ".fixed.py")
        if not fixed.exists():
            continue
        missing = [p.name for p in (path, fixed) if not defines_entry(p)]
        runner = _runner_dir(path.parent) / folder / path.name
        if missing and defines_entry(runner):
            cases.append(FixtureCase(name, code, path, fixed, True, runner=runner))
            continue
        why = ""
        if missing and path.read_bytes() == fixed.read_bytes():
            why = "no automatic fix for this case (the after is the before): nothing to verify"
        elif missing:
            why = _skip_reasons(_runner_dir(path.parent)).get(name) or (
                f"no {ENTRY}() in {', '.join(missing)} and no {RUNNERS}/{folder}/{path.name}")
        cases.append(FixtureCase(name, code, path, fixed, not missing, why))
    return cases


class SkipCase(Exception):
    """A case that cannot run in this configuration; its message is the reason."""


def load_module(path: Path):
    """Import ``path`` under a private module name (a fresh module on every call)."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_amplint_fixture_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_entry(path: Path):
    """Import ``path`` and return its ``amplint_run``."""
    return getattr(load_module(path), ENTRY)


def _dtypes_for(modules, device: str, dtypes: Sequence[torch.dtype]):
    allowed = None
    for module in modules:
        fn = getattr(module, DTYPES_ENTRY, None)
        if fn is not None:
            own = list(fn("cpu" if device == EMULATED else device))  # the device it sees
            allowed = own if allowed is None else [d for d in allowed if d in own]
    if allowed is None:
        return list(dtypes), []
    kept = [d for d in dtypes if d in allowed]
    dropped = [str(d).replace("torch.", "") for d in dtypes if d not in allowed]
    notes = [f"{', '.join(dropped)} not run: the fixture's code fixes its own autocast dtype on "
             f"{device} ({DTYPES_ENTRY})"] if dropped else []
    return kept, notes


def _from_runner(runner, path: Path):
    return lambda device, dtype: runner.amplint_run(lambda: load_module(path), device, dtype)


def verify_fixture_pair(case: FixtureCase, device: Optional[str] = None,
                        dtypes: Optional[Sequence[torch.dtype]] = None) -> PairResult:
    """Verify one runnable case (see :func:`amplint.runtime.verify.verify`).

    A runner file ``fixtures/_run/<CODE>/<case>.py`` defines ``amplint_run(load, device, dtype)``
    where ``load()`` imports a fresh copy of the before (or after) file; it may set ``NEEDS =
    "cuda"`` (run on CUDA or under the emulation, skipped on plain CPU, with that reason),
    ``HAZARD = "exact error text"`` and ``REQUIRE_HAZARD = False`` (with a ``NOTES`` entry saying
    why: a hazard that changes no number and raises nothing, e.g. a GradScaler under bfloat16)."""
    device = device or default_device()
    hazard = None
    if case.runner is not None:
        runner = load_module(case.runner)
        needs = getattr(runner, "NEEDS", None)
        if needs and needs != device and not (needs == "cuda" and device == EMULATED):
            raise SkipCase(f"needs {needs}: {getattr(runner, 'WHY', 'the code calls .cuda()')}")
        hazard = getattr(runner, "HAZARD", None)
        modules = [runner]
        before, after = _from_runner(runner, case.before), _from_runner(runner, case.after)
    else:
        modules = [load_module(p) for p in (case.before, case.after) if p is not None]
        before = getattr(modules[0], ENTRY) if case.before is not None else None
        after = getattr(modules[-1], ENTRY)
    dtypes, notes = _dtypes_for(modules, device, dtypes or default_dtypes(device))
    if not dtypes:
        raise SkipCase(notes[0])
    return verify(before, after, code=case.code, hazard=hazard, device=device, dtypes=dtypes,
                  name=case.name, notes=notes + list(getattr(modules[0], "NOTES", ())),
                  require_hazard=getattr(modules[0], "REQUIRE_HAZARD", True))
