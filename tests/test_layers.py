"""The import graph of amplint/ is a house you can see at a glance: no import circle between
modules, and no import running up the layers. The packages of amplint/ are the layers:

    cli -> run -> workspace -> report -> analysis
                                         (project -> engine -> rules -> facts -> diagnostics -> low)

Every import counts, also the ones written inside functions. The runtime companion
(amplint.runtime) is a separate leaf: it may import the static code, never the reverse, and
the static code never imports torch."""

from __future__ import annotations

import ast
import os
from typing import Dict, Iterable, List, Optional, Set, Tuple

import pytest

import amplint

PACKAGE_DIR = os.path.dirname(os.path.abspath(amplint.__file__))

# The packages of amplint/, bottom to top: each may import its own layer and the ones below it.
# Read top down, it is the pipeline: cli -> run -> workspace -> report -> analysis. Inside
# analysis the same order holds at a finer grain: project -> engine -> rules -> facts ->
# diagnostics -> low helpers and data tables.
LAYERS = (
    "base",
    "analysis/low", "analysis/diagnostics", "analysis/facts", "analysis/rules",
    "analysis/engine", "analysis/project",
    "report", "workspace", "run", "cli",
)
PACKAGES = ("analysis", "report", "workspace", "run", "cli")

# module (or package, covering everything below it) -> its layer; the longest prefix wins
LAYER_OF = {
    "amplint": "base",  # the package itself: __version__
    "amplint.analysis": "analysis/low",
    "amplint.analysis.data": "analysis/low",
    "amplint.analysis.parsing": "analysis/low",
    "amplint.analysis.suppressions": "analysis/low",
    "amplint.analysis.diagnostics": "analysis/diagnostics",
    "amplint.analysis.facts": "analysis/facts",
    "amplint.analysis.rules": "analysis/rules",
    "amplint.analysis.context": "analysis/rules",
    "amplint.analysis.engine": "analysis/engine",
    "amplint.analysis.results": "analysis/engine",  # the engine's Settings and FileResult, kept light
    "amplint.analysis.prefilter": "analysis/engine",
    "amplint.analysis.prefilter_entries": "analysis/engine",
    "amplint.analysis.prefilter_names": "analysis/engine",
    "amplint.analysis.prefilter_constants": "analysis/engine",
    "amplint.analysis.fix_text": "analysis/engine",
    "amplint.analysis.large_files": "analysis/engine",
    "amplint.analysis.positions": "analysis/engine",
    "amplint.analysis.project": "analysis/project",
    # how findings are printed: the output formats, diffs, `--explain`
    "amplint.report": "report",
    # what to lint and how: discovery, ignore files, project root, config, cache, baseline, noqa
    "amplint.workspace": "workspace",
    # a run over many files: result cache, process pool, project pass inputs, fixing, notebooks
    "amplint.run": "run",
    # entry points: the command, python -m amplint, flake8, stdin, the language server
    "amplint.cli": "cli",
    "amplint.__main__": "cli",
}
RUNTIME = "amplint.runtime"


def module_files() -> Dict[str, str]:
    """module name -> file, for every module under amplint/."""
    found = {}
    for folder, _, names in os.walk(PACKAGE_DIR):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3]
            module = relative.replace(os.sep, ".")
            if module.endswith(".__init__"):
                module = module[: -len(".__init__")]
            found[module] = path
    return found


def imported_names(module: str, path: str, source: str) -> Iterable[str]:
    """Every name an import statement anywhere in the file (functions included) brings in,
    as a dotted name: `from amplint.analysis.project import build` -> "amplint.analysis.project.build"."""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                yield f"{base}.{alias.name}"


def owning_module(name: str, modules: Iterable[str]) -> Optional[str]:
    """The module a dotted name lives in (`amplint.analysis.project.build` -> `amplint.analysis.project`)."""
    known = set(modules)
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(files: Dict[str, str]) -> Dict[str, Set[str]]:
    """module -> the amplint modules it imports. A package importing its own submodules (an
    `__init__.py` re-exporting them) is no arrow."""
    graph: Dict[str, Set[str]] = {module: set() for module in files}
    for module, path in files.items():
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        for name in imported_names(module, path, source):
            target = owning_module(name, files)
            if target is None or target == module or target.startswith(module + "."):
                continue
            graph[module].add(target)
    return graph


