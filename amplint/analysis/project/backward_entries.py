"""`self.backward(loss)` under a method's own autocast region, where the method `backward` is
inherited from a class of another file (ParlAI's `TorchGeneratorAgent.train_step` calling
`TorchAgent.backward` of parlai/core/torch_agent.py). AMP104 reports a call of a backward API by
its name, and stays silent when the method it runs is one of the file's own whose every backward
runs under an autocast it disables itself; this module answers the same question across files,
and, when the method does not protect, where the backward it runs sits (the finding names it).

Exact or nothing: the method is looked up through the class's bases as Python does for single
chains (a base outside the project, other than `object`/`nn.Module`, may define it first: no
answer), for the class and for every project subclass (an instance of one runs its own
resolution); each method found is read with `ast`, and protects only when it has a backward of
its own and each of them sits, innermost, under `torch.autocast(..., enabled=False)` (the literal,
by keyword). Asked only for `self.backward` / `self.manual_backward` calls under a region the file
opens itself (the summary's `self_roots`), so the pass reads nothing for other projects."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from amplint.analysis.facts.backward_methods import EntryBackwardMethod, EntryBackwardSite
from amplint.analysis.facts.property_dtypes import PLAIN_BASES

BACKWARD_APIS = ("backward", "manual_backward")
# calls that run (or may run) a backward: each must sit under the method's own disabled autocast
_RUNS_BACKWARD = frozenset({"backward", "manual_backward", "grad", "update_params"})
_AUTOCASTS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                        "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})
_MAX_DEPTH = 8
_UNKNOWN = "unknown"

Method = Tuple[str, str]  # (file, class)


def backward_method_entries(project) -> Dict[str, Optional[ast.Module]]:
    """Puts EntryBackwardMethod / EntryBackwardSite into `project.backward_calls` (path -> entries)
    and the files that decided them into `project.backward_deps`; returns the files it parsed
    (backward_receivers.py reads them again)."""
    parsed: Dict[str, Optional[ast.Module]] = {}
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        asked: Set[Tuple[str, str]] = set()
        for caller, attr, _line, _index, _opener in summary.self_roots:
            if attr not in BACKWARD_APIS or (caller, attr) in asked:
                continue
            asked.add((caller, attr))
            cls = caller.split(".")[0]
            info = summary.classes.get(cls)
            if info is None or attr in info.methods:
                continue  # the class's own method: the file's facts answer (AMP104 _callee_protects)
            deciding: Set[str] = {path}
            hits = _resolutions(project, path, cls, attr, deciding)
            if hits is None:
                continue
            found = _protected(project, hits, attr, parsed)
            entry = EntryBackwardMethod(caller, attr, found) if found is not None else None
            if entry is None and len(set(hits)) == 1 and hits[0][0] != path:
                line = _backward_line(project, hits[0], attr, parsed)
                entry = None if line is None else EntryBackwardSite(
                    caller, attr, f"{project.display(hits[0][0])}:{line}")
            if entry is None:
                continue
            project.__dict__.setdefault("backward_calls", {}).setdefault(path, set()).add(entry)
            project.__dict__.setdefault("backward_deps", {}).setdefault(path, set()).update(deciding)
    return parsed


def _resolutions(project, path: str, cls: str, attr: str, deciding: Set[str]) -> Optional[List[Method]]:
    """The method `self.<attr>` runs for the class and for each project subclass, in that order;
    None when one of them is not defined where the project can see, or not known exactly."""
    classes: List[Method] = [(path, cls)] + list(project.dispatch.subclasses(path, cls))
    hits: List[Method] = []
    for spath, sub in classes:
        hit = _lookup(project, spath, sub, attr, deciding, 0)
        if hit is None or hit == _UNKNOWN:
            return None
        hits.append(hit)
    return hits


def _protected(project, hits: List[Method], attr: str, parsed) -> Optional[str]:
    """"file:line" of the first backward of the method `self.<attr>` runs when every resolution
    protects; else None."""
    cite = None
    for hit in hits:
        line = _disabled_backward_line(project, hit, attr, parsed)
        if line is None:
            return None
        cite = cite or f"{project.display(hit[0])}:{line}"
    return cite


def _backward_line(project, hit: Method, name: str, parsed) -> Optional[int]:
    """The line of the first `.backward(...)` / `.manual_backward(...)` call of method `name` of
    the class that runs outside a disabled autocast of its own; None when it has none."""
    method = _method(project, hit, name, parsed)
    if method is None:
        return None
    names = _imports(parsed[hit[0]])
    lines: List[int] = []
    for stmt in method.body:
        _backward_calls(stmt, names, None, lines)
    return min(lines) if lines else None


def _backward_calls(node: ast.AST, names: Dict[str, str], disabled: Optional[bool], lines: List[int]) -> None:
    """Lines of the backward calls under `node` that run outside a disabled autocast."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return  # runs later, if at all
    if isinstance(node, (ast.With, ast.AsyncWith)):
        inner = disabled
        for item in node.items:
            _backward_calls(item.context_expr, names, disabled, lines)
            state = _autocast_state(item.context_expr, names)
            if state is not None:
                inner = state
        for stmt in node.body:
            _backward_calls(stmt, names, inner, lines)
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in BACKWARD_APIS \
            and disabled is not True:
        lines.append(node.lineno)
    for child in ast.iter_child_nodes(node):
        _backward_calls(child, names, disabled, lines)


