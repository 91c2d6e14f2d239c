"""Values a function returns that a module-level name holds: `return BF16` of `BF16 = partial(...)`,
`return _CONTEXTS[name]` of a dict literal `_CONTEXTS = {...}` (every value of the table, since
the key is not known). Exact or nothing: the name is bound once, straight in the module's body,
never declared global in a function, and the file never changes the table (an item store or
delete, a call of a method that changes a dict); a function that binds the name itself reads its
own."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.context_functions import bound_locally
from amplint.analysis.facts.tree import Frame

_CHANGES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"})


def held_values(tree, function: Frame, returned: List[cst.BaseExpression]
                ) -> Optional[List[Tuple[cst.BaseExpression, Frame]]]:
    """(value, the module frame) for every value the `returned` expressions may be, when at
    least one of them is a module-level name or an item of a module-level table as above (the
    others stand for themselves, read in `function`); None when none is, or one such name is not
    bound exactly as above."""
    module = tree.module_frame
    out: List[Tuple[cst.BaseExpression, Frame]] = []
    found = False
    for value in returned:
        name = value.value.value if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
            else value.value if isinstance(value, cst.Name) else None
        if name is None or bound_locally(function, name) or name in module.imports:
            out.append((value, function))
            continue
        bound = _module_bindings(tree).get(name)
        if bound is None:
            return None
        if isinstance(value, cst.Subscript):
            if not isinstance(bound, cst.Dict) or not bound.elements or any(
                    not isinstance(e, cst.DictElement) for e in bound.elements):
                return None
            out.extend((e.value, module) for e in bound.elements)  # type: ignore[union-attr]
        else:
            out.append((bound, module))
        found = True
    return out if found else None


def _module_bindings(tree) -> Dict[str, cst.BaseExpression]:
    """name -> value of the module-level names bound exactly once by `name = value` straight in
    the module's body and never changed as a table (memoised on the tree)."""
    memo = getattr(tree, "_module_tables", None)
    if memo is not None:
        return memo
    module = tree.module_frame.node
    counts: Dict[str, int] = {}
    values: Dict[str, cst.BaseExpression] = {}
    for stmt in getattr(module, "body", ()):
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                counts[name] = counts.get(name, 0) + 1
                values[name] = small.value
    changed = _Changed()
    module.visit(changed)
    memo = {name: value for name, value in values.items()
            if counts[name] == 1 and name not in changed.names and name not in tree.module_frame.imports}
    tree._module_tables = memo
    return memo


class _Changed(cst.CSTVisitor):
    """Names bound again anywhere (other assignments, `global`), or changed as a table."""

    def __init__(self) -> None:
        self.names: set = set()
        self.seen: Dict[str, int] = {}

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target)
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _CHANGES:
            self.names.add(func.value.value)

    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.names.add(target.value.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)
