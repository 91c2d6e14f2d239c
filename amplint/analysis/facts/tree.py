"""One pass over the module that records what every rule needs: scopes, calls, assignments.

Nothing here resolves names or decides what autocast is: that happens after the walk, when every
scope's bindings are known (a name assigned late in a function still shadows an import).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import (  # noqa: F401  (re-exported: the node questions most facts ask)
    Dotted, argument, child_fields, dotted_name, import_bindings, iter_nodes, keyword, positional,
    receiver_root, self_attr, code_children,
)


@dataclass(eq=False)
class Frame:
    """A scope (module, class, function) or the body of a `with` statement."""

    kind: str  # "module" | "class" | "function" | "with"
    node: cst.CSTNode
    parent: Optional["Frame"]
    name: str = ""
    imports: Dict[str, str] = field(default_factory=dict)  # bound name -> qualified module path
    # other imports of the same name in this scope (a fallback, or another backend's under an
    # `if`): bound name -> what they import
    alternatives: Dict[str, List[str]] = field(default_factory=dict)
    bindings: Set[str] = field(default_factory=set)  # names bound here other than by import
    # relative imports, which `imports` leaves to the project pass: bound name -> what it
    # imports as written (`.utils.sample`), None when the scope imports that name twice
    relative: Dict[str, Optional[str]] = field(default_factory=dict)
    functions: Dict[str, "Frame"] = field(default_factory=dict)  # defs directly in this scope
    calls: List["CallSite"] = field(default_factory=list)  # calls whose scope is this function
    # names this scope binds exactly once, by `name = <dotted name>` or `name = partial(<dotted
    # name>, kw=...)` straight in its body (no branch), never declared global/nonlocal or
    # shadowed by a comprehension/lambda/match name of the file: name -> the value's node
    aliases: Dict[str, cst.BaseExpression] = field(default_factory=dict)
    # the module frame only: id(call node) -> what a project function of another file returns
    # to that call (facts/returned_values.py EntryReturn, set by FileFacts from the entries)
    returned: Optional[Dict[int, object]] = None
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


class Collector:
    """Walks the module once. Frames are pushed for bodies only: decorators, defaults and
    `with` items are evaluated in the enclosing frame, as Python does."""

    def __init__(self, module: cst.Module) -> None:
        self.module_frame = Frame("module", module, None)
        self.frame = self.module_frame
        self.frames: List[Frame] = [self.module_frame]
        self.calls: List[CallSite] = []
        self.assigns: List[AssignSite] = []
        self.line_order: Dict[int, int] = {}  # id(simple statement line) -> source order
        self.walrus_names: Set[str] = set()  # names an assignment expression binds anywhere
        self.withs: List[Tuple[cst.With, Frame]] = []  # with statement, its body frame
        # each `for` clause of a comprehension, in walk order, with the frame it runs in
        self.comprehensions: List[Tuple[cst.CompFor, Frame]] = []
        self.loops: List[Tuple[cst.For, Frame]] = []  # each `for` statement, with its frame
        self.lambdas: List[Tuple[cst.Lambda, Frame]] = []  # each lambda, with the frame defining it
        self.classes: Dict[str, Frame] = {}
        self._line_stmt: Optional[cst.SimpleStatementLine] = None
        self._fallback: List[Set[str]] = []  # names a `try` body imported, per enclosing handler
        self._top: Dict[int, Optional[cst.BaseStatement]] = {id(self.module_frame): None}
        self._depth: Dict[int, int] = {id(self.module_frame): 0}
        self._counts: Dict[Tuple[int, str], int] = {}  # (id(scope), name) -> bindings seen
        self._alias_sites: List[Tuple[Frame, str, cst.BaseExpression]] = []
        self._unaliasable: Set[str] = set()  # global/nonlocal, comprehension, lambda, match names
        # names a `global`/`nonlocal` statement anywhere declares: a function may rebind them
        # (the dtype fact's module-level counts read this instead of walking the file again)
        self.declared_names: Set[str] = set()
        self._enter = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._statement, cst.While: self._statement, cst.Try: self._try,
            cst.For: self._for,
            cst.With: self._with,
            cst.ClassDef: self._class,
            cst.FunctionDef: self._function,
            cst.Import: self._import,
            cst.ImportFrom: self._import,
            cst.ExceptHandler: self._except,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.NamedExpr: self._named_expr,
            cst.Call: self._call,
            cst.Global: self._global, cst.Nonlocal: self._global,
            cst.CompFor: self._comp_for, cst.Lambda: self._lambda,
            cst.MatchAs: self._match_name, cst.MatchStar: self._match_name,
            cst.Del: self._del,
        }
        self.walk(module)
        self._keep_aliases()

    # -- traversal ------------------------------------------------------------------------
    def walk(self, node: cst.CSTNode) -> None:
        handler = self._enter.get(type(node))
        if handler is not None and handler(node) is False:
            return  # the handler walked (or skipped) the children itself
        self.walk_children(node)

    def walk_children(self, node: cst.CSTNode) -> None:
        for child in code_children(node):
            self.walk(child)

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
    def _simple_line(self, node: cst.SimpleStatementLine) -> bool:
        self._enter_stmt(node)
        self.line_order[id(node)] = len(self.line_order)
        self._line_stmt = node
        self.walk_children(node)
        self._line_stmt = None
        self._leave_stmt()
        return False

    def _statement(self, node: cst.BaseStatement) -> bool:
        self._enter_stmt(node)
        self.walk_children(node)
        self._leave_stmt()
        return False

    def _try(self, node: cst.Try) -> bool:
        """`try: from torch.amp import autocast / except ImportError: from torch.cuda.amp import
        autocast`: the handler runs only where the body's import failed, so the name keeps the
        body's meaning (`alternatives` records the other)."""
        self._enter_stmt(node)
        scope = self.frame.scope
        before = dict(scope.imports)
        self.walk(node.body)
        imported = {name for name, target in scope.imports.items() if before.get(name) != target}
        for handler in node.handlers:
            self._fallback.append(imported)
            self.walk(handler)
            self._fallback.pop()
        for part in (node.orelse, node.finalbody):
            if part is not None:
                self.walk(part)
        self._leave_stmt()
        return False

    def _for(self, node: cst.For) -> bool:
        self._bind_target(node.target)
        self.loops.append((node, self.frame))
        return self._statement(node)

    def _except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name)

    def _with(self, node: cst.With) -> bool:
        self._enter_stmt(node)
        for item in node.items:
            self.walk(item)
            if item.asname is not None:
                self._bind_target(item.asname.name)
        frame = self._push("with", node)
        self.withs.append((node, frame))
        self.walk(node.body)
        self._pop()
        self._leave_stmt()
        return False

    def _class(self, node: cst.ClassDef) -> bool:
        self._enter_stmt(node)
        for dec in node.decorators:
            self.walk(dec)
        for arg in node.bases:
            self.walk(arg)
        self._bind_name(self.frame.scope, node.name.value)
        frame = self._push("class", node, node.name.value)
        self.classes.setdefault(node.name.value, frame)
        self.walk(node.body)
        self._pop()
        self._leave_stmt()
        return False

    def _function(self, node: cst.FunctionDef) -> bool:
        self._enter_stmt(node)
        for dec in node.decorators:
            self.walk(dec)
        self.walk(node.params)
        scope = self.frame.scope
        self._bind_name(scope, node.name.value)
        frame = self._push("function", node, node.name.value)
        scope.functions.setdefault(node.name.value, frame)
        for param in _all_params(node.params):
            self._bind_name(frame, param.name.value)
        self.walk(node.body)
        self._pop()
        self._leave_stmt()
        return False

    # -- imports and bindings -------------------------------------------------------------
    def _import(self, node) -> bool:
        scope = self.frame.scope
        fallback = self._fallback[-1] if self._fallback else ()
        for bound, target, _ in import_bindings(node):
            if target.startswith("."):  # relative imports: the project pass resolves them
                known = scope.relative.get(bound, target)
                scope.relative[bound] = target if known == target else None
            else:
                if scope.imports.get(bound, target) != target:
                    scope.alternatives.setdefault(bound, []).append(
                        target if bound in fallback else scope.imports[bound]
                    )
                if bound in fallback:
                    continue
                scope.imports[bound] = target
        return False

    def _bind_name(self, scope: Frame, name: str) -> None:
        scope.bindings.add(name)
        key = (id(scope), name)
        self._counts[key] = self._counts.get(key, 0) + 1

    def _bind_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._bind_name(self.frame.scope, target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)

    def _assign(self, node: cst.Assign) -> None:
        targets = tuple(t.target for t in node.targets)
        for target in targets:
            self._bind_target(target)
        self.assigns.append(AssignSite(targets, node.value, self.frame, self._line_stmt))
        frame = self.frame
        if (
            len(targets) == 1 and isinstance(targets[0], cst.Name)
            and frame.kind in ("module", "function") and self._depth[id(frame)] == 1
            and _alias_value(node.value)
        ):
            self._alias_sites.append((frame, targets[0].value, node.value))

    def _global(self, node) -> None:
        for item in node.names:
            self._unaliasable.add(item.name.value)
            self.declared_names.add(item.name.value)

    def _comp_for(self, node: cst.CompFor) -> None:
        self.comprehensions.append((node, self.frame))
        self._unaliasable.update(_target_names(node.target))

    def _lambda(self, node: cst.Lambda) -> None:
        self.lambdas.append((node, self.frame))
        for param in _all_params(node.params):
            self._unaliasable.add(param.name.value)

    def _match_name(self, node) -> None:
        if node.name is not None:
            self._unaliasable.add(node.name.value)

    def _del(self, node: cst.Del) -> None:
        self._unaliasable.update(_target_names(node.target))

    def bound_once(self, scope: Frame, name: str) -> bool:
        """`name` has exactly one binding in `scope` (a parameter, def, assignment...), and no
        global/nonlocal/del/walrus/comprehension/lambda/match binding of it in the file."""
        return (
            self._counts.get((id(scope), name)) == 1 and name not in self._unaliasable
            and name not in self.walrus_names and name not in scope.imports
        )

    def _keep_aliases(self) -> None:
        for frame, name, value in self._alias_sites:
            if (
                self._counts.get((id(frame), name)) == 1 and name not in self._unaliasable
                and name not in self.walrus_names and name not in frame.imports
                and name not in frame.alternatives
            ):
                frame.aliases[name] = value
        self._alias_sites = []

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self._bind_target(node.target)
        if node.value is not None:
            self.assigns.append(AssignSite((node.target,), node.value, self.frame, self._line_stmt))

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target)

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target)
        if isinstance(node.target, cst.Name):
            self.walrus_names.add(node.target.value)

    # -- calls ----------------------------------------------------------------------------
    def _call(self, node: cst.Call) -> None:
        frame = self.frame
        site = CallSite(node, frame, dotted_name(node.func), self._line_stmt, self._top[id(frame)])
        self.calls.append(site)
        function = frame.function
        (function or self.module_frame).calls.append(site)


