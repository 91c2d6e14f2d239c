"""The project pass's result in the cache: its key (the content of every file it may read, the
settings) and the lookup a run makes before it runs the pass. Light: a warm run whose pass is
cached imports none of the pass (amplint.run.project_inputs runs it)."""

from __future__ import annotations

import hashlib
import os
from typing import List, Optional, Sequence

from amplint.analysis.results import Settings
from amplint.analysis.tree_cache import keep_modules
from amplint.workspace.cache import Cache
from amplint.workspace.config import Config
from amplint.workspace.files import DEFAULT_EXCLUDES

PROJECT_CONFIG_SUFFIXES = (".yaml", ".yml")


def pass_files(paths: Sequence[str], files: Sequence[str]) -> List[str]:
    """What the pass may read: the Python files and the YAML settings under the linted folders."""
    return [f for f in files if f.endswith((".py", ".pyi"))] + config_files(paths)


def cached_pass(cache: Optional[Cache], keys: List[str], settings: Settings, config: Config,
                stats=None, notes: Optional[list] = None):
    """(the pass's key, its entries where the cache holds them, else None); the key is None
    without a cache. `stats` and `notes` as project_entries takes them."""
    key = project_key(cache, keys, settings, config) if cache is not None else None
    if key is not None:
        hit = cache.get(key, with_blob=True)
        if hit is not None and isinstance(hit[1], dict):
            if stats is not None:
                stats["project_cached"] = True
            if notes is not None:
                notes.extend(hit[0].get("notes", ()))
            keep_modules(())  # no pass reads the first pass's trees
            return key, hit[1]
    return key, None


def config_files(paths: Sequence[str]) -> List[str]:
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


def project_key(cache: Cache, keys: List[str], settings: Settings, config: Config) -> Optional[str]:
    digest = hashlib.sha256()
    for path in keys:
        digest.update(f"{path}\0".encode())
        digest.update(cache.content_digest(path) or b"\0unreadable")
    described = repr(("project", os.getcwd(), sorted(settings.select), settings.unsafe_fixes,
                      config.path, tuple(config.autocast_modules or ()),
                      getattr(config, "autocast_device", None), getattr(config, "autocast_dtype", None),
                      sorted((k, repr(v)) for k, v in (config.rule_options or {}).items())))
    return cache.key(digest.digest(), described)
