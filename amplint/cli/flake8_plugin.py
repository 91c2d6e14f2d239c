"""flake8 plugin: the same findings through flake8 (`flake8 --select AMP src/`).

Registered under the `flake8.extension` entry point with the prefix `AMP`. The rules enabled
are those amplint itself would run for the file ([tool.amplint] in the nearest
pyproject.toml: select, ignore, extend-select, per-file-ignores); flake8's own `--select`,
`--ignore` and `# noqa` apply on top. Columns follow flake8's convention: the plugin yields
0-based columns and flake8 prints them 1-based, so `flake8` and `amplint` show the same
`path:line:col`. A file is checked in the context of its project, as `amplint FILE` does
(amplint.workspace.project_root): regions that other files of the project put around its functions
count, read through amplint's cache (each flake8 process builds the project pass once).
"""

from __future__ import annotations

import functools
import os
from typing import Iterator, List, Tuple, Type

from amplint import __version__


@functools.lru_cache(maxsize=64)
def _config_for(directory: str):
    from amplint.workspace.config import find_pyproject, load

    return load(find_pyproject(directory))


class AmplintChecker:
    name = "amplint"
    version = __version__

    def __init__(self, tree, filename: str, lines: List[str]) -> None:
        # `tree` is flake8's ast; amplint parses with LibCST itself, but asking for `tree`
        # is what makes flake8 treat this as a whole-file checker.
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[Tuple[int, int, str, Type["AmplintChecker"]]]:
        from amplint.workspace.config import selection
        from amplint.analysis.engine import Settings, lint_source
        from amplint.run.runner import settings_for

        path = self.filename if self.filename not in ("-", "stdin") else "stdin"
        directory = os.path.dirname(os.path.abspath(path)) if path != "stdin" else os.getcwd()
        config = _config_for(directory)
        from amplint.workspace.project_root import torch_target

        target = torch_target([path if path != "stdin" else directory], config)
        settings = settings_for(path, Settings(selection(config), torch=target), config)
        entries = ()
        if path != "stdin":
            from amplint.run.file_context import entries_for

            entries = entries_for(path, config)
        result = lint_source(path, "".join(self.lines), settings, entries=entries)
        for diag in result.diagnostics:
            yield diag.line, diag.column - 1, f"{diag.code} {diag.message}", type(self)
