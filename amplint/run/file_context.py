"""The regions other files of its project put around one file's functions, for a file linted
outside a run: the flake8 plugin's files and `amplint - --stdin-filename PATH`.

The project pass runs over the project's Python files (amplint.workspace.project_root) through the
cache, once per process and project."""

from __future__ import annotations

import functools
import os
from typing import Tuple

from amplint.workspace.cache import DEFAULT_DIR, Cache
from amplint.workspace.config import Config, find_pyproject, load, selection
from amplint.analysis.engine import Settings
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.workspace.files import discover
from amplint.run.per_file import REPORT_ONLY
from amplint.run.project_inputs import project_entries
from amplint.workspace.project_root import _too_broad, project_root, shown
from amplint.run.phase_one import plan_first_pass
from amplint.run.result_cache import cached_map
from amplint.run.runner import excludes_for, settings_for


def entries_for(path: str, config: Config, cache_dir: "str | None" = "") -> Tuple[EntryRegion, ...]:
    """The entries of `path` in its project. `cache_dir`: "" for the default place, None for
    no cache."""
    if cache_dir == "":
        cache_dir = os.environ.get("AMPLINT_CACHE_DIR") or os.path.join(
            os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd(),
            DEFAULT_DIR)
    root = project_root([path])
    if _too_broad(root):  # no project above the file (a script in /tmp or ~): it is linted alone
        return ()
    found = _project_entries(root, config.path, selection(config), cache_dir)
    return found.get(os.path.normcase(os.path.abspath(path)), ())


@functools.lru_cache(maxsize=8)
def _project_entries(root: str, config_path, codes, cache_dir) -> dict:
    """normalised absolute path -> entries, for the project at `root`."""
    config = load(config_path) if config_path else load(find_pyproject(root))
    settings = Settings(codes)
    files, _ = discover([shown(root)], False, excludes_for(config))
    files = [f for f in files if f.endswith((".py", ".pyi"))]
    if len(files) < 2 and not config.autocast_modules:
        return {}
    items = [(f, settings_for(f, settings, config), REPORT_ONLY, (), True) for f in files]
    cache = Cache(cache_dir) if cache_dir else None
    # lint only the files the project pass reads a lint of (amplint.run.first_pass)
    plan = plan_first_pass(cache, items, defer=True)
    for i, result in zip(plan.asked, cached_map(cache, "lint", [plan.item(items[i]) for i in plan.asked],
                                                1, None)):
        plan.results[i] = result
    summaries, scalers = plan.inputs_when_read(files)
    entries = project_entries([shown(root)], files, settings, config, summaries, cache, 1,
                              scalers=scalers)
    return {os.path.normcase(os.path.abspath(f)): found for f, found in entries.items()}
