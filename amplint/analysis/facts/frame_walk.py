"""Visiting a module in source order knowing each node's frame (function, class, with block),
and telling a value tracker (half_values.Float16Values) about every assignment on the way."""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import Frame


def frames_by_body(facts) -> Dict[int, Frame]:
    """id(body node) -> the frame that body belongs to (functions, classes, with blocks)."""
    found = facts.__dict__.get("_frames_by_body")
    if found is None:
        found = {}
        for frame in facts.tree.frames:
            body = getattr(frame.node, "body", None)
            if frame.kind != "module" and body is not None:
                found[id(body)] = frame
        facts.__dict__["_frames_by_body"] = found
    return found


class FrameWalker(cst.CSTVisitor):
    """Visits the module in source order knowing each node's frame (`self.frame`), and tells
    `values` about every assignment once its value has been visited."""

    def __init__(
        self, facts, values=None, start: Optional[Frame] = None
    ) -> None:
        """`values`: told `note_assign(targets, value, frame)` and `note_call(call, frame)` (a
        Float16Values), or None."""
        self.bodies = frames_by_body(facts)
        self.stack: List[Frame] = [start or facts.tree.module_frame]
        self.values = values

    @property
    def frame(self) -> Frame:
        return self.stack[-1]

    def walk(self, root: cst.CSTNode) -> None:
        """`root.visit(self)` over the code nodes only, in LibCST's visit order, without
        LibCST's visitor rebuilding every node it visits (issue 34). Subclasses hook code
        nodes only (`visit_Call`, ...), never whitespace or punctuation."""
        kind = type(self)
        if kind.on_visit is FrameWalker.on_visit and kind.on_leave is FrameWalker.on_leave:
            self._walk(root, {})
            return
        if self.on_visit(root):
            for child in children_in_visit_order(root):
                self.walk(child)
        self.on_leave(root)

    def _walk(self, node: cst.CSTNode, hooks: Dict[type, tuple]) -> None:
        """`on_visit`/`on_leave` inlined: the subclass's `visit_X`/`leave_X` looked up once
        per node type (LibCST's own no-op ones left out) instead of by name for every node."""
        kind = type(node)
        found = hooks.get(kind)
        if found is None:
            found = hooks[kind] = _hooks(type(self), kind)
        visit, leave = found
        key = id(node)
        frame = self.bodies.get(key)
        if frame is not None:
            self.stack.append(frame)
        if visit is None or visit(self, node) is not False:
            for child in children_in_visit_order(node):
                self._walk(child, hooks)
        if leave is not None:
            leave(self, node)
        if frame is not None:
            self.stack.pop()
        if self.values is not None and kind in _NOTED:
            self._note(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        frame = self.bodies.get(id(node))
        if frame is not None:
            self.stack.append(frame)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if id(original_node) in self.bodies:
            self.stack.pop()
        if self.values is None:
            return
        self._note(original_node)

    def _note(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call):
            self.values.note_call(node, self.frame)
        elif isinstance(node, cst.Assign):
            self.values.note_assign([t.target for t in node.targets], node.value, self.frame)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self.values.note_assign([node.target], node.value, self.frame)
        elif isinstance(node, cst.For):
            self.values.note_assign([node.target], None, self.frame)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self.values.note_assign([node.asname.name], None, self.frame)
        elif isinstance(node, cst.NamedExpr):
            self.values.note_assign([node.target], node.value, self.frame)


_BINDERS = frozenset((cst.Assign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr))
_NOTED = _BINDERS | {cst.Call}  # a call: what it passes, as of this point of the walk


def _hooks(walker: type, kind: type) -> tuple:
    """(visit_X, leave_X) of `walker` for node type `kind`; None where it has only LibCST's."""
    name = kind.__name__
    visit = getattr(walker, "visit_" + name, None)
    leave = getattr(walker, "leave_" + name, None)
    if visit is getattr(cst.CSTVisitor, "visit_" + name, None):
        visit = None
    if leave is getattr(cst.CSTVisitor, "leave_" + name, None):
        leave = None
    return visit, leave
