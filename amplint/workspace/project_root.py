"""The project a file given on the command line belongs to, and that project's other files.

`amplint losses.py` (and pre-commit, which passes only the staged files) lints losses.py in the
context of its project: the regions come from the whole project, the findings only for the
files given. The project root is the folder of the nearest pyproject.toml with [tool.amplint],
else the git work tree, else the common parent of the paths given (unless that is the file
system's root, the home folder or the temporary folder: then the files are linted alone)."""

from __future__ import annotations

import os
import tempfile
from typing import List, Optional, Sequence

from amplint.workspace.config import find_pyproject
from amplint.analysis.data.torch_versions import TorchTarget
from amplint.workspace.files import Excludes, discover


def _start(paths: Sequence[str]) -> str:
    dirs = [
        os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))
        for p in paths
    ]
    return os.path.commonpath(dirs) if dirs else os.getcwd()


def _git_work_tree(start: str) -> Optional[str]:
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):  # a folder, or a file in a worktree
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def project_root(paths: Sequence[str]) -> str:
    """The root folder (absolute) of the project that holds `paths`."""
    start = _start(paths)
    pyproject = find_pyproject(start)
    if pyproject is not None:
        return os.path.dirname(os.path.abspath(pyproject))
    return _git_work_tree(start) or start


def project_root_in(paths: Sequence[str], workspace: Optional[str]) -> str:
    """`project_root`, for an editor whose workspace folder holds `paths`: with no project
    marker (a pyproject.toml with [tool.amplint], a .git) between them and the workspace, the
    project is the workspace, as `amplint .` run there sees it, rather than the file's folder."""
    root = project_root(paths)
    if not workspace:
        return root
    top = os.path.realpath(workspace)
    marked = find_pyproject(_start(paths)) is not None or _git_work_tree(_start(paths)) is not None
    if marked or root == top or os.path.commonpath([root, top]) != top:
        return root
    return top


def _too_broad(root: str) -> bool:
    """A folder that holds many unrelated things (the file system's root, the home folder,
    the temporary folder): with no project marker above a file there, the file is linted
    alone rather than with everything beside it."""
    broad = {os.path.abspath(os.sep), os.path.abspath(os.path.expanduser("~")),
             os.path.abspath(tempfile.gettempdir())}
    return os.path.abspath(root) in broad


def shown(root: str) -> str:
    """The root as the paths found under it should read: relative to the working directory
    when inside it (`a.py`, not `/tmp/x/a.py`), else absolute."""
    relative = os.path.relpath(root)
    return root if relative.startswith(os.pardir) else relative


def context_files(paths: Sequence[str], files: Sequence[str], excludes: Excludes):
    """(root, the project's other Python files), for a run given at least one file explicitly;
    (None, []) when every path is a folder (a folder is linted as given) or the project is
    what was given already. Files already in `files` keep their spelling."""
    if not any(os.path.isfile(p) for p in paths):
        return None, []
    root = project_root(paths)
    if _too_broad(root):
        return None, []
    found, _ = discover([shown(root)], False, excludes)
    given = {os.path.normcase(os.path.abspath(f)) for f in files}
    extra: List[str] = [
        f for f in found
        if f.endswith((".py", ".pyi")) and os.path.normcase(os.path.abspath(f)) not in given
    ]
    return shown(root), extra


def torch_target(paths: Sequence[str], config, override: Optional[TorchTarget] = None) -> TorchTarget:
    """The torch the fixes must work on: `override` (--target-torch), else the config's
    `target-torch`, else the lowest the project's requirements allow (read under the config's
    folder, else the project root), else the newest."""
    from amplint.workspace.torch_requirement import detect

    chosen = override or config.target_torch
    if chosen is not None:
        return chosen
    root = os.path.dirname(os.path.abspath(config.path)) if config.path else project_root(paths)
    return TorchTarget() if _too_broad(root) else detect(root)