def external_imports(files: Dict[str, str]) -> Dict[str, Set[str]]:
    """module -> the top-level names of the non-amplint packages it imports."""
    found: Dict[str, Set[str]] = {}
    for module, path in files.items():
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        found[module] = {name.split(".")[0] for name in imported_names(module, path, source)}
    return found


def layer_of(module: str) -> Optional[str]:
    best = None
    for prefix, layer in LAYER_OF.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best is not None else None


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_arrows(graph: Dict[str, Set[str]]) -> List[Tuple[str, str, str, str]]:
    """(importer, its layer, imported, its layer) for every import from a lower layer into a
    higher one, and every import of amplint.runtime from the static code."""
    found = []
    for module in sorted(graph):
        if module == RUNTIME or module.startswith(RUNTIME + "."):
            continue
        mine = layer_of(module)
        for target in sorted(graph[module]):
            if target == RUNTIME or target.startswith(RUNTIME + "."):
                found.append((module, mine, target, "runtime"))
                continue
            theirs = layer_of(target)
            if LAYERS.index(theirs) > LAYERS.index(mine):
                found.append((module, mine, target, theirs))
    return found


@pytest.fixture(scope="module")
def files():
    return module_files()


@pytest.fixture(scope="module")
def graph(files):
    return import_graph(files)


def test_every_static_module_has_a_layer(files):
    unplaced = [m for m in sorted(files) if not m.startswith(RUNTIME) and layer_of(m) is None]
    assert unplaced == [], f"give these modules a layer in LAYER_OF: {unplaced}"


def test_no_import_circle(graph):
    assert circles(graph) == []


def test_no_import_runs_up_the_layers(graph):
    assert upward_arrows(graph) == []


def test_static_code_never_imports_torch(files):
    found = sorted(
        module for module, names in external_imports(files).items()
        if not module.startswith(RUNTIME) and "torch" in names
    )
    assert found == []


def test_the_graph_sees_function_local_imports(files, graph):
    # lint_project imports the engine inside the function; the arrow must be seen
    assert "amplint.analysis.engine" in graph["amplint.analysis.project"]


def test_the_top_level_shows_only_the_layers():
    entries = sorted(
        name for name in os.listdir(PACKAGE_DIR)
        if not name.startswith((".", "__pycache__")) and (name.endswith(".py") or
                                                          os.path.isdir(os.path.join(PACKAGE_DIR, name)))
    )
    assert entries == sorted(["__init__.py", "__main__.py", "runtime", *PACKAGES])
    assert len(entries) <= 10


def test_a_planted_import_from_a_lower_package_into_a_higher_one_is_found(graph):
    arrows = upward_arrows(_planted(graph, "amplint.analysis.engine", "amplint.workspace.config"))
    assert ("amplint.analysis.engine", "analysis/engine", "amplint.workspace.config", "workspace") in arrows
    arrows = upward_arrows(_planted(graph, "amplint.report.text", "amplint.run.runner"))
    assert ("amplint.report.text", "report", "amplint.run.runner", "run") in arrows


def _planted(graph: Dict[str, Set[str]], importer: str, imported: str) -> Dict[str, Set[str]]:
    planted = {module: set(targets) for module, targets in graph.items()}
    planted[importer].add(imported)
    return planted


def test_a_planted_upward_import_is_found(graph):
    arrows = upward_arrows(_planted(graph, "amplint.analysis.facts.regions", "amplint.analysis.rules"))
    assert ("amplint.analysis.facts.regions", "analysis/facts", "amplint.analysis.rules", "analysis/rules") in arrows
    arrows = upward_arrows(_planted(graph, "amplint.analysis.engine", "amplint.runtime.monitor"))
    assert ("amplint.analysis.engine", "analysis/engine", "amplint.runtime.monitor", "runtime") in arrows
    # downward and same-layer imports are no arrow
    assert upward_arrows(_planted(graph, "amplint.run.runner", "amplint.analysis.facts.tree")) == upward_arrows(graph)


def test_a_planted_circle_is_found(graph):
    found = circles(_planted(graph, "amplint.analysis.facts.tree", "amplint.analysis.facts.regions"))
    assert any({"amplint.analysis.facts.tree", "amplint.analysis.facts.regions"} <= set(c) for c in found)


def test_a_function_local_import_is_read(tmp_path):
    path = tmp_path / "module.py"
    source = "def f():\n    from amplint.run.runner import run\n    from . import sibling\n"
    names = set(imported_names("amplint.analysis.facts.thing", str(path), source))
    assert names == {"amplint.run.runner.run", "amplint.analysis.facts.sibling"}
