"""Deprecated AMP API references of a file (for AMP130): every use of `torch.cuda.amp.*` /
`torch.cpu.amp.*` under any import spelling, with its frame and role (call, decorator, value),
the deprecated imports, every mention of each name, and whether a use is version-gated (a
fallback for old torch: `except ImportError:`, the old side of a version test, `getattr`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.data.deprecated_amp import (
    APIS, DEPRECATED_MODULES, SPELLINGS, VERSION_LITERAL, VERSION_TEST,
)
from amplint.analysis.facts.names import alternatives, resolve
from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import Frame, dotted_name, import_bindings

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.With)


@dataclass(eq=False)
class DeprecatedRef:
    node: cst.BaseExpression  # the Name/Attribute that names the API
    root: cst.Name  # the chain's first name (`tamp` in `tamp.autocast`)
    frame: Frame
    api: str
    kind: str  # "call" | "decorator" | "reference"
    call: Optional[cst.Call] = None
    # the name is also imported from another backend (`from torch.musa.amp import autocast`
    # under an `if`): reported, but a rewrite to the CUDA form would break that backend
    other_backend: Optional[str] = None


@dataclass(eq=False)
class ImportBinding:
    bound: str
    alias: cst.ImportAlias
    statement: cst.CSTNode  # the Import / ImportFrom small statement
    line: cst.SimpleStatementLine
    gated: bool = False


class DeprecatedRefs:
    """One walk (`walk(module)`): references to the deprecated APIs (with their frame and role),
    every mention of each name, the deprecated imports, and parent links for the gating checks.
    The walk goes in LibCST's visit order over the code nodes (not LibCST's visitor, which
    rebuilds every node it visits): the children of an import and of a dotted name are not
    entered, nor their parents recorded."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.parents: Dict[int, cst.CSTNode] = {}
        self._frames_by_node = {
            id(frame.node): frame for frame in facts.tree.frames
            if frame.kind in ("function", "class", "with")
        }
        self._frame_stack: List[Frame] = [facts.tree.module_frame]
        self.refs: List[DeprecatedRef] = []
        self.mentions: Dict[str, List[cst.Name]] = {}
        self.deprecated_imports: List[ImportBinding] = []
        self.all_import_bindings: List[Tuple[str, str]] = []  # bound name, what it imports
        self._line: Optional[cst.SimpleStatementLine] = None
        self.line_index: Dict[int, int] = {}

    # -- structure ------------------------------------------------------------------------
    def walk(self, node: cst.CSTNode, parent: Optional[cst.CSTNode] = None) -> None:
        if parent is not None:
            self.parents[id(node)] = parent
        kind = type(node)
        if kind is cst.Name:
            if not (type(parent) is cst.Arg and parent.keyword is node):
                self._reference(node, (node.value,))
            return
        if kind is cst.Attribute:
            dotted = dotted_name(node)
            if dotted is None:
                self.walk(node.value, node)  # `.attr` of a computed value is no reference
            else:
                self._reference(node, dotted)
            return
        if kind is cst.SimpleStatementLine:
            self._line = node
            self.line_index[id(node)] = len(self.line_index)
        elif kind is cst.Import or kind is cst.ImportFrom:
            self._import(node)
            return
        scope = kind in _SCOPES
        for child in children_in_visit_order(node):
            if scope and child is node.body:
                self._frame_stack.append(self._frames_by_node.get(id(node), self._frame_stack[-1]))
                self.walk(child, node)
                self._frame_stack.pop()
            else:
                self.walk(child, node)

    @property
    def frame(self) -> Frame:
        return self._frame_stack[-1]

    def inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        current: Optional[cst.CSTNode] = node
        while current is not None:
            if current is ancestor:
                return True
            current = self.parents.get(id(current))
        return False

    def chain(self, node: cst.CSTNode) -> List[int]:
        """The ids of `node` and of its ancestors, innermost first."""
        out = []
        current: Optional[cst.CSTNode] = node
        while current is not None:
            out.append(id(current))
            current = self.parents.get(id(current))
        return out

    def _ancestors(self, node: cst.CSTNode):
        child = node
        parent = self.parents.get(id(node))
        while parent is not None:
            yield child, parent
            child, parent = parent, self.parents.get(id(parent))

    def only_statement(self, line: cst.SimpleStatementLine) -> bool:
        parent = self.parents.get(id(line))
        return isinstance(parent, cst.IndentedBlock) and len(parent.body) == 1

    def next_statement(self, line: cst.SimpleStatementLine) -> Optional[cst.BaseStatement]:
        parent = self.parents.get(id(line))
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)):
            return None
        for index, stmt in enumerate(body):
            if stmt is line:
                return body[index + 1] if index + 1 < len(body) else None
        return None

    # -- imports --------------------------------------------------------------------------
    def _import(self, node) -> None:
        for bound, full, alias in import_bindings(node):
            if isinstance(node, cst.ImportFrom) and full.startswith("."):
                return  # relative: never torch
            self.all_import_bindings.append((bound, full))
            deprecated = full in DEPRECATED_MODULES if isinstance(node, cst.Import) else (
                is_deprecated(full)
            )
            if deprecated:
                self._deprecated(bound, alias, node)

    def _deprecated(self, bound: str, alias: cst.ImportAlias, statement: cst.CSTNode) -> None:
        line = self._line
        if line is None or not any(s is statement for s in line.body):
            return
        binding = ImportBinding(bound, alias, statement, line)
        binding.gated = self.gated(statement, self.frame)
        self.deprecated_imports.append(binding)

    # -- references -----------------------------------------------------------------------
    def _reference(self, node: cst.BaseExpression, dotted) -> None:
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        assert isinstance(root, cst.Name)
        self.mentions.setdefault(root.value, []).append(root)
        qualified = resolve(dotted, self.frame, aliases=False)
        if qualified is None:
            return
        api = canonical(qualified)
        others = [canonical(o) for o in alternatives(dotted, self.frame)]
        if api not in APIS:
            # `from torch.cuda.amp import autocast` overridden on one path only by another
            # backend's import: the deprecated one is what runs on CUDA
            if is_modern(api):
                return
            api = next((o for o in others if o in APIS), "")
            if not api:
                return
            others = [qualified]
        other = next((o for o in others if o not in APIS and not is_modern(o)), None)
        parent = self.parents.get(id(node))
        if isinstance(parent, cst.Call) and parent.func is node:
            ref = DeprecatedRef(node, root, self.frame, api, "call", parent)
        elif isinstance(parent, cst.Decorator) and parent.decorator is node:
            ref = DeprecatedRef(node, root, self.frame, api, "decorator")
        elif self._used_as_factory(node):
            ref = DeprecatedRef(node, root, self.frame, api, "reference")
        else:
            return
        ref.other_backend = other
        self.refs.append(ref)

    def _used_as_factory(self, node: cst.CSTNode) -> bool:
        """A value that will be called later: bound to a name (`ctx = torch.cuda.amp.autocast`,
        also as a branch of a conditional) or handed to `partial`. Identity uses (`f is
        torch.cuda.amp.autocast`, members of a tuple or set, annotations, isinstance) do not
        warn and must keep naming the deprecated class."""
        for child, parent in self._ancestors(node):
            if isinstance(parent, cst.IfExp) and child is not parent.test:
                continue
            if isinstance(parent, cst.BooleanOperation):
                continue
            if isinstance(parent, (cst.Assign, cst.AnnAssign)):
                return child is parent.value
            if isinstance(parent, cst.Arg):
                call = self.parents.get(id(parent))
                return (
                    isinstance(call, cst.Call)
                    and parent is (call.args[0] if call.args else None)
                    and (dotted_name(call.func) or ("",))[-1] == "partial"
                )
            return False
        return False

    # -- version gates ----------------------------------------------------------------------
    def gated(self, node: cst.CSTNode, frame: Frame) -> bool:
        for child, parent in self._ancestors(node):
            if isinstance(parent, cst.ExceptHandler):
                return True
            if isinstance(parent, cst.Call) and child is not parent.func and (
                isinstance(parent.func, cst.Name) and parent.func.value == "getattr"
            ):
                return True
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                bound = _version_bound(parent.test)
                if bound is not None:
                    # `if version >= "1.6":` runs on current torch; its `else` is the fallback
                    if (child is parent.body) != (bound == "lower"):
                        return True
                    continue
                if VERSION_TEST.search(_code(parent.test)) or _mentions_modern(parent, frame):
                    return True
            if isinstance(parent, cst.Try) and _mentions_modern(parent, frame):
                return True
        return False




