"""The torch a project targets: `target-torch` (config or `--target-torch`), else the lowest
version the project's own requirement on torch allows, else the newest.

Read statically from the project root: pyproject.toml (`[project] dependencies` and
`optional-dependencies`, Poetry's `[tool.poetry.dependencies]`), setup.cfg, setup.py (string
literals, parsed with `ast`, never run), requirements*.txt (also anywhere under requirements/,
and the files they include with `-r`) and
environment.yml / environment.yaml (conda's `pytorch`, or `torch` under pip). Where several
requirements give a lower bound, the lowest one wins: each names a torch the project says it
runs on, and a fix must work on all of them."""

from __future__ import annotations

import ast
import glob
import os
import re
import sys
from typing import Iterable, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from amplint.analysis.data.torch_versions import NEWEST, OLDEST, TorchTarget, Version

_VERSION = re.compile(
    r"^v?(\d+)(?:\.(\d+|\*)(?:\.(?:\d+|\*))*)?(?:(?:a|b|rc|\.?post|\.?dev|\+)[\w.]*)?$")
_REQUIREMENT = re.compile(
    r"^\s*(?P<name>py)?torch(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~^]|\(|$).*)$", re.IGNORECASE)


def parse_version(text: str) -> Optional[Version]:
    """"1.8", "1.8.1", "2", "v2.4.0", "1.13.1+cu117" -> (major, minor); None if not a version."""
    match = _VERSION.match(text.strip())
    if not match:
        return None
    minor = match.group(2)
    return int(match.group(1)), int(minor) if minor and minor != "*" else 0


def target_from_setting(value: object, where: str) -> TorchTarget:
    """A `target-torch` value; ValueError with a one-line reason when it is not a version."""
    version = parse_version(value) if isinstance(value, str) else None
    if version is None or not OLDEST <= version:
        raise ValueError(f'`target-torch` must be a torch version such as "1.8" or "2.4", '
                         f"not {value!r}")
    return TorchTarget(min(version, NEWEST), where)


def lower_bound(spec: str) -> Optional[Version]:
    """The lowest version a PEP 440 (or conda, or Poetry) specifier allows; None when it has
    no lower bound (`torch`, `torch<2`)."""
    spec = spec.split(";", 1)[0].split("#", 1)[0].strip().strip("()")
    bounds: List[Version] = []
    for clause in spec.split(","):
        clause = clause.strip()
        if not clause or clause.startswith(("<", "!")):  # no lower bound
            continue
        match = re.match(r"^(?:===|==|>=|~=|>|=|\^|~)?\s*(\S+)$", clause)
        version = parse_version(match.group(1)) if match else None
        if version is not None:
            bounds.append(version)
    return max(bounds) if bounds else None


def _specs_in_lines(lines: Iterable[str]) -> List[str]:
    out = []
    for line in lines:
        line = line.strip().lstrip("-").strip().strip("'\",")
        match = _REQUIREMENT.match(line)
        if match and match.group("spec") and not line.lower().startswith(("torchvision",)):
            out.append(match.group("spec"))
    return out


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _pyproject(path: str) -> List[str]:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    strings: List[str] = [d for d in project.get("dependencies", []) if isinstance(d, str)]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        for values in optional.values():
            strings += [d for d in values if isinstance(d, str)] if isinstance(values, list) else []
    specs = _specs_in_lines(strings)
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    for table in ("dependencies", "dev-dependencies"):
        value = poetry.get(table, {}).get("torch") if isinstance(poetry.get(table), dict) else None
        if isinstance(value, dict):
            value = value.get("version")
        if isinstance(value, str):
            specs.append(value)
    return specs


def _setup_py(path: str) -> List[str]:
    text = _read(path)
    if text is None:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return _specs_in_lines(strings)


def _lines(path: str) -> List[str]:
    text = _read(path)
    return _specs_in_lines(text.splitlines()) if text is not None else []


def _sources(root: str) -> List[Tuple[str, List[str]]]:
    found: List[Tuple[str, List[str]]] = []
    pyproject = os.path.join(root, "pyproject.toml")
    if os.path.isfile(pyproject):
        found.append(("pyproject.toml", _pyproject(pyproject)))
    for name, reader in (("setup.cfg", _lines), ("setup.py", _setup_py)):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            found.append((name, reader(path)))
    patterns = ("requirements*.txt", os.path.join("requirements", "**", "*.txt"),
                "environment.yml", "environment.yaml")
    paths: List[str] = []
    for pattern in patterns:
        paths += sorted(glob.glob(os.path.join(root, pattern), recursive=True))
    seen = set()
    while paths:  # `-r other.txt` includes are read too (Lightning's requirements.txt)
        path = os.path.abspath(paths.pop(0))
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        found.append((os.path.relpath(path, root).replace(os.sep, "/"), _lines(path)))
        paths += _includes(path, root)
    return found


def _includes(path: str, root: str) -> List[str]:
    """The files a requirements file includes with `-r`/`--requirement`, inside `root`."""
    text = _read(path) or ""
    out = []
    for line in text.splitlines():
        match = re.match(r"^\s*(?:-r|--requirement)[\s=]+(\S+)", line)
        if match:
            target = os.path.abspath(os.path.join(os.path.dirname(path), match.group(1)))
            if target.startswith(os.path.abspath(root) + os.sep):
                out.append(target)
    return out


def detect(root: Optional[str]) -> TorchTarget:
    """The target read from the requirements under `root`; the newest when none bounds torch."""
    if not root or not os.path.isdir(root):
        return TorchTarget()
    best: Optional[Tuple[Version, str]] = None
    for name, specs in _sources(root):
        for spec in specs:
            bound = lower_bound(spec)
            if bound is not None and (best is None or bound < best[0]):
                best = (bound, name)
    if best is None:
        return TorchTarget()
    return TorchTarget(min(max(best[0], OLDEST), NEWEST), best[1])


def resolve(setting: Optional[TorchTarget], root: Optional[str]) -> TorchTarget:
    return setting if setting is not None else detect(root)
