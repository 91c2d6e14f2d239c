"""The server's settings: `[tool.amplint]` of each project, then the client's
`initializationOptions` on top (the same meaning as the CLI's flags of the same name):

    {"select": ["AMP1"], "extendSelect": ["AMP301"], "ignore": ["AMP105"],
     "unsafeFixes": false, "isolatedFiles": false, "configPath": "pyproject.toml",
     "cacheDir": ".amplint_cache", "noCache": false, "jobs": 2, "debounceMs": 100,
     "eager": true, "logTimings": false}

`eager`: start the workspace's project pass at once (else on the first file opened)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from amplint.workspace.cache import DEFAULT_DIR
from amplint.workspace.config import Config, ConfigError, find_pyproject, load, selection
from amplint.analysis.engine import Settings
from amplint.workspace.project_root import torch_target
from amplint.cli.server.analysis import ProjectState


def _codes(value) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    return [str(part).strip() for part in value if str(part).strip()]


@dataclass
class ServerOptions:
    select: Optional[List[str]] = None
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    unsafe_fixes: Optional[bool] = None
    isolated_files: bool = False
    config_path: Optional[str] = None
    cache_dir: Optional[str] = None
    no_cache: bool = False
    jobs: Optional[int] = None
    debounce: float = 0.1  # seconds
    eager: bool = True
    log_timings: bool = False  # window/logMessage the time of each lint and project pass
    workspace: Optional[str] = None

    @classmethod
    def from_client(cls, given) -> "ServerOptions":
        given = given if isinstance(given, dict) else {}
        # editors nest their settings under the server's name ({"amplint": {...}}) or not
        if isinstance(given.get("amplint"), dict):
            given = given["amplint"]
        jobs = given.get("jobs")
        return cls(
            select=_codes(given.get("select")),
            extend_select=_codes(given.get("extendSelect")) or [],
            ignore=_codes(given.get("ignore")) or [],
            unsafe_fixes=given.get("unsafeFixes") if isinstance(given.get("unsafeFixes"), bool) else None,
            isolated_files=bool(given.get("isolatedFiles", False)),
            config_path=given.get("configPath") or None,
            cache_dir=given.get("cacheDir") or None,
            no_cache=bool(given.get("noCache", False)),
            jobs=int(jobs) if isinstance(jobs, int) and jobs > 0 else None,
            debounce=max(0.0, float(given.get("debounceMs", 100))) / 1000.0,
            eager=bool(given.get("eager", True)),
            log_timings=bool(given.get("logTimings", False)),
        )


def project_for(root: str, options: ServerOptions) -> Tuple[ProjectState, Optional[str]]:
    """The project at `root` with its configuration (an error in it: reported, defaults used)."""
    error = None
    try:
        config = load(options.config_path or find_pyproject(root))
        codes = selection(config, select=options.select,
                          extend_select=options.extend_select, ignore=options.ignore)
    except (ConfigError, ValueError) as exc:
        error = str(exc)
        config = Config()
        codes = selection(config)
    unsafe = config.unsafe_fixes if options.unsafe_fixes is None else options.unsafe_fixes
    # the torch the fixes must work on, found as the CLI finds it (and the same cache keys)
    settings = Settings(codes, unsafe, torch_target([root], config))
    cache_dir: Optional[str] = None
    if not options.no_cache:  # the CLI's default place: the cache is shared with it
        cache_dir = options.cache_dir or os.environ.get("AMPLINT_CACHE_DIR") or os.path.join(
            os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd(),
            DEFAULT_DIR)
    state = ProjectState(root, config, settings, cache_dir, project=not options.isolated_files,
                         jobs=options.jobs)
    return state, error