def scope_key(frame: Frame) -> str:
    """The key of the function a frame is in, as the file's summary writes it: `Class.method`,
    `outer.inner`, "" at module level."""
    parts = []
    current: Optional[Frame] = frame
    while current is not None and current.kind != "module":
        if current.kind in ("function", "class"):
            parts.append(current.name)
        current = current.parent
    return ".".join(reversed(parts))

def _alias_value(value: cst.BaseExpression) -> bool:
    """`value` may name a function object: a dotted name, `partial(<dotted>, kw=...)`, or the
    call of a named function, which may return one (a project function of another file:
    facts/returned_values.py). What the call is gets resolved at the use (`names.resolve`):
    here imports may still follow."""
    if dotted_name(value):
        return True
    return isinstance(value, cst.Call) and dotted_name(value.func) is not None


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    for node in iter_nodes(target):
        if isinstance(node, cst.Name):
            yield node.value


def _all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    if params.star_kwarg is not None:
        yield params.star_kwarg


def own_statements(body) -> Iterator[cst.CSTNode]:
    """Every statement of a function body, small ones included, in no particular order; the
    bodies of nested functions and classes are skipped (their def statements are yielded)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, (cst.BaseSmallStatement, cst.FunctionDef, cst.ClassDef)):
            yield node
        elif isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(node.body)
        elif isinstance(node, cst.BaseCompoundStatement):
            yield node
            for name in ("body", "orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if isinstance(child, (list, tuple)):
                    stack.extend(child)
                elif child is not None:
                    stack.append(child)
        elif isinstance(node, (cst.Else, cst.ExceptHandler, cst.Finally)):
            stack.append(node.body)
