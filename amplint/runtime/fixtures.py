"""Runnable fixtures: discovery, loading and verification of ``fixtures/`` (the contract is in
fixtures/README.md).

A case ``fixtures/<CODE>/<case>.py`` pairs with ``<case>.fixed.py``; it is *runnable* when both
files define ``amplint_run(device, dtype)`` at module level (checked by parsing, before anything is
imported).  ``fixtures/clean/<name>.py`` cases that define it are run alone: they must stay
silent and match their fp32 reference.  The rule code of a pair is its folder's name.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

import torch

from .verify import PairResult, verify

ENTRY = "amplint_run"
_CODE = re.compile(r"AMP\d+")


@dataclass
class FixtureCase:
    name: str  # e.g. "AMP101/index_put"
    code: Optional[str]
    before: Optional[Path]  # None for a clean case
    after: Path
    runnable: bool
    why_not: str = ""


def defines_entry(path: Path) -> bool:
    """Whether ``path`` defines ``amplint_run`` at module level (parsed, not imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == ENTRY
               for node in tree.body)


def discover(root: Path) -> List[FixtureCase]:
    """Every before/after pair (and clean case) under ``root``, in a stable order."""
    root = Path(root)
    cases: List[FixtureCase] = []
    files = [root] if root.is_file() else sorted(root.rglob("*.py"))
    for path in files:
        if path.name.endswith(".fixed.py") or path.name in ("__init__.py", "conftest.py"):
            continue
        folder = path.parent.name
        name = f"{folder}/{path.stem}"
        code = folder if _CODE.fullmatch(folder) else None
        if folder == "clean":
            ok = defines_entry(path)
            cases.append(FixtureCase(name, None, None, path, ok, "" if ok else f"no {ENTRY}()"))
            continue
        fixed = path.with_name(path.stem + ".fixed.py")
        if not fixed.exists():
            continue
        missing = [p.name for p in (path, fixed) if not defines_entry(p)]
        why = f"no {ENTRY}() in {', '.join(missing)}" if missing else ""
        cases.append(FixtureCase(name, code, path, fixed, not missing, why))
    return cases


def load_entry(path: Path):
    """Import ``path`` under a private module name and return its ``amplint_run``."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_amplint_fixture_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, ENTRY)


def verify_fixture_pair(case: FixtureCase, device: Optional[str] = None,
                        dtypes: Optional[Sequence[torch.dtype]] = None) -> PairResult:
    """Verify one runnable case (see :func:`amplint.runtime.verify.verify`)."""
    before = load_entry(case.before) if case.before is not None else None
    after = load_entry(case.after)
    return verify(before, after, code=case.code, device=device, dtypes=dtypes, name=case.name)
