"""The records of the `ast` walk (ast_tree.AstCollector): call and assignment sites, and frames
that know their scope, function and class from the start (facts.tree.Frame walks its parents
each time it is asked, and the summaries ask for every call and name)."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from amplint.analysis.facts.tree import Frame
from amplint.analysis.project.flowfacts import frame_key


class CallSite:
    __slots__ = ("node", "frame", "dotted", "parent", "args", "line")

    def __init__(self, node: ast.Call, frame: Frame, dotted_name, parent, args) -> None:
        self.node = node
        self.frame = frame
        self.dotted: Optional[Tuple[str, ...]] = dotted_name
        self.parent = parent
        self.args: List[Tuple[Optional[str], str, ast.expr]] = args  # call_args(node)
        self.line = 0  # SourcePositions.line, once asked


class AssignSite:
    __slots__ = ("targets", "value", "frame")

    def __init__(self, targets: Tuple[ast.expr, ...], value: ast.expr, frame: Frame) -> None:
        self.targets = targets
        self.value = value
        self.frame = frame


class AstFrame(Frame):
    """A Frame whose `scope`, `function` and `class_frame` are set once, when it is made (the
    summary asks them for every call and name; Frame walks its parents each time). `key`:
    frame_key of a function frame, once asked; `roots`: Names' resolution of a root name in
    this scope (see ast_summary._ScopedNames)."""

    scope = None  # type: ignore[assignment]  (plain attributes shadow Frame's properties)
    function = None  # type: ignore[assignment]
    class_frame = None  # type: ignore[assignment]


def new_frame(kind: str, node, parent: Optional[AstFrame], name: str = "") -> AstFrame:
    frame = AstFrame(kind, node, parent, name)
    scope = frame if kind != "with" else parent.scope  # type: ignore[union-attr]
    frame.scope = scope
    frame.function = frame if kind == "function" else (parent.function if parent is not None else None)
    up = scope.parent
    frame.class_frame = up if scope.kind == "function" and up is not None and up.kind == "class" else None
    frame.key = None
    frame.roots = {}
    frame.held = {}  # ast_values: what a name holds in this scope
    frame.returns = []  # its own `return value` statements, in walk order
    frame.loops = []  # its own `for` statements, in walk order
    frame.ast_aliases = {}  # Frame.aliases with `ast` values (ast_aliases.keep_aliases)
    return frame


def function_key(frame) -> str:
    """frame_key of an AstFrame, remembered on it ("" for none)."""
    key = frame.key
    if key is None:
        key = frame.key = frame_key(frame) or ""
    return key


def release(frames: List[AstFrame]) -> None:
    """Break the cycles of a walk's frames once its records are read (a frame is its own scope
    and function, a parent holds its children, a call site its frame): the frames, call sites
    and the `ast` tree they hold are then freed by reference counting when dropped, not left
    for a collection to walk. The mixed tree's pass, at one job: its one young collection after
    scaler_entries walked 322K objects of such garbage (0.35 s)."""
    for frame in frames:
        frame.__dict__.clear()
    frames.clear()
