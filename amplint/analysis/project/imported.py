"""Facts about classes of other files that a file imports, delivered as entries: custom autograd
Functions (function_entries.py, AMP151) and module classes whose forward opens no autocast
(module_entries.py, AMP153). Computed once per project pass, after the regions are known."""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

from amplint.analysis.project.function_entries import function_entries
from amplint.analysis.project.module_entries import module_entries


def imported_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[object, ...]]:
    found: Dict[str, Tuple[object, ...]] = dict(function_entries(project, paths))
    for path, more in module_entries(project, paths).items():
        found[path] = found.get(path, ()) + more
    return found
