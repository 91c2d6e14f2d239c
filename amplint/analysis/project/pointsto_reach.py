"""The points-to resolver (pointsto_*.py) read by the project pass: what a call site in a function a
region reaches runs, where the class flow (classflow.py, resolve.py) has no answer.

Scope: the solve covers the files the project pass summarised on its first propagation (the
files that open regions or hold framework settings, and the files those regions reach) and the
project modules they import, never the whole tree; what comes from a file outside it is an
outside value, so a call through it has no answer here.

An answer is per call site *and copy* of its caller (a function the resolver copies per call
site or per decoration has one answer per copy) and is used only when it is precise:
- the callee node neither passed its bound nor holds the unknown outside value ("E:?");
- the copy's site reaches one project function (MAX_TARGETS): a set of two came, in the
  registry layouts, from one abstract instance of the registry class holding every model.
Two kinds of answer:
- the call itself: `self(x)` -> `Net.forward`, `crit(x, y)` with `crit` a parameter every call
  site binds to one project class, `map(focal, pairs)`, `loss_fn(x)` with `loss_fn` a
  `functools.partial` of a project function;
- a callback: a project function or bound method passed as an argument
  (`multi_apply(self.loss_single, ...)`) that the called project function is known to call
  (an edge of the call graph from the callee to it)."""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from amplint.analysis.project.pointsto_extract import extract
from amplint.analysis.project.pointsto_solve import Solver
from amplint.analysis.project.region_spans import file_spans

MAX_TARGETS = 1  # two targets were, on the tests' registries, one abstract object merging two
_CLONE = re.compile(r"@[dsg]\d+")
_SKIP = ("__init__", "__new__", "__init_subclass__")  # construction is not the region's code


def module_name(shown: str, prefix=()) -> Optional[Tuple[str, bool]]:
    """("pkg.mod", is a package) for a path as the project displays it ("pkg/mod.py"); `prefix`:
    the packages the project's folder lies in (ProjectResolver.package_prefix)."""
    if shown.startswith("../") or not shown.endswith((".py", ".pyi")):
        return None
    parts = list(prefix) + shown[: shown.rfind(".")].split("/")
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), package


class ValueFlow:
    def __init__(self, project, paths: Iterable[str]) -> None:
        self.project = project
        self.path_of: Dict[str, str] = {}  # module -> file
        facts = []
        for path in sorted(set(paths)):
            named = module_name(project.display(path), project.package_prefix())
            if named is None or named[0] in self.path_of:
                continue
            try:
                found = extract(project.files[path], *named)
            except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError, UnicodeError):
                continue
            self.path_of[named[0]] = path
            facts.append(found)
        self.func_module: Dict[str, str] = {}
        for found in facts:
            for name in found["funcs"]:
                self.func_module[name] = found["module"]
        self.solver = Solver(facts).solve()
        self.by_caller: Dict[str, List[Tuple[str, str]]] = {}  # function -> (caller copy, site)
        for caller, site in set(self.solver.site_calls) | set(self.solver.site_nodes):
            self.by_caller.setdefault(_CLONE.sub("", caller), []).append((caller, site))
        for sites in self.by_caller.values():
            sites.sort()
        self._by_module: Optional[Dict[str, List[Tuple[str, str]]]] = None

    def where(self, func: str) -> Optional[Tuple[str, str]]:
        """(file, summary key) of a resolver function name, if the project pass knows it."""
        module = self.func_module.get(func)
        if module is None or "<" in func:
            return None
        key = func[len(module) + 1:]
        if key.rsplit(".", 1)[-1] in _SKIP:
            return None
        path = self.path_of[module]
        summary = self.project.summary(path)
        if summary is None or key not in summary.functions:
            return None
        return path, key

    def _precise(self, node: str) -> bool:
        return node not in self.solver.full and "E:?" not in self.solver.vals.get(node, ())

    def _functions(self, node: str) -> Set[str]:
        """The project functions an argument node holds (bound methods and partials opened)."""
        out: Set[str] = set()
        for value in self.solver.vals.get(node, ()):
            if value[:2] in ("F:", "B:", "K:"):
                out.add(_CLONE.sub("", value[2:].split("|", 1)[0]))
            elif value.startswith("Q:") and value[2:] in self.solver.partials:
                for inner in self.solver.partials[value[2:]][0]:
                    if inner[:2] in ("F:", "B:", "K:"):
                        out.add(_CLONE.sub("", inner[2:].split("|", 1)[0]))
        return out

    def targets(self, path: str, key: str) -> List[Tuple[Tuple[str, str], int, str]]:
        """((file, key), line, what) for the calls in this function (any copy) that run a project
        function by a precise answer; `what` names the call's kind for the citation."""
        named = module_name(self.project.display(path), self.project.package_prefix())
        if named is None:
            return []
        return self.answers(self.by_caller.get(named[0] + "." + key, ()))

    def lines(self, path: str, start: int, end: int) -> List[Tuple[Tuple[str, str], int, str]]:
        """The same, for the calls of the file on lines start..end (a region's own body)."""
        named = module_name(self.project.display(path), self.project.package_prefix())
        if named is None:
            return []
        if self._by_module is None:
            self._by_module = {}
            for pairs in self.by_caller.values():
                for caller, site in pairs:
                    self._by_module.setdefault(site.rsplit(":", 2)[0], []).append((caller, site))
        return self.answers(
            (caller, site) for caller, site in self._by_module.get(named[0], ())
            if start <= int(site.rsplit(":", 2)[1]) <= end)

    def answers(self, pairs) -> List[Tuple[Tuple[str, str], int, str]]:
        out = []
        edges = self.solver.edges
        for caller, site in pairs:
            line = int(site.rsplit(":", 2)[1])
            callees = self.solver.site_calls.get((caller, site), set())
            fn, args = self.solver.site_nodes.get((caller, site), ("", ()))
            if not fn or not self._precise(fn) or len(callees) > MAX_TARGETS:
                continue
            for callee in sorted(callees):
                found = self.where(callee)
                if found is not None:
                    out.append((found, line, "call"))
            for arg in args:
                passed = self._functions(arg)
                if not passed or len(passed) > MAX_TARGETS or not self._precise(arg):
                    continue
                for func in sorted(passed):
                    if any((callee, func) in edges for callee in callees):
                        found = self.where(func)
                        if found is not None:
                            out.append((found, line, "callback"))
        return out


