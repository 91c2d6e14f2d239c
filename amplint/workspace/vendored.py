"""Copies of a known framework committed inside the project (EVA's two detectron2 forks,
Megatron's package inside a DeepSpeed example): the framework's code, not the project's.

A folder walk that meets one reads it for the project pass (its regions, its classes) but
reports none of its findings: the run says once where the copy is and how to lint or skip it.
A copy is recognised by its layout (amplint.analysis.data.vendored_frameworks: the package
folder with two files every release has); the copy is that package folder, or the whole
checkout around it when a folder above it has a setup.py/setup.cfg/pyproject.toml naming the
framework (its tests and projects come with it). It is the project's own code, and reported,
when the package is a top-level package of a folder given (Megatron-LM's megatron/, gpt-neox's
fork of it), when the checkout naming it is a folder given or above one (transformers' own
repository, with its package under src/), when the run has no file outside it (an unpacked
sdist), when a path given on the command line lies inside it, and for files named explicitly."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.data.vendored_frameworks import DISTRIBUTION_NAMES, FRAMEWORK_LAYOUTS

_METADATA = ("setup.py", "setup.cfg", "pyproject.toml")


@dataclass(frozen=True)
class VendoredCopy:
    root: str  # spelled as the run shows paths (relative to the working directory when inside it)
    framework: str
    files: Tuple[str, ...]  # as discovery spelled them

    def note(self) -> str:
        count = len(self.files)  # the run's own: what it would have reported
        noun = "file" if count == 1 else "files"
        return (f"{self.root}: a copy of {self.framework} inside the project ({count} {noun}), "
                f"read for the project's regions but not reported; `amplint {self.root}` lints it, "
                f"`extend-exclude = [\"{self.root}\"]` skips it, `report-vendored = true` "
                f"reports it with the rest")


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _names(folder: str, package: str) -> bool:
    """Whether the packaging metadata in `folder` names the distribution `package` (or one of
    the names it is distributed under: Megatron-LM's `megatron-core`)."""
    names = "|".join(re.escape(n) for n in (*DISTRIBUTION_NAMES.get(package, ()), package))
    pattern = re.compile(r"\bname\s*=\s*[\"']?(?:" + names + r")(?:[\"'\s]|$)", re.M)
    for name in _METADATA:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                if pattern.search(handle.read()):
                    return True
        except OSError:
            continue
    return False


def _copy_root(folder: str, package: str, tops: Sequence[str]) -> Optional[str]:
    """The copy a framework package folder belongs to: the nearest folder above it, up to the
    folder the run was given, whose packaging metadata names the framework (a whole checkout:
    EVA-02/det, or the framework's own repository with its package under src/), else the package
    folder itself; None when that is the project's own code: a top-level package of a folder
    given, or a checkout at or above one."""
    parent = os.path.dirname(folder)
    if parent in tops:
        return None
    directory = parent
    while True:
        if _names(directory, package):
            return None if any(directory == t or t.startswith(directory + os.sep) for t in tops) \
                else directory
        if directory in tops or os.path.dirname(directory) == directory:
            return folder
        directory = os.path.dirname(directory)


def _copies(keys: Sequence[str], tops: Sequence[str]) -> Dict[str, str]:
    """copy root (absolute, normcased) -> framework, for each framework layout in `keys`."""
    present = set(keys)
    found: Dict[str, str] = {}
    for key in keys:
        for package, layout in FRAMEWORK_LAYOUTS.items():
            tail = os.sep + package + os.sep + os.path.normcase(layout[0].replace("/", os.sep))
            if not key.endswith(tail):
                continue
            folder = key[: len(key) - len(tail) + len(package) + 1]
            others = (os.path.join(folder, os.path.normcase(f.replace("/", os.sep)))
                      for f in layout[1:])
            if all(other in present for other in others):
                root = _copy_root(folder, package, tops)
                if root is not None:
                    found[root] = package
    # a copy inside another (a fork's own vendored code) belongs to the outer one
    return {root: name for root, name in found.items()
            if not any(root.startswith(other + os.sep) for other in found)}


def _shown(root: str) -> str:
    relative = os.path.relpath(root)
    return root if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def vendored_copies(paths: Sequence[str], files: Sequence[str]) -> List[VendoredCopy]:
    """The vendored copies among `files` (what discovery found for `paths`)."""
    given = [_key(p) for p in paths]
    named = {g for g, p in zip(given, paths) if os.path.isfile(p)}
    keys = [_key(f) for f in files]
    copies: List[VendoredCopy] = []
    tops = [g for g, p in zip(given, paths) if os.path.isdir(p)]
    for root, framework in sorted(_copies(keys, tops).items()):
        if any(g == root or g.startswith(root + os.sep) for g in given):
            continue  # the user asked for this copy
        inside = tuple(f for f, k in zip(files, keys)
                       if k.startswith(root + os.sep) and k not in named)
        if inside and any(not k.startswith(root + os.sep) for k in keys):
            copies.append(VendoredCopy(_shown(root), framework, inside))
    return copies


def set_aside(paths: Sequence[str], files: Sequence[str], context: Sequence[str],
              root, force_exclude: bool) -> Tuple[List[str], List[str], List[VendoredCopy]]:
    """(the files to report, those set aside as vendored, a copy per folder that had some).
    With `force_exclude` (pre-commit) files named explicitly count as found under the project
    `root`, so that a staged file in a copy gives what `amplint .` gives."""
    if force_exclude and root:
        copies = vendored_copies([root], list(files) + list(context))
    else:
        copies = vendored_copies(paths, files)
    keys = {f for copy in copies for f in copy.files}
    kept = [f for f in files if f not in keys]
    aside = [f for f in files if f in keys]
    taken = set(aside)
    seen = [VendoredCopy(c.root, c.framework, tuple(f for f in c.files if f in taken))
            for c in copies]
    return kept, aside, [copy for copy in seen if copy.files]
