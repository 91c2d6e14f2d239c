"""One pass over the module that records what every rule needs: scopes, calls, assignments.

Nothing here resolves names or decides what autocast is: that happens after the walk, when every
scope's bindings are known (a name assigned late in a function still shadows an import).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

Dotted = Tuple[str, ...]


def dotted_name(expr: cst.BaseExpression) -> Optional[Dotted]:
    """`torch.nn.functional` -> ("torch", "nn", "functional"); None for anything else."""
    parts: List[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return tuple(reversed(parts))
    return None


def receiver_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a call chain: `Net().cuda().half` -> `Net()`'s func `Net`; `x.a.b` -> `x`."""
    while True:
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute):
                expr = expr.func.value
            else:
                return expr
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        else:
            return expr


@dataclass(eq=False)
class Frame:
    """A scope (module, class, function) or the body of a `with` statement."""

    kind: str  # "module" | "class" | "function" | "with"
    node: cst.CSTNode
    parent: Optional["Frame"]
    name: str = ""
    imports: Dict[str, str] = field(default_factory=dict)  # bound name -> qualified module path
    bindings: Set[str] = field(default_factory=set)  # names bound here other than by import
    functions: Dict[str, "Frame"] = field(default_factory=dict)  # defs directly in this scope
    calls: List["CallSite"] = field(default_factory=list)  # calls whose scope is this function
    # Filled in after the walk by the region analysis:
    region: object = None  # Region of a `with` frame / decorator region of a function frame
    inherited: object = None  # Region a function inherits from its callers

    @property
    def scope(self) -> "Frame":
        """The enclosing module/class/function frame (a with frame is not a scope)."""
        frame = self
        while frame.kind == "with":
            frame = frame.parent  # type: ignore[assignment]
        return frame

    @property
    def function(self) -> Optional["Frame"]:
        frame: Optional[Frame] = self
        while frame is not None and frame.kind != "function":
            frame = frame.parent
        return frame

    @property
    def class_frame(self) -> Optional["Frame"]:
        """For a method's frame: its class."""
        scope = self.scope
        if scope.kind == "function" and scope.parent is not None and scope.parent.kind == "class":
            return scope.parent
        return None


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    frame: Frame
    dotted: Optional[Dotted]  # raw dotted func name, unresolved
    line_stmt: Optional[cst.SimpleStatementLine]  # the simple statement line holding it
    top_stmt: Optional[cst.BaseStatement]  # the statement directly in the frame's body


@dataclass(eq=False)
class AssignSite:
    targets: Tuple[cst.BaseExpression, ...]
    value: cst.BaseExpression
    frame: Frame
    line_stmt: Optional[cst.SimpleStatementLine]


_COMPOUND = (
    cst.If, cst.For, cst.While, cst.Try, cst.With, cst.FunctionDef, cst.ClassDef,
    cst.SimpleStatementLine,
)


class Collector(cst.CSTVisitor):
    """Walks the module once. Frames are pushed for bodies only: decorators, defaults and
    `with` items are evaluated in the enclosing frame, as Python does."""

    def __init__(self, module: cst.Module) -> None:
        self.module_frame = Frame("module", module, None)
        self.frame = self.module_frame
        self.frames: List[Frame] = [self.module_frame]
        self.calls: List[CallSite] = []
        self.assigns: List[AssignSite] = []
        self.withs: List[Tuple[cst.With, Frame]] = []  # with statement, its body frame
        self.classes: Dict[str, Frame] = {}
        self._line_stmt: Optional[cst.SimpleStatementLine] = None
        self._top: Dict[int, Optional[cst.BaseStatement]] = {id(self.module_frame): None}
        self._depth: Dict[int, int] = {id(self.module_frame): 0}

    # -- frames ---------------------------------------------------------------------------
    def _push(self, kind: str, node: cst.CSTNode, name: str = "") -> Frame:
        frame = Frame(kind, node, self.frame, name)
        self.frames.append(frame)
        self._depth[id(frame)] = 0
        self._top[id(frame)] = None
        self.frame = frame
        return frame

    def _pop(self) -> None:
        self.frame = self.frame.parent  # type: ignore[assignment]

    def _enter_stmt(self, node: cst.BaseStatement) -> None:
        key = id(self.frame)
        if self._depth[key] == 0:
            self._top[key] = node
        self._depth[key] += 1

    def _leave_stmt(self) -> None:
        self._depth[id(self.frame)] -= 1

    # -- statements -----------------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter_stmt(node)
        self._line_stmt = node

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._leave_stmt()
        self._line_stmt = None

    def visit_If(self, node: cst.If) -> None:
        self._enter_stmt(node)

    def leave_If(self, node: cst.If) -> None:
        self._leave_stmt()

    def visit_For(self, node: cst.For) -> None:
        self._enter_stmt(node)
        self._bind_target(node.target)

    def leave_For(self, node: cst.For) -> None:
        self._leave_stmt()

    def visit_While(self, node: cst.While) -> None:
        self._enter_stmt(node)

    def leave_While(self, node: cst.While) -> None:
        self._leave_stmt()

    def visit_Try(self, node: cst.Try) -> None:
        self._enter_stmt(node)

    def leave_Try(self, node: cst.Try) -> None:
        self._leave_stmt()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name)

    def visit_With(self, node: cst.With) -> Optional[bool]:
        self._enter_stmt(node)
        for item in node.items:
            item.visit(self)
            if item.asname is not None:
                self._bind_target(item.asname.name)
        frame = self._push("with", node)
        self.withs.append((node, frame))
        node.body.visit(self)
        self._pop()
        self._leave_stmt()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
        self._enter_stmt(node)
        for dec in node.decorators:
            dec.visit(self)
        for arg in node.bases:
            arg.visit(self)
        self.frame.scope.bindings.add(node.name.value)
        frame = self._push("class", node, node.name.value)
        self.classes.setdefault(node.name.value, frame)
        node.body.visit(self)
        self._pop()
        self._leave_stmt()
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self._enter_stmt(node)
        for dec in node.decorators:
            dec.visit(self)
        node.params.visit(self)
        scope = self.frame.scope
        scope.bindings.add(node.name.value)
        frame = self._push("function", node, node.name.value)
        scope.functions.setdefault(node.name.value, frame)
        for param in _all_params(node.params):
            frame.bindings.add(param.name.value)
        node.body.visit(self)
        self._pop()
        self._leave_stmt()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # Lambda parameters shadow names only inside the lambda; rare enough to ignore.
        return None

    # -- imports and bindings -------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        scope = self.frame.scope
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                scope.imports[alias.asname.name.value] = ".".join(full)
            else:
                scope.imports[full[0]] = full[0]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted_name(node.module)
        if base is None:
            return
        scope = self.frame.scope
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            bound = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            scope.imports[bound] = ".".join(base + (alias.name.value,))

    def _bind_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.frame.scope.bindings.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = tuple(t.target for t in node.targets)
        for target in targets:
            self._bind_target(target)
        self.assigns.append(AssignSite(targets, node.value, self.frame, self._line_stmt))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target)
        if node.value is not None:
            self.assigns.append(AssignSite((node.target,), node.value, self.frame, self._line_stmt))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target)

    # -- calls ----------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        site = CallSite(
            node, self.frame, dotted_name(node.func), self._line_stmt, self._top[id(self.frame)]
        )
        self.calls.append(site)
        function = self.frame.function
        if function is not None:
            function.calls.append(site)
        else:
            self.module_frame.calls.append(site)


def _all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    if params.star_kwarg is not None:
        yield params.star_kwarg
