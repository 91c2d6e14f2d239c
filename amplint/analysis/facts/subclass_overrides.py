"""`self.m()` in a method of a base class whose own `m` is abstract or missing (a template
method: BaseTrainer.train calls `self.train_on_batch`, which only the subclasses define): the
instance is one of the subclasses, so the call runs a subclass's `m`. Taken only when it is
exact: every subclass of this file that runs the calling method (does not override it)
resolves `m` to one and the same concrete method; several that disagree give nothing.

An `m` is abstract when decorated `@abstractmethod` or when its body (past a docstring) is only
`raise NotImplementedError[...]`: such a body never runs as the callee of a working program."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

import libcst as cst

from amplint.analysis.facts.tree import Collector, Frame, dotted_name


def abstract(method: Frame) -> bool:
    node = method.node
    if not isinstance(node, cst.FunctionDef):
        return False
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        name = dotted_name(expr)
        if name and name[-1] == "abstractmethod":
            return True
    body = node.body
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    if statements and _docstring(statements[0]):
        statements = statements[1:]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    small = statements[0].body
    if len(small) != 1 or not isinstance(small[0], cst.Raise) or small[0].exc is None:
        return False
    exc = small[0].exc
    name = dotted_name(exc.func if isinstance(exc, cst.Call) else exc)
    return bool(name) and name[-1] == "NotImplementedError"


def _docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class SubclassOverrides:
    def __init__(self, tree: Collector, method: Callable[[str, str], Optional[Frame]]) -> None:
        self.tree = tree
        self.method = method  # the call graph's MRO lookup of this file
        self._subclasses: Optional[Dict[str, List[str]]] = None
        self._resolved: Dict[tuple, Optional[Frame]] = {}  # the call graph asks a site many times

    def subclasses(self, name: str) -> List[str]:
        """The classes of this file deriving from `name`, directly or not."""
        if self._subclasses is None:
            direct: Dict[str, List[str]] = {}
            for cls, frame in self.tree.classes.items():
                node = frame.node
                assert isinstance(node, cst.ClassDef)
                for base in node.bases:
                    base_name = dotted_name(base.value)
                    if base_name and len(base_name) == 1 and base_name[0] in self.tree.classes \
                            and base_name[0] != cls:
                        direct.setdefault(base_name[0], []).append(cls)
            self._subclasses = direct
        found: List[str] = []
        pending = list(self._subclasses.get(name, ()))
        while pending:
            cls = pending.pop(0)
            if cls not in found:
                found.append(cls)
                pending.extend(self._subclasses.get(cls, ()))
        return found

    def resolve(self, owner: str, caller: Frame, name: str) -> Optional[Frame]:
        """The one concrete `name` that every subclass of `owner` running `caller` resolves
        to; None when none does or they disagree."""
        memo = (owner, id(caller), name)
        if memo not in self._resolved:
            self._resolved[memo] = self._resolve(owner, caller, name)
        return self._resolved[memo]

    def _resolve(self, owner: str, caller: Frame, name: str) -> Optional[Frame]:
        found: Dict[int, Frame] = {}
        for sub in self.subclasses(owner):
            if self.method(sub, caller.name) is not caller:
                continue  # it overrides the calling method: this call never runs on it
            target = self.method(sub, name)
            if target is not None and not abstract(target):
                found[id(target)] = target
        return next(iter(found.values())) if len(found) == 1 else None
