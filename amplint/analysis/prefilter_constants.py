"""The numbers a constant of a file's code may be, as facts/fills.py evaluates it, read with
Python's `ast` for the prefilter (prefilter_names.CodeNames records the bindings in
`_constants`; AMP110 reads no number within float16's range)."""

from __future__ import annotations

import ast
import math
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from amplint.analysis.data.overflow import FP16_MAX

_CONSTANT_DEPTH = 6  # facts/fills.py evaluates 4 levels deep
_MOST_VALUES = 64  # the numbers a constant is followed with; more: any


class ConstantValues:
    """What `CodeNames` evaluates its constants with: `_constants` (a name, or ".attr" for
    `self.attr`, -> the values bound to it) and `_numbers` (per node and depth) are its."""

    _constants: Dict[str, List[ast.AST]]
    _numbers: Dict[Tuple[int, int], Optional[FrozenSet[float]]]

    def _constant(self, node: ast.AST, depth: int) -> bool:
        """Could facts/fills.py's `constant` find a number here, one beyond float16's range
        (finite)? (AMP110 reads no other: `x[m] = 0`, `fill_(1.0)` overflow nothing.)"""
        values = self._values(node, depth)
        return values is None or any(math.isfinite(v) and abs(v) > FP16_MAX for v in values)

    def _values(self, node: ast.AST, depth: int) -> Optional[FrozenSet[float]]:
        """The numbers facts/fills.py's `_evaluate` can make of this expression (a superset:
        every binding of a name); None: any number (a `finfo`, too many values). Kept per
        node and depth: names bound to each other (`x = x + x`) are read once each."""
        key = (id(node), depth)
        if key not in self._numbers:
            self._numbers[key] = self._evaluate(node, depth)
        return self._numbers[key]

    def _evaluate(self, node: ast.AST, depth: int) -> Optional[FrozenSet[float]]:
        if depth > _CONSTANT_DEPTH:
            return frozenset()
        kind = type(node)
        if kind is ast.Constant:
            if type(node.value) not in (int, float):
                return frozenset()
            try:
                return frozenset((float(node.value),))
            except OverflowError:  # an int too large for a float: fills.py makes none
                return frozenset()
        if kind is ast.UnaryOp:
            if not isinstance(node.op, (ast.USub, ast.UAdd)):
                return frozenset()
            inner = self._values(node.operand, depth + 1)
            if inner is None or isinstance(node.op, ast.UAdd):
                return inner
            return frozenset(-v for v in inner)
        if kind is ast.BinOp:
            return self._combined(node, depth)
        if kind is ast.Call:
            func, args = node.func, node.args
            if not (isinstance(func, ast.Name) and func.id in ("float", "int")):
                return frozenset()
            if len(args) != 1 or node.keywords or isinstance(args[0], ast.Starred):
                return None if args or node.keywords else frozenset()
            arg = args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, bytes)):
                try:
                    return frozenset((float(arg.value),))
                except (ValueError, TypeError):
                    return frozenset()
            return self._values(arg, depth + 1)
        if kind is ast.Attribute and isinstance(node.value, ast.Name) and node.value.id == "self":
            key = "." + node.attr  # `self.inf`: what the class stores there
        elif kind is ast.Attribute:  # `torch.finfo(...).min`: float32's, float64's
            return None if node.attr in ("min", "max") and isinstance(node.value, ast.Call) else frozenset()
        elif kind is ast.Name:
            key = node.id
        else:
            return frozenset()
        found: Set[float] = set()
        for value in self._constants.get(key, ()):
            values = self._values(value, depth + 1)
            if values is None:
                return None
            found.update(values)
        return frozenset(found) if len(found) <= _MOST_VALUES else None

    def _combined(self, node: ast.BinOp, depth: int) -> Optional[FrozenSet[float]]:
        """The numbers of `left op right` (fills.py: `**`, `*`, `+`, `-`; any other, none)."""
        op = type(node.op)
        if op not in (ast.Pow, ast.Mult, ast.Add, ast.Sub):
            return frozenset()
        left = self._values(node.left, depth + 1)
        right = self._values(node.right, depth + 1)
        if left is not None and right is not None and not (left and right):
            return frozenset()  # a side that is no number: no number
        if left is None or right is None or len(left) * len(right) > _MOST_VALUES:
            return None
        found: Set[float] = set()
        for a in left:
            for b in right:
                try:
                    if op is ast.Pow:
                        if abs(b) > 400:
                            continue
                        found.add(float(a ** b))
                    elif op is ast.Mult:
                        found.add(a * b)
                    elif op is ast.Add:
                        found.add(a + b)
                    else:
                        found.add(a - b)
                except (OverflowError, ZeroDivisionError, TypeError):
                    continue
        return frozenset(found)
