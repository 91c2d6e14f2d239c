"""flake8 plugin: the same findings through flake8 (`flake8 --select AMP src/`).

Registered under the `flake8.extension` entry point with the prefix `AMP`. The rules enabled
are those amplint itself would run for the file ([tool.amplint] in the nearest
pyproject.toml: select, ignore, extend-select, per-file-ignores); flake8's own `--select`,
`--ignore` and `# noqa` apply on top. Columns follow flake8's convention: the plugin yields
0-based columns and flake8 prints them 1-based, so `flake8` and `amplint` show the same
`path:line:col`. A file is checked in the context of its project, as `amplint FILE` does
(amplint.project_root): regions that other files of the project put around its functions
count, read through amplint's cache (each flake8 process builds the project pass once).
"""

from __future__ import annotations

import functools
import os
from typing import Iterator, List, Tuple, Type

from amplint import __version__


@functools.lru_cache(maxsize=64)
def _config_for(directory: str):
    from amplint.config import find_pyproject, load

    return load(find_pyproject(directory))


@functools.lru_cache(maxsize=8)
def _project_entries(root: str, directory: str) -> dict:
    """normalised absolute path -> the entries of that file, for the project at `root`."""
    from amplint.cache import DEFAULT_DIR, Cache
    from amplint.config import selection
    from amplint.engine import Settings
    from amplint.files import discover
    from amplint.per_file import REPORT_ONLY
    from amplint.project_inputs import project_entries
    from amplint.project_root import shown
    from amplint.result_cache import cached_map
    from amplint.runner import excludes_for, settings_for

    config = _config_for(directory)
    settings = Settings(selection(config))
    files, _ = discover([shown(root)], False, excludes_for(config))
    files = [f for f in files if f.endswith((".py", ".pyi"))]
    if len(files) < 2 and not config.autocast_modules:
        return {}
    cache_dir = os.environ.get("AMPLINT_CACHE_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd(), DEFAULT_DIR)
    items = [(f, settings_for(f, settings, config), REPORT_ONLY, (), True) for f in files]
    first = cached_map(Cache(cache_dir), "lint", items, 1, None)
    summaries = {f: r.summary for f, r in zip(files, first) if r.summary is not False}
    entries = project_entries([shown(root)], files, settings, config, summaries)
    return {os.path.normcase(os.path.abspath(f)): found for f, found in entries.items()}


class AmplintChecker:
    name = "amplint"
    version = __version__

    def __init__(self, tree, filename: str, lines: List[str]) -> None:
        # `tree` is flake8's ast; amplint parses with LibCST itself, but asking for `tree`
        # is what makes flake8 treat this as a whole-file checker.
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[Tuple[int, int, str, Type["AmplintChecker"]]]:
        from amplint.config import selection
        from amplint.engine import Settings, lint_source
        from amplint.runner import settings_for

        path = self.filename if self.filename not in ("-", "stdin") else "stdin"
        directory = os.path.dirname(os.path.abspath(path)) if path != "stdin" else os.getcwd()
        config = _config_for(directory)
        settings = settings_for(path, Settings(selection(config)), config)
        entries = ()
        if path != "stdin":
            from amplint.project_root import project_root

            found = _project_entries(project_root([path]), directory)
            entries = found.get(os.path.normcase(os.path.abspath(path)), ())
        result = lint_source(path, "".join(self.lines), settings, entries=entries)
        for diag in result.diagnostics:
            yield diag.line, diag.column - 1, f"{diag.code} {diag.message}", type(self)
