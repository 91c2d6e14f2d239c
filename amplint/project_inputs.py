"""What the project pass reads: Python texts on demand and the YAML settings files under the linted folders."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import List, Optional, Sequence

from amplint.config import Config
from amplint.engine import Settings
from amplint.files import DEFAULT_EXCLUDES, ReadError, read_source
from amplint.project import build

PROJECT_CONFIG_SUFFIXES = (".yaml", ".yml")
MAX_CONFIG_BYTES = 1 << 20


class _LazyTexts(dict):
    """path -> source text, read from disk on first use (the project pass reads only the
    files a region or a framework setting reaches)."""

    def __missing__(self, path: str) -> str:
        if path.endswith(PROJECT_CONFIG_SUFFIXES):
            text = _read_small(path) or ""
        else:
            try:
                text = read_source(path).text
            except ReadError:
                text = ""
        self[path] = text
        return text


def project_entries(paths, files, settings: Settings, config: Config, summaries):
    """path -> the regions other files and framework settings put around its functions."""
    texts = _LazyTexts()
    keys = [f for f in files if f.endswith((".py", ".pyi"))] + _config_files(paths)
    view = _KeyedLazy(keys, texts)
    project = build(view, settings, config, summaries=summaries)
    return {path: project.entries_for(path) for path in keys if project.entries_for(path)}


class _KeyedLazy(Mapping):
    def __init__(self, keys, texts) -> None:
        self._keys = list(keys)
        self._texts = texts

    def __getitem__(self, path: str) -> str:
        if path not in self._keys_set:
            raise KeyError(path)
        return self._texts[path]

    @property
    def _keys_set(self):
        found = self.__dict__.get("_set")
        if found is None:
            found = self.__dict__["_set"] = set(self._keys)
        return found

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _config_files(paths: Sequence[str]) -> List[str]:
    """YAML files under the linted folders (framework settings such as detectron2's
    `SOLVER.AMP.ENABLED` or a LightningCLI `trainer: precision:` live there)."""
    found: List[str] = []
    for root in paths:
        if not os.path.isdir(root):
            continue
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDES)
            found.extend(
                os.path.join(directory, name) for name in sorted(filenames)
                if name.endswith(PROJECT_CONFIG_SUFFIXES)
            )
    return found


def _read_small(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None
