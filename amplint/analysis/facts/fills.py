"""Constant fills and tensor dtypes (for AMP110): the number an expression is (literals,
`float("-inf")`, `torch.finfo(torch.float32).min` or numpy's, names bound to them), the dtype a tensor
expression has here (casts, factories, `dtype=`, autocast's float32 ops), the order of
statements, and whether a filled tensor goes straight into softmax/max (where any large
negative fill gives the same result)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data.overflow import (
    CASTS, FEEDS_FUNCTIONS, FEEDS_METHODS, FINFO, FINFO_MAX, FLOAT_FACTORIES, FP16_MAX, IN_PLACE,
    KEEPS_DTYPE, LIKE_FACTORIES, NUMPY_DTYPE_STRINGS, NUMPY_DTYPES, OTHER_DTYPES,
)
from amplint.analysis.data.dtype_rules import aten_op
from amplint.analysis.facts.dtypes import region_policy
from amplint.analysis.facts.autocast_calls import DTYPES
from amplint.analysis.facts.foreign_stores import stored_elsewhere
from amplint.analysis.facts.names import bound_locally
from amplint.analysis.facts.syntax import children_in_visit_order, self_attr
from amplint.analysis.facts.tree import Frame, argument, keyword


@dataclass
class Const:
    value: float
    finfo32: bool  # `torch.finfo(torch.float32).min/max`


@dataclass(frozen=True)
class EntryConstant:
    """Module-level name `target` of this file is imported from another project module, where it
    is bound once to the number `value`, beyond float16's range (project/imported_constants.py)."""

    target: str
    ref: str  # the import's reference ("pkg.constants.INF_VAL", ".constants.INF_VAL")
    value: float
    cite: str  # "pkg/constants.py:1"


