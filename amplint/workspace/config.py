"""`[tool.amplint]` in the nearest pyproject.toml, then command-line overrides."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from amplint.analysis.data.torch_versions import TorchTarget
from amplint.analysis.rules import all_rules, rule_codes
from amplint.workspace.torch_requirement import target_from_setting

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "unsafe-fixes", "exclude", "extend-exclude",
    "per-file-ignores", "respect-gitignore", "options", "value-flow", "open-world",
    "autocast-modules", "autocast-device", "autocast-dtype", "target-torch", "report-vendored",
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
    exclude: Optional[List[str]] = None  # None: the default excludes; a list replaces them
    extend_exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    respect_gitignore: bool = True
    # findings in a known framework's copy inside the project (amplint.workspace.vendored) are
    # reported with the rest rather than summed up in one note per copy
    report_vendored: bool = False
    # the points-to resolver answers the calls the class flow cannot (amplint.analysis.project.pointsto_reach);
    # off by default: it adds 10-20 % to a cold run of a large tree
    value_flow: bool = False
    # a region's call on a parameter no call site binds: a MAYBE over the <= 3 project classes that fit
    # (amplint.analysis.project.openworld)
    open_world: bool = False
    # [tool.amplint.options.AMP110] key = value, checked against the rule's `options`
    rule_options: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    # Declared regions: code under these globs runs under autocast (see amplint.analysis.project).
    autocast_modules: List[str] = field(default_factory=list)
    autocast_device: str = "cuda"
    autocast_dtype: str = "float16"
    # `target-torch`; None: read from the project's requirement on torch (amplint.workspace.torch_requirement)
    target_torch: Optional[TorchTarget] = None


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above `start` that has a [tool.amplint] table (one
    without it, such as a sub-package's, is passed over, as Ruff does); None when none has."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_table(path: str) -> bool:
    """Cheap test for a [tool.amplint] table; an unreadable or invalid file counts as having
    one, so that loading it reports the problem instead of silently skipping it."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return True
    tool = data.get("tool")
    return isinstance(tool, dict) and "amplint" in tool


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
    if "exclude" in table:
        config.exclude = _strings(table, "exclude", path)
    config.extend_exclude = _strings(table, "extend-exclude", path)
    config.unsafe_fixes = _bool(table, "unsafe-fixes", False, path)
    config.respect_gitignore = _bool(table, "respect-gitignore", True, path)
    config.report_vendored = _bool(table, "report-vendored", False, path)
    config.value_flow = _bool(table, "value-flow", False, path)
    config.open_world = _bool(table, "open-world", False, path)
    config.rule_options = _rule_options(table.get("options", {}), path)
    config.autocast_modules = _strings(table, "autocast-modules", path)
    device = table.get("autocast-device", "cuda")
    if device not in ("cuda", "cpu"):
        raise ConfigError(f"{path}: `autocast-device` must be \"cuda\" or \"cpu\"")
    dtype = table.get("autocast-dtype", "float16")
    if dtype not in ("float16", "bfloat16"):
        raise ConfigError(f"{path}: `autocast-dtype` must be \"float16\" or \"bfloat16\"")
    config.autocast_device, config.autocast_dtype = device, dtype
    if "target-torch" in table:
        try:
            config.target_torch = target_from_setting(
                table["target-torch"], f"target-torch in {os.path.basename(path)}")
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: `per-file-ignores` must be a table of glob = [codes]")
    for glob, codes in pfi.items():
        config.per_file_ignores[glob] = _codes({glob: codes}, glob, path)
    return config


def _bool(table: dict, key: str, default: bool, path: str) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: `{key}` must be true or false")
    return value


def _rule_options(options: Any, path: str) -> Dict[str, Dict[str, Any]]:
    """`[tool.amplint.options.CODE]` tables: each key must be one of the rule's `options`
    (a mapping of option name to default), with a value of the default's type."""
    if not isinstance(options, dict):
        raise ConfigError(f"{path}: `options` must be a table of [tool.amplint.options.CODE]")
    rules = all_rules()
    chosen: Dict[str, Dict[str, Any]] = {}
    for code, values in options.items():
        rule = rules.get(code.upper())
        if rule is None:
            raise ConfigError(f"{path}: unknown rule code `{code}` in [tool.amplint.options]")
        known = dict(getattr(rule, "options", {}) or {})
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: [tool.amplint.options.{code}] must be a table")
        for key, value in values.items():
            if key not in known:
                have = ", ".join(f"`{k}`" for k in sorted(known)) or "none"
                raise ConfigError(
                    f"{path}: unknown option `{key}` for {rule.code} in "
                    f"[tool.amplint.options.{code}] (its options: {have})"
                )
            default = known[key]
            if default is not None and not _same_type(value, default):
                raise ConfigError(
                    f"{path}: option `{key}` of {rule.code} must be "
                    f"{type(default).__name__}, not {type(value).__name__}"
                )
        chosen[rule.code] = {**known, **values}
    return chosen


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    return isinstance(value, type(default))


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
        matched = [c for c in rule_codes() if selector == "ALL" or c.startswith(selector)]
        if not matched:
            raise ValueError(f"unknown rule code or prefix `{raw.strip()}`")
        codes.update(matched)
    return frozenset(codes)


def selection(config: Config, select=None, extend_select=(), ignore=()) -> FrozenSet[str]:
    """The enabled codes: defaults (or `select`), plus `extend-select`, minus `ignore`.
    `select`, `extend_select` and `ignore` are the command line's. As in Ruff, a `select` given
    there replaces the configured selection (its select, extend-select and ignore); without
    it, the command line's extend-select and ignore apply after the configured selection
    (so `--extend-select` can enable a code the config ignores)."""
    if select is not None:
        base = set(expand(select)) | expand(list(extend_select))
        return frozenset(base - expand(list(ignore)))
    chosen_select = config.select
    if chosen_select is None:
        base = {code for code, default in rule_codes().items() if default}
    else:
        base = set(expand(chosen_select))
    base |= expand(list(config.extend_select))
    base -= expand(list(config.ignore))
    base |= expand(list(extend_select))  # the command line is the later layer
    base -= expand(list(ignore))
    return frozenset(base)
