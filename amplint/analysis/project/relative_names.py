"""Names in a summarised module: the facts' resolver for absolute imports, plus the module-level
relative imports it skips (`from .losses import FocalLoss` -> ".losses.FocalLoss")."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from amplint.analysis.facts.names import resolve
from amplint.analysis.facts.tree import Dotted, Frame, dotted_name, import_bindings


def relative_imports(module: cst.Module) -> Dict[str, str]:
    """Module-level `from .x import y [as z]` and `from . import x`: bound name -> reference with
    the leading dots kept (".x.y", ".x"). The facts' Collector skips relative imports."""
    found: Dict[str, str] = {}

    def visit(body) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and small.relative:
                        _add_relative(small, found)
            elif isinstance(stmt, cst.If):
                visit(stmt.body.body)
                orelse = stmt.orelse
                while orelse is not None:
                    visit(orelse.body.body)
                    orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            elif isinstance(stmt, cst.Try):
                visit(stmt.body.body)
                for handler in stmt.handlers:
                    visit(handler.body.body)

    visit(module.body)
    return found


def _add_relative(node: cst.ImportFrom, found: Dict[str, str]) -> None:
    for bound, target, _ in import_bindings(node):
        found[bound] = target


class Names:
    """Resolution through absolute imports (the facts' resolver) and relative ones."""

    def __init__(self, relative: Dict[str, str]) -> None:
        self.relative = relative

    def resolve(self, dotted: Optional[Dotted], frame: Frame) -> Optional[str]:
        if not dotted:
            return None
        found = resolve(dotted, frame)
        if found is not None or dotted[0] not in self.relative:
            return found
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind != "class" or scope is frame.scope:
                if dotted[0] in scope.bindings or dotted[0] in scope.imports:
                    return None
            scope = scope.parent
        return ".".join((self.relative[dotted[0]],) + tuple(dotted[1:]))

    def resolve_expr(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        return self.resolve(dotted_name(expr), frame)
