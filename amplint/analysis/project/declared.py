"""Declared regions: `[tool.amplint] autocast-modules = ["pkg/models/**"]` puts every top-level
function of the matching files under autocast."""

from __future__ import annotations

import os
import re
from typing import Optional, Sequence

from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.candidates import Candidate
from amplint.analysis.project.summary import top_level_functions


def _glob_regex(glob: str) -> "re.Pattern[str]":
    out = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
        i += 1
    return re.compile("".join(out) + "$")


def declared_matches(path: str, globs: Sequence[str], base: Optional[str] = None) -> Optional[str]:
    """The first of `globs` (relative to `base`, default the working directory) that matches
    `path`: `**` spans folders, `*` stays within one, a glob naming a folder covers all below it,
    a glob without `/` also matches the file name."""
    base = base or os.getcwd()
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(base)).replace(os.sep, "/")
    for glob in globs:
        pattern = glob[2:] if glob.startswith("./") else glob
        pattern = pattern.rstrip("/")
        regex = _glob_regex(pattern)
        if regex.match(relative) or _glob_regex(pattern + "/**").match(relative):
            return glob
        if "/" not in pattern and regex.match(os.path.basename(relative)):
            return glob
    return None


def declared_seeds(project, declared):
    """`declared`: (globs, device, dtype, base folder) or None."""
    if not declared:
        return []
    globs, device, dtype, base = declared
    seeds = []
    for path in project.python:
        glob = declared_matches(path, globs, base)
        if glob is None:
            continue
        summary = project.summary(path)
        if summary is None:
            continue
        desc = f'autocast-modules = ["{glob}"]'
        for key in top_level_functions(summary):
            cite = f"declared to run under autocast by {desc}"
            candidate = Candidate(Enabled.TRUE, device, dtype, desc, cite)
            seeds.append((path, key, candidate, frozenset()))
    return seeds