def _lookup(project, path: str, cls: str, name: str, deciding: Set[str], depth: int):
    """(file, class) whose body defines `name` for `cls` of `path`; None when no class of the
    chain does; _UNKNOWN when a base is not a project class (or too deep, or ambiguous)."""
    if depth > _MAX_DEPTH:
        return _UNKNOWN
    summary = project.summary(path)
    info = summary.classes.get(cls) if summary is not None else None
    if info is None:
        return _UNKNOWN
    deciding.add(path)
    if name in info.methods:
        return path, cls
    for base in info.bases:
        if base in PLAIN_BASES:
            continue
        target = project.resolve_ref(path, base)
        if target is None or len(target[1]) != 1:
            return _UNKNOWN
        hit = _lookup(project, target[0], target[1][0], name, deciding, depth + 1)
        if hit is not None:
            return hit  # found, or unknown: either way the later bases do not decide
    return None


def _disabled_backward_line(project, hit: Method, name: str, parsed) -> Optional[int]:
    """Line of the first backward of method `name` of the class, when it has one and every one
    runs innermost under `torch.autocast(..., enabled=False)` of its own; else None."""
    method = _method(project, hit, name, parsed)
    if method is None:
        return None
    names = _imports(parsed[hit[0]])
    lines: List[int] = []
    for stmt in method.body:
        if not _walk(stmt, names, None, lines):
            return None
    return min(lines) if lines else None


def parsed_module(project, path: str, parsed: Dict[str, Optional[ast.Module]]) -> Optional[ast.Module]:
    """The file's `ast`, parsed once per pass into `parsed`; None when it does not parse."""
    if path not in parsed:
        try:
            parsed[path] = ast.parse(project.files[path])
        except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError):
            parsed[path] = None
    return parsed[path]


def _method(project, hit: Method, name: str, parsed):
    """The last definition of method `name` in the body of the class `hit` names (parsed once
    per file into `parsed`); None when the file does not parse or the class is not one."""
    path, cls = hit
    module = parsed_module(project, path, parsed)
    if module is None:
        return None
    classes = [n for n in module.body if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1:
        return None
    defs = [n for n in classes[0].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return defs[-1] if defs else None


def _walk(node: ast.AST, names: Dict[str, str], disabled: Optional[bool], lines: List[int]) -> bool:
    """False when a backward runs outside a disabled autocast; `disabled`: the innermost
    autocast around `node` (None: none)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return True  # runs later, if at all
    if isinstance(node, (ast.With, ast.AsyncWith)):
        inner = disabled
        for item in node.items:
            if not _walk(item.context_expr, names, disabled, lines):
                return False
            state = _autocast_state(item.context_expr, names)
            if state is not None:
                inner = state
        return all(_walk(stmt, names, inner, lines) for stmt in node.body)
    if isinstance(node, ast.Call):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called in _RUNS_BACKWARD:
            if disabled is not True:
                return False
            lines.append(node.lineno)
    return all(_walk(child, names, disabled, lines) for child in ast.iter_child_nodes(node))


def _autocast_state(expr: ast.AST, names: Dict[str, str]) -> Optional[bool]:
    """True: `torch.autocast(..., enabled=False)`; False: any other call of torch's autocast; None:
    not torch's autocast."""
    if not isinstance(expr, ast.Call):
        return None
    parts: List[str] = []
    func = expr.func
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    head = names.get(func.id)
    if head is None:
        return None
    if ".".join([head] + parts) not in _AUTOCASTS:
        return None
    return any(k.arg == "enabled" and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in expr.keywords)


def _imports(module: ast.Module) -> Dict[str, str]:
    """Module-level names bound by imports only once (name -> qualified)."""
    names: Dict[str, str] = {}
    twice: Set[str] = set()
    for stmt in module.body:
        pairs = []
        if isinstance(stmt, ast.Import):
            pairs = [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0]) for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            pairs = [(a.asname or a.name, f"{stmt.module}.{a.name}") for a in stmt.names]
        for local, qualified in pairs:
            if local in names and names[local] != qualified:
                twice.add(local)
            names[local] = qualified
    return {k: v for k, v in names.items() if k not in twice}