def _version_bound(test: cst.BaseExpression) -> Optional[str]:
    """"lower" for a minimum-version test (`digit_version(TORCH_VERSION) >= digit_version("1.6")`,
    `torch.__version__ >= (1, 6)`), "upper" for a maximum; None for anything else."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    operator = target.operator
    if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        direction = "lower"
    elif isinstance(operator, (cst.LessThan, cst.LessThanEqual)):
        direction = "upper"
    else:
        return None
    left, right = test.left, target.comparator
    if _is_version_constant(left) and not _is_version_constant(right):
        left, right = right, left
        direction = "upper" if direction == "lower" else "lower"
    if not _is_version_constant(right) or not VERSION_TEST.search(_code(left)):
        return None
    return direction


def _is_version_constant(expr: cst.BaseExpression) -> bool:
    """"1.6.0", 1.6, (1, 6), `digit_version("1.6.0")`, `version.parse("2.4")`."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1:
        expr = expr.args[0].value
    if isinstance(expr, cst.Tuple):
        return bool(expr.elements) and all(isinstance(e.value, cst.Integer) for e in expr.elements)
    if isinstance(expr, (cst.SimpleString, cst.Float)):
        return bool(VERSION_LITERAL.match(expr.value))
    return False


def is_modern(full: str) -> bool:
    return full.startswith("torch.amp.") or full in ("torch.autocast", "torch.GradScaler")


def is_deprecated(full: str) -> bool:
    return canonical(full) in APIS or full in DEPRECATED_MODULES


def canonical(qualified: str) -> str:
    return SPELLINGS.get(qualified, qualified)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


class _Modern(cst.CSTVisitor):
    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        dotted = dotted_name(node)
        if dotted is None:
            return True
        qualified = resolve(dotted, self.frame, aliases=False) or ""
        if qualified.startswith("torch.amp") or qualified == "torch.GradScaler":
            self.found = True
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = dotted_name(node.module) if node.module is not None else None
        if module and ".".join(module).startswith("torch.amp"):
            self.found = True
        if module and ".".join(module) == "torch" and not isinstance(node.names, cst.ImportStar):
            if any(isinstance(a.name, cst.Name) and a.name.value in ("amp", "autocast", "GradScaler")
                   for a in node.names):
                self.found = True
        return False


def _mentions_modern(node: cst.CSTNode, frame: Frame) -> bool:
    visitor = _Modern(frame)
    node.visit(visitor)
    return visitor.found
