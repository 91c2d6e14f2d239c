"""Values that are half because of an autocast region, and where they go after it ends.

Each function body (and the module body) is read once in source order. An assignment under an
active float16/bfloat16 region (or one of unknown dtype) whose value is a matmul-family result
(`@`, `torch.mm/matmul/bmm/addmm/baddbmm`, `F.linear`, `conv*`) or a module output (a
`torch.nn.Linear/Conv*/LSTM/...` instance, or a module class of this file) defines a *half value*;
dtype-keeping steps (`.view`, `.detach`, `.transpose`, `[...]`, `F.relu`, ...) carry it to other
names. When the `with` of its region ends and no other region is active there, the value has
*escaped*: reads after that point are recorded with their definition, until the name is rebound
(`feats = feats.float()` ends it). Branches and loops are read straight through.

Alongside, the walk records the evidence that a value is float32 (a float factory without
`dtype=`, `.float()`, a parameter or buffer of a class, a `torch.nn.Linear`-like module's weight)
and which names are inputs from outside a region (parameters, locals assigned outside one); the
float32 questions themselves live in float32_evidence.py.
Shared by AMP105 (autocast-output-escape) and AMP111 (dtype-from-input); computed once per file
as `FileFacts.escape`. A general def-use fact may absorb the walk later.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.data.dtype_rules import aten_op
from amplint.analysis.facts.dtypes import PYTHON, region_policy
from amplint.analysis.facts.dtype_value import device_only, split_input
from amplint.analysis.facts.escape_callees import EscapeCallees
from amplint.analysis.facts.escape_params import escaped_by_callers
from amplint.analysis.facts.escape_entry import Entry  # noqa: F401 (re-exported: the rules read it here)
from amplint.analysis.facts.float32_evidence import Float32Evidence
from amplint.analysis.facts.fp16 import half_cast_dtype
from amplint.analysis.facts.half_evidence import lowers_here
from amplint.analysis.facts.syntax import params as _params, unparen as _unparen
from amplint.analysis.facts.half_values import frames_by_body
from amplint.analysis.facts.returned_escapes import (
    EntryParamEscaped, EntryReturnsEscaped, escaped_params, module_output,
)
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.syntax import code_children
from amplint.analysis.facts.tree import Frame, child_fields

HALF_REGION = (None, "float16", "bfloat16")
# which ops keep a value half (attributes too: `.T`, `.mH`, `.data`) and which make one half
# come from the one dtype table (amplint.analysis.data.dtype_rules) and the one answer AMP101
# reads (amplint.analysis.facts.half_evidence). A region's output is a non-leaf tensor: its
# `.grad` is None (torch warns), not a value of its dtype
KEEP_ATTRS = R.KEEP_ATTRS - {"grad"}


def may_escape(facts) -> bool:
    """Can the walk give an escaped value at all: a `with` of an active region ending (where
    `_statement` sets `escaped`), or an entry naming one from another file? False: a reader
    wanting only escaped values need not walk (mmdet's heads: decorator regions only)."""
    if any(isinstance(e, (EntryParamEscaped, EntryReturnsEscaped)) for e in facts.entries):
        return True
    return any(isinstance(frame.region, Region) and frame.region.active for _, frame in facts.tree.withs)


class EscapeAnalysis(Float32Evidence, EscapeCallees):
    def __init__(self, facts) -> None:
        self.facts = facts
        self.reads: Dict[int, Entry] = {}  # id(Name read) -> entry
        self.matmuls: List[Tuple[cst.BinaryOperation, Frame]] = []  # `a @ b` with its frame
        self._bodies = frames_by_body(facts)
        self._class_attrs: Dict[int, Dict[str, str]] = {}
        # id(function node) -> the entries of its `return <value>` statements, read so far
        self.returns: Dict[int, List[Entry]] = {}
        self._definer_counts: Optional[Dict[str, int]] = None
        self._sites: Optional[Dict[Tuple[int, str], list]] = None
        self._generators: Dict[int, bool] = {}
        self._walk_scope(facts.tree.module_frame, facts.module.body, {})
        for frame in facts.tree.frames:
            if frame.kind == "function":
                node = frame.node
                state = {
                    p.name.value: Entry("param")
                    for p in _params(node) if p.name.value not in ("self", "cls")
                }
                for name, cite in (escaped_params(facts, frame) if facts.entries else {}).items():
                    if name in state:  # half from a caller of another file, after its region
                        state[name] = Entry("half", node=node.name, escaped=node.name, cite=cite)
                body = node.body
                self._walk_scope(frame, body.body if isinstance(body, cst.IndentedBlock) else [body], state)
        # parameters every call of the file binds to an escaped half value: read again with them
        for frame, params in escaped_by_callers(self, facts):
            node = frame.node
            state = {p.name.value: params.get(p.name.value, Entry("param"))
                     for p in _params(node) if p.name.value not in ("self", "cls")}
            self.returns.pop(id(node), None)
            body = node.body
            self._walk_scope(frame, body.body if isinstance(body, cst.IndentedBlock) else [body], state)

    # -- questions the rules ask ----------------------------------------------------------
    def half_source(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Entry]:
        """The half entry `expr` holds because of a region: a read of a half name through
        dtype-keeping steps, or a matmul-family/module call under the region at `frame`."""
        root = self._root(expr, frame)
        if isinstance(root, cst.Name):
            entry = self.reads.get(id(root))
            return entry if entry is not None and entry.kind == "half" else None
        region = self._half_region(frame)
        if region is not None and self._produces_half(root, frame):
            return Entry("half", True, root, region)
        if self.facts.active_region(frame) is None:  # a call whose callee's region ended
            returned = self._method_return(root, frame) or self._remote_return(root, frame)
            if returned is not None and returned.kind == "half":
                return returned
        return None

    def escaped(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Entry]:
        entry = self.half_source(expr, frame)
        return entry if entry is not None and entry.escaped is not None else None

    def read(self, name: cst.Name) -> Optional[Entry]:
        return self.reads.get(id(name))

    def keep_root(self, expr: cst.BaseExpression, frame: Frame) -> cst.BaseExpression:
        """`expr` with its dtype-keeping steps taken off (`torch.triu(mask, 1)` -> `mask`)."""
        return self._root(expr, frame)

    # -- the walk -------------------------------------------------------------------------
    def _walk_scope(self, frame: Frame, body, state: Dict[str, Entry]) -> None:
        for stmt in body:
            self._statement(stmt, frame, state)

    def _statement(self, stmt: cst.CSTNode, frame: Frame, state: Dict[str, Entry]) -> None:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(stmt, cst.ClassDef):
                inner = self._bodies.get(id(stmt.body))
                if inner is not None and isinstance(stmt.body, cst.IndentedBlock):
                    self._walk_scope(inner, stmt.body.body, {})
            return  # functions are walked as scopes of their own
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small, frame, state)
            return
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._reads(item.item, frame, state)
                if item.asname is not None:
                    self._bind(item.asname.name, None, frame, state)
            inner = self._bodies.get(id(stmt.body), frame)
            self._suite(stmt.body, inner, state)
            region = inner.region if isinstance(inner.region, Region) else None
            if region is not None and region.active and self.facts.active_region(frame) is None:
                for name, entry in list(state.items()):
                    if entry.kind == "half" and entry.region is region and entry.escaped is None:
                        state[name] = replace(entry, escaped=stmt)
                returns = self.returns.get(id(frame.function.node)) if frame.function else None
                for i, entry in enumerate(returns or ()):  # returned from inside the region
                    if entry.kind == "half" and entry.region is region and entry.escaped is None:
                        returns[i] = replace(entry, escaped=stmt)
            return
        if isinstance(stmt, cst.For):
            self._reads(stmt.iter, frame, state)
            self._bind(stmt.target, None, frame, state)
        # other compound statements: expressions are reads, suites are walked in order
        for name in child_fields(type(stmt)):
            if isinstance(stmt, cst.For) and name in ("target", "iter"):
                continue
            value = getattr(stmt, name)
            for child in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(child, cst.BaseSuite):
                    self._suite(child, frame, state)
                elif isinstance(child, (cst.ExceptHandler, cst.Else, cst.Finally, cst.If)):
                    if isinstance(child, cst.ExceptHandler) and child.name is not None:
                        self._bind(child.name.name, None, frame, state)
                    self._statement(child, frame, state)
                elif isinstance(child, cst.BaseExpression):
                    self._reads(child, frame, state)

    def _suite(self, suite: cst.BaseSuite, frame: Frame, state) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._walk_scope(frame, suite.body, state)
        elif isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self._small(small, frame, state)

    def _small(self, small: cst.BaseSmallStatement, frame: Frame, state) -> None:
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            targets = (
                [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            )
            if small.value is not None:
                self._reads(small.value, frame, state)
            for target in targets:
                if not isinstance(target, cst.Name):
                    self._reads(target, frame, state)
            if small.value is None:
                return
            entry = self._value_entry(small.value, frame)
            split = split_input(_unparen(small.value), frame)
            for target in targets:
                if split is not None and isinstance(target, (cst.Tuple, cst.List)):
                    self._bind_parts(target, self._value_entry(split, frame), frame, state)
                    continue
                self._bind(target, entry if isinstance(target, cst.Name) else None, frame, state)
            return
        if isinstance(small, cst.AugAssign):
            self._reads(small.value, frame, state)
            self._reads(small.target, frame, state)
            return
        if isinstance(small, cst.Del):
            for target in _names(small.target):
                state.pop(target, None)
            return
        self._reads(small, frame, state)
        if isinstance(small, cst.Return) and frame.function is not None:
            entry = self._value_entry(small.value, frame) if small.value is not None else Entry("other")
            self.returns.setdefault(id(frame.function.node), []).append(entry)

    def _bind_parts(self, target, entry: Entry, frame: Frame, state) -> None:
        """`q, k, v = qkv.unbind(0)`: each part has the split tensor's dtype (a half value's
        parts are half values)."""
        for element in target.elements:
            plain = isinstance(element, cst.Element) and isinstance(element.value, cst.Name)
            keep = plain and entry.kind in ("half", "halfcast", "f32")
            self._bind(element.value, entry if keep else None, frame, state)

    def _bind(self, target, entry: Optional[Entry], frame: Frame, state) -> None:
        if isinstance(target, cst.Name):
            state[target.value] = entry or Entry(
                "other", self._half_region(frame) is not None
            )
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None, frame, state)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None, frame, state)

    def _reads(self, node: cst.CSTNode, frame: Frame, state) -> None:
        stack = [node]
        name_class, attribute_class, arg_class = cst.Name, cst.Attribute, cst.Arg
        lambda_class, binary_class = cst.Lambda, cst.BinaryOperation
        while stack:
            node = stack.pop()
            kind = type(node)  # concrete LibCST classes have no subclasses
            if kind is name_class:
                entry = state.get(node.value)
                if entry is not None:
                    self.reads[id(node)] = entry
                continue
            if kind is attribute_class or kind is arg_class:
                stack.append(node.value)
                continue
            if kind is lambda_class:
                stack.append(node.body)
                continue
            if kind is binary_class and isinstance(node.operator, cst.MatrixMultiply):
                self.matmuls.append((node, frame))
            stack.extend(code_children(node))

    # -- values ---------------------------------------------------------------------------
    def _half_region(self, frame: Frame) -> Optional[Region]:
        region = self.facts.active_region(frame)
        if region is not None and region.dtype in HALF_REGION:
            return region
        return None

    def _value_entry(self, value: cst.BaseExpression, frame: Frame) -> Entry:
        region = self._half_region(frame)
        root = self._root(value, frame)
        if isinstance(root, cst.Name):
            entry = self.reads.get(id(root))
            if entry is not None and entry.kind == "half":
                return replace(entry, value=value)
        if region is not None and self._produces_half(root, frame):
            return Entry("half", True, root, region, value=value)
        returned = self._method_return(value, frame) if region is None else None
        if returned is None and self.facts.active_region(frame) is None:
            returned = self._remote_return(root, frame)
        if returned is not None:
            return replace(returned, in_region=False, value=value)
        if isinstance(value, cst.Call) and half_cast_dtype(value, frame) is not None:
            return Entry("halfcast", region is not None, value=value)
        if self._module32_ctor(value, frame):
            return Entry("module32", region is not None, value=value)
        if self._float32(value, frame, 0):
            return Entry("f32", region is not None, value=value)
        return Entry("other", region is not None, value=value)

    def _root(self, expr: cst.BaseExpression, frame: Frame) -> cst.BaseExpression:
        """`expr` with dtype-keeping steps taken off: `feats.detach().view(n, -1)` -> `feats`."""
        for _ in range(32):
            expr = _unparen(expr)
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.Attribute) and expr.attr.value in KEEP_ATTRS:
                expr = expr.value
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
                self._keeps(expr.func.attr.value, frame)
                or (expr.func.attr.value == "to" and device_only(expr, frame))
            ) and resolve_expr(expr.func.value, frame) is None and _no_dtype(expr):
                expr = expr.func.value
            elif (
                isinstance(expr, cst.Call)
                and expr.args
                and expr.args[0].keyword is None
                and self._keeps(aten_op(resolve_expr(expr.func, frame) or ""), frame)
                and _no_dtype(expr)
            ):
                expr = expr.args[0].value
            elif isinstance(expr, cst.BinaryOperation) and not isinstance(
                expr.operator, cst.MatrixMultiply
            ):
                # `feats * 0.5`, `scores / math.sqrt(d)`: a Python number keeps the tensor's dtype
                if self._number(expr.right):
                    expr = expr.left
                elif self._number(expr.left):
                    expr = expr.right
                else:
                    return expr
            else:
                return expr
        return expr

    def _number(self, expr: cst.BaseExpression) -> bool:
        """A Python number: a literal, or what the dtype fact values as one at this read
        (`math.sqrt(d)`, `scale` bound to `1.0 / math.sqrt(d)`); asked of the fact only past
        the literals."""
        bare = _unparen(expr)  # a copy when parenthesised: the fact knows `expr` itself
        if isinstance(bare, (cst.Integer, cst.Float)):
            return True
        if isinstance(bare, cst.SimpleString):
            return False
        value = self.facts.dtypes.dtype(expr)
        return value is not None and bool(value.options) and value.options <= PYTHON

    def _keeps(self, op: Optional[str], frame: Frame) -> bool:
        """`op` gives a floating value its input's dtype where `frame` runs (no autocast list
        of the active region's device names it)."""
        if not op:
            return False
        if op.endswith("_") and not op.endswith("__"):
            op = op[:-1]  # in place: `relu_`, `detach_`
        if R.op_kind(op) not in ("keep", "float", "reduce"):
            return False
        region = self.facts.active_region(frame)
        return region is None or region_policy(region, op) == "none"

    def _lower(self, op: Optional[str], frame: Frame) -> bool:
        """`op` runs in the region's low dtype (torch's lower_precision_fp lists)."""
        return self.facts.active_region(frame) is not None and lowers_here(self.facts, op, frame)

    def _produces_half(self, expr: cst.BaseExpression, frame: Frame) -> bool:
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, cst.MatrixMultiply)
        if not isinstance(expr, cst.Call):
            return False
        known = self.facts.dtypes.dtype(expr)
        if known is not None and not known.may_be("float16", "bfloat16", "autocast"):
            return False  # the dtype fact's answer: `encoder(x)` whose forward ends `.float()`
        func = expr.func
        qualified = resolve_expr(func, frame)
        if qualified is not None and self._lower(aten_op(qualified), frame):
            return True
        if qualified is None and isinstance(func, cst.Attribute) and self._lower(func.attr.value, frame):
            return resolve_expr(func.value, frame) is None
        if self.float32_module(func, frame):
            return True
        graph = self.facts.callgraph
        cls = graph.class_of_instance(func, frame)
        if cls is None and isinstance(func, cst.Attribute):
            owner = graph.self_attr_owner(func, frame)
            cls = graph.self_instances.get(owner) if owner is not None else None
        if cls is not None:
            return self._is_module_class(cls)
        return bool(self.facts.entries) and module_output(self.facts, func, frame)

    def _is_module_class(self, name: str, depth: int = 0) -> bool:
        cls = self.facts.tree.classes.get(name)
        if cls is None or depth > 8:
            return False
        for base in cls.node.bases:
            qualified = resolve_expr(base.value, cls.parent)
            if qualified in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                return True
            if isinstance(base.value, cst.Name) and self._is_module_class(base.value.value, depth + 1):
                return True
        return False


def _no_dtype(call: cst.Call) -> bool:
    """No `dtype=` argument: `x.sum(dtype=torch.float32)` makes a new dtype."""
    return not any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args)


def _names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    return []
