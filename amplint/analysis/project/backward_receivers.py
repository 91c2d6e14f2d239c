"""`accumulator.backward(loss)` under a file's own autocast region, where `accumulator` holds an
instance of a project class of another file whose method `backward` the region runs (TinyLlama's
fork: a `GradientAccumulator` of lit_gpt/utils.py whose `backward(loss)` runs
`(loss / self.steps).backward()`). AMP104 reports any `.backward(...)` call by its name, as if it
were `Tensor.backward`; the call of a project method is that method: silent when every backward
it runs sits under an autocast it disables itself, else reported at the call naming the backward
it runs (as for `self.backward(...)`, backward_entries.py).

Exact or nothing: the receiver's class is the one the resolver knows for the call (a
constructor the file assigns, `project.targets`; or the class flow's answer for a held value,
`self.acc` or a parameter, with every value it holds a project instance whose method is found);
the method is read with `ast` as backward_entries.py reads it. The calling statement is read
again with `ast` for its receiver's dotted name and enclosing function, which the rule matches."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from amplint.analysis.facts.backward_methods import EntryBackwardMethod, EntryBackwardSite
from amplint.analysis.project.backward_entries import BACKWARD_APIS, _backward_line, _protected, parsed_module
from amplint.analysis.project.nograd_entries import receiver_name

Method = Tuple[str, str]  # (file, class)


def backward_receiver_entries(project, parsed: Dict[str, Optional[ast.Module]]) -> None:
    """EntryBackwardMethod / EntryBackwardSite (with their receiver) for the region calls
    `x.backward(...)` / `x.manual_backward(...)` of the first-pass files whose receiver holds a
    project instance of another file's class."""
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        for call, _info in summary.roots:
            if call.kind != "method" or call.attr not in BACKWARD_APIS:
                continue
            targets = project.targets(path, call)
            if not targets:
                continue
            placed = _call_at(project, path, summary.call_line(call), call.attr, parsed)
            if placed is not None:
                _note(project, path, placed[0], placed[1], call.attr, targets, parsed)
        for key, receiver, attr, _text, _line, _index in (summary.flow.roots if summary.flow else ()):
            name = receiver_name(receiver)
            if attr not in BACKWARD_APIS or name is None or name == ("self",):
                continue
            found = project.flow.call_targets(path, key, receiver, attr)
            if found and all(instance is not None for _t, _h, _s, instance in found):
                _note(project, path, key or "", name, attr, [t for t, _h, _s, _i in found], parsed)


def _note(project, path: str, scope: str, receiver: Tuple[str, ...], attr: str,
          targets: List[Tuple[str, str]], parsed) -> None:
    hits: List[Method] = []
    for where, key in targets:
        parts = key.split(".")
        if len(parts) != 2 or parts[1] != attr or where == path:
            return  # not a method of that name of another file's class: the file's facts answer
        hits.append((where, parts[0]))
    hits = sorted(set(hits))
    found = _protected(project, hits, attr, parsed)
    entry = None
    if found is not None:
        entry = EntryBackwardMethod(scope, attr, found, receiver)
    elif len(hits) == 1:
        line = _backward_line(project, hits[0], attr, parsed)
        if line is not None:
            entry = EntryBackwardSite(scope, attr, f"{project.display(hits[0][0])}:{line}", receiver)
    if entry is None:
        return
    project.__dict__.setdefault("backward_calls", {}).setdefault(path, set()).add(entry)
    project.__dict__.setdefault("backward_deps", {}).setdefault(path, set()).update(
        {path} | {where for where, _cls in hits})


def _call_at(project, path: str, line: int, attr: str, parsed) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(enclosing function's key, receiver's dotted name) of the one `<name>.<attr>(...)` call
    of the statement at `line`; None when there is not exactly one."""
    module = parsed_module(project, path, parsed)
    if module is None or not line:
        return None
    found: Set[Tuple[str, Tuple[str, ...]]] = set()
    _find(module, (), line, attr, False, found)
    return next(iter(found)) if len(found) == 1 else None


def _find(node: ast.AST, scope: Tuple[str, ...], line: int, attr: str, inside: bool,
          found: Set[Tuple[str, Tuple[str, ...]]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if child.lineno <= line <= (child.end_lineno or child.lineno):
                _find(child, scope + (child.name,), line, attr, False, found)
            continue
        here = inside or (isinstance(child, ast.stmt) and not hasattr(child, "body") and child.lineno == line)
        if here and isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                and child.func.attr == attr:
            dotted = _dotted(child.func.value)
            if dotted is not None:
                found.add((".".join(scope), dotted))
        if isinstance(child, ast.stmt) and not here and not (
                child.lineno <= line <= (child.end_lineno or child.lineno)):
            continue
        _find(child, scope, line, attr, here, found)


def _dotted(expr: ast.AST) -> Optional[Tuple[str, ...]]:
    parts: List[str] = []
    while isinstance(expr, ast.Attribute):
        parts.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return (expr.id, *parts)