class FillValues:
    """Per-file lazy helpers: statement order, constants, dtypes, where values flow."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.module: cst.Module = facts.module
        self._feeding: Optional[Set[int]] = None
        self._events: Dict[int, "_NameEvents"] = {}  # id(function or module) -> its name events

    # -- statement order ------------------------------------------------------------------
    def order(self, stmt) -> Optional[int]:
        return self.facts.index.order(stmt)

    # -- constants ------------------------------------------------------------------------
    def constant(self, expr: cst.BaseExpression, frame: Frame, depth: int = 0) -> Optional[Const]:
        """The number `expr` is, when it is a constant beyond float16's range (finite)."""
        const = self._evaluate(expr, frame, depth)
        if const is None or not math.isfinite(const.value) or abs(const.value) <= FP16_MAX:
            return None
        return const

    def _evaluate(self, expr, frame: Frame, depth: int) -> Optional[Const]:
        if depth > 4:
            return None
        if isinstance(expr, (cst.Integer, cst.Float)):
            try:
                return Const(float(expr.evaluated_value), False)
            except (OverflowError, ValueError):
                return None
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            inner = self._evaluate(expr.expression, frame, depth + 1)
            if inner is None:
                return None
            sign = -1.0 if isinstance(expr.operator, cst.Minus) else 1.0
            return Const(sign * inner.value, inner.finfo32)
        if isinstance(expr, cst.BinaryOperation):
            left = self._evaluate(expr.left, frame, depth + 1)
            right = self._evaluate(expr.right, frame, depth + 1)
            if left is None or right is None or left.finfo32 or right.finfo32:
                return None
            try:
                if isinstance(expr.operator, cst.Power):
                    if abs(right.value) > 400:
                        return None
                    return Const(float(left.value ** right.value), False)
                if isinstance(expr.operator, cst.Multiply):
                    return Const(left.value * right.value, False)
                if isinstance(expr.operator, cst.Add):
                    return Const(left.value + right.value, False)
                if isinstance(expr.operator, cst.Subtract):
                    return Const(left.value - right.value, False)
            except (OverflowError, ZeroDivisionError, TypeError):
                return None
            return None
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].keyword:
            if isinstance(expr.func, cst.Name) and expr.func.value in ("float", "int") and (
                self.facts.resolve(expr.func, frame) is None
            ):
                arg = expr.args[0].value
                if isinstance(arg, cst.SimpleString):
                    try:
                        return Const(float(arg.evaluated_value), False)
                    except (ValueError, TypeError):
                        return None
                return self._evaluate(arg, frame, depth + 1)
        if self_attr(expr) is not None:
            held = self.facts.param_defaults.attr_default(expr, frame)  # `self.inf`: __init__'s default
            found = self._evaluate(held[0], held[1], depth + 1) if held is not None else None
            return found if found is not None else self._bound(expr)
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("min", "max"):
            inner = expr.value
            finfo = self.facts.resolve(inner.func, frame) if isinstance(inner, cst.Call) else None
            if finfo in FINFO:
                if not inner.args and finfo == "torch.finfo":
                    dtype = "float32"  # the default dtype
                elif len(inner.args) == 1 and not inner.args[0].keyword:
                    dtype = self._finfo_dtype(finfo, inner.args[0].value, frame)
                else:
                    return None
                value = FINFO_MAX.get(dtype or "")
                if value is None:
                    return None
                return Const(-value if expr.attr.value == "min" else value, True)
        if isinstance(expr, cst.Name):
            found = self._named_constant(expr.value, frame, depth)
            return found if found is not None else self._bound(expr)
        if isinstance(expr, cst.Attribute):
            return self._bound(expr)  # `cfg.mask_value`
        return None

    def _bound(self, expr: cst.BaseExpression) -> Optional[Const]:
        """The number that reaches `expr` through the file's bindings, or the project's
        (facts/bound_values.py: a constructor argument stored on the instance, a config
        object's attribute, a parameter every call binds): when each one it may hold is beyond
        float16's range on the same side, the smallest of them."""
        if isinstance(expr, cst.Attribute) and expr.attr.value in stored_elsewhere(self.facts.entries):
            return None  # another file stores it: what it holds there is that file's
        numbers = self.facts.bound_values.numbers(expr)
        if not numbers or not all(abs(n) > FP16_MAX for n in numbers):
            return None
        if not (all(n > 0 for n in numbers) or all(n < 0 for n in numbers)):
            return None
        return Const(min(numbers, key=abs), False)

    def _finfo_dtype(self, finfo: str, arg: cst.BaseExpression, frame: Frame) -> Optional[str]:
        if finfo == "torch.finfo":
            return self.dtype_literal(arg, frame)
        if isinstance(arg, cst.SimpleString):
            text = arg.evaluated_value
            return NUMPY_DTYPE_STRINGS.get(text) if isinstance(text, str) else None
        return NUMPY_DTYPES.get(self.facts.resolve(arg, frame) or "")

    def _named_constant(self, name: str, frame: Frame, depth: int) -> Optional[Const]:
        qualified = self.facts.resolve((cst.Name(name)), frame)
        imported = self._imported_constants().get(name)
        if imported is not None and not bound_locally(name, frame) and qualified in (imported.ref, None):
            return Const(imported.value, False)
        if qualified is not None:
            return None
        default = self.facts.param_defaults.default(name, frame)
        if default is not None:
            return self._evaluate(default, frame.scope.parent, depth + 1)
        assigns = self.facts.index.assigns_to(name)
        if len(assigns) != 1 or len(assigns[0].targets) != 1:
            return None
        scope = assigns[0].frame.scope
        if scope.kind != "module" and scope is not frame.scope:
            return None
        const = self._evaluate(assigns[0].value, assigns[0].frame, depth + 1)
        return const

    def _imported_constants(self) -> Dict[str, EntryConstant]:
        found = self.__dict__.get("_imported")
        if found is None:
            found = {e.target: e for e in self.facts.entries if isinstance(e, EntryConstant)}
            self.__dict__["_imported"] = found
        return found

    def describe(self, expr: cst.BaseExpression, const: Const) -> str:
        text = self.module.code_for_node(expr).strip()
        if len(text) > 40:
            text = text[:37] + "..."
        if isinstance(expr, cst.Name) or _self_attr_in(expr):
            return f"`{text}` (= {const.value:g})"
        return f"`{text}`"

    # -- dtypes ---------------------------------------------------------------------------
    def dtype_literal(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        qualified = self.facts.resolve(expr, frame)
        if qualified is None:
            return None
        if qualified in OTHER_DTYPES:
            return "other"
        return DTYPES.get(qualified)

    def dtype_of(self, expr: cst.BaseExpression, frame: Frame, stmt, depth: int = 0) -> Optional[str]:
        """"float16", "bfloat16", "float32", "float64", "other" when the file shows it."""
        if depth > 6:
            return None
        value = self.facts.dtypes.dtype(expr)  # the dtype fact first (torch's own tables)
        exact = value.exact if value is not None and not value.conditional else None
        if exact is not None and exact != "autocast" and not exact.startswith("py"):
            return "other" if exact in ("integer", "bool") else exact
        if value is not None and not value.conditional and len(value.options) > 1:
            return None  # branches that disagree (`s = x.half()` / `s = x.float()`): not one dtype
        if isinstance(expr, cst.Subscript):
            return self.dtype_of(expr.value, frame, stmt, depth + 1)
        if isinstance(expr, cst.Name):
            return self._name_dtype(expr.value, frame, stmt, depth)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        qualified = self.facts.resolve(func, frame)
        if qualified is not None:
            dtype_arg = keyword(expr, "dtype")
            if dtype_arg is not None:
                return self.dtype_literal(dtype_arg.value, frame)
            if qualified in FLOAT_FACTORIES:
                return "float32"
            if qualified in LIKE_FACTORIES and expr.args and not expr.args[0].keyword:
                return self.dtype_of(expr.args[0].value, frame, stmt, depth + 1)
            if self._autocast_fp32(aten_op(qualified), frame):
                return "float32"
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method in CASTS and not expr.args:
            return CASTS[method]
        if method in ("to", "type"):
            for arg in expr.args:
                if arg.keyword is not None and arg.keyword.value != "dtype":
                    continue
                found = self.dtype_literal(arg.value, frame)
                if found is not None:
                    return found
                if arg.keyword is not None:
                    return None  # dtype=<expression>
            positional = [a for a in expr.args if a.keyword is None]
            if method == "to" and positional and all(_is_device(a.value) for a in positional):
                return self.dtype_of(func.value, frame, stmt, depth + 1)
            if method == "to" and not positional:
                return self.dtype_of(func.value, frame, stmt, depth + 1)
            return None
        if method in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
            dtype_arg = keyword(expr, "dtype")
            if dtype_arg is not None:
                return self.dtype_literal(dtype_arg.value, frame)
            return self.dtype_of(func.value, frame, stmt, depth + 1)
        if method in KEEPS_DTYPE:
            return self.dtype_of(func.value, frame, stmt, depth + 1)
        if self._autocast_fp32(method, frame):
            return "float32"
        return None

    def _autocast_fp32(self, op: Optional[str], frame: Frame) -> bool:
        """`op` runs in float32 under the active region here (torch's autocast fp32 lists,
        amplint.analysis.data.dtype_rules; both devices' lists when the region's device is unknown)."""
        region = self.facts.active_region(frame)
        return region is not None and op is not None and region_policy(region, op) == "fp32"

    def _name_dtype(self, name: str, frame: Frame, stmt, depth: int) -> Optional[str]:
        here = self.order(stmt)
        if here is None:
            return None
        best = self.facts.index.last_binding_before(frame.scope, name, here)
        if best is None:
            # a parameter `@force_fp32(apply_to=...)` casts on entry
            return "float32" if name in self.facts.fp16.float32_params(frame) else None
        if len(best.targets) != 1 or not isinstance(best.targets[0], cst.Name):
            return None
        return self.dtype_of(best.value, best.frame, best.line_stmt, depth + 1)

    # -- where the filled tensor goes -----------------------------------------------------
    def feeding(self) -> Set[int]:
        """ids of expressions whose value goes straight into softmax/log_softmax/max/min."""
        if self._feeding is None:
            found: Set[int] = set()
            for qualified, site in self.facts.qualified_calls:
                call = site.node
                if qualified in FEEDS_FUNCTIONS:
                    first = argument(call, 0, "input")
                    if first is not None:
                        found.add(id(first.value))
                elif (
                    qualified is None
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in FEEDS_METHODS
                ):
                    found.add(id(call.func.value))
            self._feeding = found
        return self._feeding

    def feeds_reduction(self, call, method: str, target, frame: Frame, stmt) -> bool:
        feeding = self.feeding()
        if call is not None and id(call) in feeding:
            return True
        name: Optional[str] = None
        if method in IN_PLACE or method == "setitem":
            if isinstance(target, cst.Name):
                name = target.value
        elif call is not None and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (
                isinstance(small, cst.Assign)
                and small.value is call
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                name = small.targets[0].target.value
        if name is None or stmt is None:
            return False
        function = frame.function
        root = function.node if function is not None else self.module
        events = self._events.get(id(root))
        if events is None:
            events = self._events[id(root)] = _NameEvents()
            events.walk(root)
        loads = events.later_loads(name, stmt)
        return bool(loads) and all(id(node) in feeding for node in loads)


def _self_attr_in(expr: cst.BaseExpression) -> bool:
    """`self.inf`, `-self.inf`: a value the text does not show."""
    inner = expr.expression if isinstance(expr, cst.UnaryOperation) else expr
    return self_attr(inner) is not None


def _is_device(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return True
    return isinstance(expr, cst.Name) and "device" in expr.value


def pure(expr: cst.BaseExpression) -> bool:
    """A name, attribute chain or simple subscript of one: safe to write twice."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return pure(expr.value)
    if isinstance(expr, cst.Subscript):
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not isinstance(index.value, (cst.Name, cst.Integer, cst.Ellipsis)):
                    return False
            elif isinstance(index, cst.Slice):
                parts = (index.lower, index.upper, index.step)
                if any(p is not None and not isinstance(p, (cst.Name, cst.Integer)) for p in parts):
                    return False
        return pure(expr.value)
    return False


class _NameEvents:
    """One walk of a function (or the module): every name read or assigned, and the end of
    every simple statement line, numbered in order. `later_loads` then answers for one name
    from that name's events alone (a walk per question was quadratic in the function)."""

    def __init__(self) -> None:
        self.position = 0
        self.line_ends: Dict[int, int] = {}  # id(simple statement line) -> its end's position
        self.end_positions: List[int] = []  # every line end's position, ascending
        self.names: Dict[str, Tuple[List[int], List[Tuple[bool, cst.Name]]]] = {}
        self._stores: Set[int] = set()

    def walk(self, root: cst.CSTNode) -> None:
        """The events of LibCST's visit of `root`, in its order: names in pre-order, a simple
        statement line's end after its children; an attribute's own name and a keyword's
        name are not reads (only the attribute's value and the argument's value are walked).
        A walk over the code nodes (facts.syntax), not LibCST's visitor: that rebuilt every
        node it passed and was most of AMP110's time on a large file (issue 34)."""
        name_class, attribute_class, arg_class = cst.Name, cst.Attribute, cst.Arg
        line_class, target_class = cst.SimpleStatementLine, cst.AssignTarget
        stores, names, line_ends, end_positions = (
            self._stores, self.names, self.line_ends, self.end_positions
        )
        stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            kind = type(node)
            if leaving:  # a simple statement line, after its children
                self.position += 1
                line_ends[id(node)] = self.position
                end_positions.append(self.position)
                continue
            if kind is name_class:
                self.position += 1
                positions, events = names.setdefault(node.value, ([], []))
                positions.append(self.position)
                events.append((id(node) in stores, node))
                children = children_in_visit_order(node)
            elif kind is attribute_class or kind is arg_class:
                children = [node.value]
            else:
                if kind is target_class and type(node.target) is name_class:
                    stores.add(id(node.target))
                elif kind is line_class:
                    stack.append((node, True))
                children = children_in_visit_order(node)
            for child in reversed(children):
                stack.append((child, False))

    def later_loads(self, name: str, after: cst.CSTNode) -> List[cst.Name]:
        """Reads of `name` after statement line `after`, up to the end of the line whose
        assignment first rebinds it."""
        start = self.line_ends.get(id(after))
        entry = self.names.get(name)
        if start is None or entry is None:
            return []
        positions, events = entry
        loads: List[cst.Name] = []
        stop: Optional[int] = None
        for index in range(bisect_right(positions, start), len(positions)):
            position = positions[index]
            if stop is not None and position > stop:
                break
            store, node = events[index]
            if not store:
                loads.append(node)
            elif stop is None:
                end = bisect_left(self.end_positions, position)
                stop = self.end_positions[end] if end < len(self.end_positions) else self.position
        return loads
