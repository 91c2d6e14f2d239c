"""`[tool.amplint]` in the nearest pyproject.toml, then command-line overrides."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from amplint.rules import all_rules

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "unsafe-fixes", "exclude", "extend-exclude",
    "per-file-ignores",
}


class ConfigError(Exception):
    """Bad configuration: the message names the file and the key."""


@dataclass
class Config:
    path: Optional[str] = None
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    exclude: List[str] = field(default_factory=list)
    extend_exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)


def find_pyproject(start: str) -> Optional[str]:
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load(path: Optional[str]) -> Config:
    if path is None:
        return Config()
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("amplint")
    if table is None:
        return Config(path=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.amplint] must be a table")
    for key in table:
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{path}: unknown key `{key}` in [tool.amplint]")
    config = Config(path=path)
    if "select" in table:
        config.select = _codes(table, "select", path)
    config.ignore = _codes(table, "ignore", path)
    config.extend_select = _codes(table, "extend-select", path)
    config.exclude = _strings(table, "exclude", path)
    config.extend_exclude = _strings(table, "extend-exclude", path)
    unsafe = table.get("unsafe-fixes", False)
    if not isinstance(unsafe, bool):
        raise ConfigError(f"{path}: `unsafe-fixes` must be true or false")
    config.unsafe_fixes = unsafe
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: `per-file-ignores` must be a table of glob = [codes]")
    for glob, codes in pfi.items():
        config.per_file_ignores[glob] = _codes({glob: codes}, glob, path)
    return config


def _strings(table: dict, key: str, path: str) -> List[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return value


def _codes(table: dict, key: str, path: str) -> List[str]:
    values = _strings(table, key, path)
    for value in values:
        try:
            expand([value])
        except ValueError as exc:
            raise ConfigError(f"{path}: `{key}`: {exc}") from None
    return values


def expand(selectors: Iterable[str]) -> FrozenSet[str]:
    """Codes matched by selectors: full codes, prefixes (`AMP12`), or `ALL`."""
    codes = set()
    for raw in selectors:
        selector = raw.strip().upper()
        if not selector:
            continue
        matched = [c for c in all_rules() if selector == "ALL" or c.startswith(selector)]
        if not matched:
            raise ValueError(f"unknown rule code or prefix `{raw.strip()}`")
        codes.update(matched)
    return frozenset(codes)


def selection(config: Config, select=None, extend_select=(), ignore=()) -> FrozenSet[str]:
    """The enabled codes: defaults (or `select`), plus `extend-select`, minus `ignore`."""
    chosen_select = select if select is not None else config.select
    if chosen_select is None:
        base = {code for code, rule in all_rules().items() if rule.default}
    else:
        base = set(expand(chosen_select))
    base |= expand(list(config.extend_select) + list(extend_select))
    base -= expand(list(config.ignore) + list(ignore))
    return frozenset(base)