def scope(project, reached: Iterable[str]) -> List[str]:
    """The files the solve covers (its cost grows fast with them: a whole tree is ~10 s on
    detectron2): those that open a region, those a region reached on the first propagation, the
    files that define what the region files import, and the files that define the functions the
    reached files import (`from mmdet.core import multi_apply`, through the package's
    re-exports, a star import included)."""
    regions = {p for p, s in project.summaries.items() if s is not None and s.regions}
    have = sorted(p for p in regions | set(reached) if project.summaries.get(p) is not None)
    out = set(have)
    for path in have:  # by the files' text only: summarising what they import would cost more than the solve
        text = project.files.get(path, "")
        inside = _region_text(text, project.summaries[path], path, project) if path in regions else ""
        for name, ref in sorted(project.summaries[path].imports.items()):
            used = bool(inside) and re.search(r"\b%s\b" % re.escape(name), inside) is not None
            for target, attrs in project._module_candidates(path, ref):
                if os.path.basename(target) == "__init__.py" and len(attrs) == 1:
                    out.update(_star_sources(project, path, ref, used))
                elif used or (len(attrs) == 1 and re.search(
                        r"^def %s\(" % re.escape(attrs[0]), project.files.get(target, ""), re.M)):
                    out.add(target)
                break
    out.update(_importers(project, regions, out))
    return sorted(p for p in out if p.endswith((".py", ".pyi")) and os.path.basename(p) != "setup.py")


def _importers(project, regions: Set[str], have: Set[str]) -> Set[str]:
    """The summarised files that import a region file (they build the region's objects and pass
    the values in: fastai's `Learner(dls, model, loss_func=soft_bce_flat)` in a script, read by
    `self.loss_func(...)` under the Learner's own autocast), and the modules that define the
    functions and classes such a file imports by name."""
    out: Set[str] = set()
    for path, summary in sorted(project.summaries.items()):
        if summary is None or path in have or not summary.imports:
            continue
        found = []
        for name, ref in sorted(summary.imports.items()):
            for target, attrs in project._module_candidates(path, ref):
                found.append((target, attrs))
                break
        if not any(target in regions for target, _ in found):
            continue
        out.add(path)
        for target, attrs in found:
            if len(attrs) == 1 and re.search(
                    r"^(?:def|class) %s\b" % re.escape(attrs[0]), project.files.get(target, ""), re.M):
                out.add(target)
    return out


def _region_text(source: str, summary, path: str, project) -> str:
    """The lines of a file's autocast regions (what a region file's imports are kept for)."""
    found, _ = file_spans(project, path)
    lines = source.splitlines()
    opened = [found[info.origin.line] for info in summary.regions if info.origin.line in found]
    return "\n".join("\n".join(lines[a - 1:b]) for a, b in opened)


def _star_sources(project, path: str, ref: str, any_kind: bool) -> List[str]:
    """The package's `__init__.py` and the modules it re-exports the imported name from
    (`from .utils import *` then `from .misc import multi_apply`, as mmdet.core does): a module
    that defines it as a function, or (`any_kind`) as anything."""
    for candidate, attrs in project._module_candidates(path, ref):
        if os.path.basename(candidate) != "__init__.py" or len(attrs) != 1:
            return []
        out: List[str] = []
        todo = [candidate]
        while todo and len(out) < 8:
            init = todo.pop()
            out.append(init)
            for module_ref, names in _reexports(project, init):
                if "*" not in names and attrs[0] not in names:
                    continue
                for module, rest in project._module_candidates(init, module_ref):
                    if rest or module in out:
                        break
                    if os.path.basename(module) == "__init__.py":
                        todo.append(module)
                    elif _defines(project.files.get(module, ""), attrs[0], any_kind):
                        out.append(module)  # timm.models star-imports every model: only the one
                    break
        return out if len(out) > 1 else []
    return []


def _defines(source: str, name: str, any_kind: bool) -> bool:
    if name not in source:
        return False
    name = re.escape(name)
    pattern = r"^(?:def|class) %s\b|^%s\s*[:=]" % (name, name) if any_kind else r"^def %s\(" % name
    return re.search(pattern, source, re.M) is not None


def _reexports(project, path: str) -> List[Tuple[str, Set[str]]]:
    """(module reference, names) of each `from ... import ...` of a package's `__init__.py`."""
    memo = project.__dict__.setdefault("_value_reexports", {})
    if path not in memo:
        try:
            tree = ast.parse(project.files.get(path, ""))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = ast.Module(body=[], type_ignores=[])
        memo[path] = [("." * node.level + (node.module or ""), {a.asname or a.name for a in node.names})
                      for node in tree.body if isinstance(node, ast.ImportFrom)]
    return memo[path]
