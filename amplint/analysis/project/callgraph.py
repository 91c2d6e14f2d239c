"""`amplint --call-graph PATHS`: the points-to resolver's call graph in PyCG's JSON shape.

Modules are named by their path below the directory given (a file given alone is named from its
own directory), `__init__.py` by its package. Keys are every module and function the files define
(module-level code is the module's name, a lambda is `<lambdaN>` in its enclosing scope); values
the project functions each may call. Calls to code outside the files are not listed."""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List, Optional, Tuple

from amplint.analysis.project.pointsto_extract import extract
from amplint.analysis.project.pointsto_solve import Solver

_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", "build", "dist"}


def module_files(paths: Iterable[str]) -> List[Tuple[str, str, bool]]:
    """(path, module name, is a package's __init__) for every Python file under PATHS."""
    out: List[Tuple[str, str, bool]] = []
    for given in paths:
        given = os.path.abspath(given)
        if os.path.isfile(given):
            root, files = os.path.dirname(given), [given]
        else:
            root, files = given, []
            for folder, dirs, names in os.walk(given):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
        for path in files:
            rel = os.path.relpath(path, root)[:-3].split(os.sep)
            package = rel[-1] == "__init__"
            if package:
                rel = rel[:-1]
            if rel:
                out.append((path, ".".join(rel), package))
    return out


def build(paths: Iterable[str], errors: Optional[List[str]] = None, cache=None) -> Solver:
    """The solved resolver over every Python file under PATHS (unparsable files are reported).
    `cache` (an amplint.workspace.cache.Cache): each file's constraints are kept by content, next to the
    per-file lint results and summaries, so a warm run does not parse the files again."""
    paths = list(paths)
    if errors is not None:
        errors.extend("%s: no such file or directory" % p for p in paths if not os.path.exists(p))
    facts = [f for f in (file_facts(p, m, pkg, errors, cache) for p, m, pkg in module_files(paths)) if f]
    return Solver(facts).solve()


def file_facts(path: str, module: str, package: bool, errors: Optional[List[str]] = None,
               cache=None) -> Optional[dict]:
    """One file's constraints (pointsto_extract.extract), from the cache when it has them; None
    (and an error line) for a file that cannot be read as Python."""
    key = cache.file_key(path, repr(("pointsto", module, package))) if cache is not None else None
    if key is not None:
        found = cache.get(key, with_blob=True)
        if found is not None and found[1] is not None:
            return found[1]
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        facts = extract(source, module, package)
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError) as exc:
        if errors is not None:
            errors.append("%s: cannot be read as Python: %s" % (path, exc))
        return None
    if key is not None:
        cache.put(key, {"kind": "pointsto"}, blob=facts)
    return facts


def call_graph(solver: Solver) -> Dict[str, List[str]]:
    graph: Dict[str, List[str]] = {name: [] for name in solver.modules}
    graph.update({name: [] for name in solver.funcs if "@" not in name})
    for caller, callee in solver.edges:
        graph.setdefault(caller, []).append(callee)
    return {k: sorted(set(v)) for k, v in graph.items()}


def main(paths: Iterable[str], cache=None) -> Tuple[str, List[str]]:
    """The JSON text of the call graph, and one error line per file that could not be read
    (`cache`: an amplint.workspace.cache.Cache, given by the caller, where the per-file
    constraints and the graph are kept; None: not cached)."""
    errors: List[str] = []
    paths = list(paths)
    key = None
    if cache is not None:
        # the whole graph too, keyed by every file's content and name: an unchanged tree is not solved again
        keys = [cache.file_key(p, repr(("pointsto", m, k))) for p, m, k in module_files(paths)]
        if None not in keys:
            key = cache.key("\n".join(keys).encode(), repr(("pointsto-graph", [os.path.abspath(p) for p in paths])))
            hit = cache.get(key)
            if hit is not None:
                return hit["text"], hit["errors"]
    graph = call_graph(build(paths, errors, cache))
    text = json.dumps(graph, indent=2, sort_keys=True) + "\n"
    if key is not None:
        cache.put(key, {"text": text, "errors": errors})
    if cache is not None:
        cache.save_index()
    return text, errors
