"""The prefilter of a file the project pass gave entries (issue 34): can a rule fire in it, given
its code and regions or half classes that come from other files? Read with Python's `ast` (a
tenth of LibCST's cost) against amplint.analysis.data.triggers.ENTRY_NEEDS.

A file kept out gives no finding (tests/test_prefilter.py runs every test project both ways)."""

from __future__ import annotations

import ast
import functools
import re
import warnings
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from amplint.analysis.data.triggers import (
    CONSTANT_FILL, CONSTANT_STORE, ENTRY_BLIND, FILL_NAMES, SQUARE, ENTRY_KINDS, ENTRY_NEEDS, ENTRY_NEEDS_BESIDE, HALF_CAST_NAMES,
    HALF_CONVERTER, HALF_CONVERTER_NAME, REACHED, REGION_TEXT, REGION_WORDS, TINY_FLOAT,
    BUFFER_WRITERS, CONCAT_NAMES, FACTORY_NAMES, FACTORY_WRITE,
)

TINY_BELOW = 6e-8  # AMP140's THRESHOLD (tests/test_prefilter.py checks they agree)
# what a reached function may call without naming it: a module instance's forward, a class
_UNNAMED_CALLEES = ("forward", "__call__", "__init__")
_CONVERTER = re.compile(HALF_CONVERTER)
_CONSTANT_DEPTH = 6  # facts/fills.py evaluates 4 levels deep


def could_match_with(source: str, rules: Sequence, entries: Sequence[object], without) -> bool:
    """Can any of `rules` fire in `source` with these entries? `without(source, rules)`: the
    prefilter of a file without entries (for the rules such entries do not change)."""
    if any(type(entry).__name__ not in ENTRY_KINDS for entry in entries):
        return True
    codes = {rule.code for rule in rules}
    if any(code not in ENTRY_NEEDS and code not in ENTRY_BLIND for code in codes):
        return True
    blind = [rule for rule in rules if rule.code in ENTRY_BLIND]
    if blind and without(source, blind):
        return True
    reading = sorted(codes & set(ENTRY_NEEDS))
    if not reading:
        return False
    code = CodeNames.of(source)
    if code is None:
        return True  # not valid Python: LibCST's parse reports why, as before
    targets = None
    if all(type(entry).__name__ == "EntryRegion" for entry in entries) and code.without_own_half(source):
        targets = tuple(sorted({entry.target for entry in entries}))  # type: ignore[attr-defined]
    for rule_code in reading:
        scope, needs = ENTRY_NEEDS[rule_code]
        if REGION_TEXT in needs and any(word in source for word in REGION_WORDS):
            return True
        if scope == REACHED and targets is not None:
            beside = ENTRY_NEEDS_BESIDE.get(rule_code)
            if any(names.intersection(needs) and (not beside or names.intersection(beside))
                   for names in code.reached(targets)):
                return True
        elif code.names.intersection(needs):
            return True
    return False


class CodeNames:
    """The identifiers (and marks) of a file's code, and of each function's."""

    def __init__(self, tree: ast.AST) -> None:
        aliases: Dict[str, Set[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname:
                        aliases.setdefault(alias.asname, set()).update(alias.name.split("."))
        self._aliases = aliases
        self._constants: Dict[str, List[ast.AST]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                self._constants.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None \
                    and isinstance(node.target, ast.Name):
                self._constants.setdefault(node.target.id, []).append(node.value)
        self.defs: Dict[str, List[ast.AST]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(node.name, []).append(node)
        self.names: FrozenSet[str] = self._names_in([tree])
        self._reached: Dict[Tuple[str, ...], List[FrozenSet[str]]] = {}

    @staticmethod
    @functools.lru_cache(maxsize=8)
    def of(source: str) -> Optional["CodeNames"]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return CodeNames(tree)

    def without_own_half(self, source: str) -> bool:
        """No region of the file's own and no half cast: a rule that needs a region at its
        site can fire only in the functions the entries reach."""
        return not any(word in source for word in REGION_WORDS) \
            and not self.names.intersection(HALF_CAST_NAMES + (HALF_CONVERTER_NAME,))

    def reached(self, targets: Tuple[str, ...]) -> List[FrozenSet[str]]:
        """The names of each function the entries' regions can reach (with the functions
        nested in it)."""
        found = self._reached.get(targets)
        if found is None:
            found = self._reached[targets] = [self._names_in([node])
                                              for node in self._reached_defs(targets)]
        return found

    def _reached_defs(self, targets: Iterable[str]) -> List[ast.AST]:
        """The functions an entry region can reach: a superset of facts.callgraph's callees
        (by name, at any depth and in any class; `self.fc(x)` and `Net()(x)` by `forward`)."""
        seen: Dict[int, ast.AST] = {}
        pending = [name.rpartition(".")[2] for name in targets]
        named: Set[str] = set()
        while pending:
            name = pending.pop()
            if name in named:
                continue
            named.add(name)
            for node in self.defs.get(name, ()):
                if id(node) in seen:
                    continue
                seen[id(node)] = node
                for call in ast.walk(node):
                    if not isinstance(call, ast.Call):
                        continue
                    pending.extend(_UNNAMED_CALLEES)
                    func = call.func
                    if isinstance(func, ast.Name):
                        pending.append(func.id)
                    elif isinstance(func, ast.Attribute):
                        pending.append(func.attr)
        return list(seen.values())

    def _names_in(self, roots: Iterable[ast.AST]) -> FrozenSet[str]:
        names: Set[str] = set()
        buffers: Set[str] = set()  # names bound to a factory's result
        written: Set[str] = set()  # names a hazardous write may write into
        for root in roots:
            for node in ast.walk(root):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                    names.update(self._aliases.get(node.id, ()))
                elif isinstance(node, ast.Attribute):
                    names.add(node.attr)
                elif isinstance(node, ast.alias):
                    names.update(node.name.split("."))
                    if node.asname:
                        names.add(node.asname)
                elif isinstance(node, ast.Constant):
                    value = node.value
                    if type(value) is float and 0 < value < TINY_BELOW:
                        names.add(TINY_FLOAT)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                            written.add(target.value.id)
                    if isinstance(node, ast.Assign) and len(targets) == 1 \
                            and isinstance(targets[0], ast.Name) and isinstance(node.value, ast.Call) \
                            and self._callee_names(node.value.func).intersection(FACTORY_NAMES):
                        buffers.add(targets[0].id)
                    if len(targets) == 1 and isinstance(targets[0], ast.Subscript) \
                            and node.value is not None and self._constant(node.value, 0):
                        names.add(CONSTANT_STORE)
                elif isinstance(node, ast.keyword) and node.arg == "out":
                    if isinstance(node.value, ast.Name):
                        written.add(node.value.id)
                elif isinstance(node, ast.Call):
                    written.update(self._written_by(node))
                    if self._callee_names(node.func).intersection(FILL_NAMES) and any(
                        self._constant(value, 0)
                        for value in node.args + [k.value for k in node.keywords]
                    ):
                        names.add(CONSTANT_FILL)
                elif isinstance(node, ast.BinOp):
                    right = node.right
                    if isinstance(node.op, ast.Pow) and isinstance(right, ast.Constant) \
                            and type(right.value) in (int, float) and right.value == 2 \
                            or isinstance(node.op, ast.Mult) \
                            and ast.dump(node.left) == ast.dump(right):
                        names.add(SQUARE)
        if buffers & written:
            names.add(FACTORY_WRITE)
        if any(_CONVERTER.search(name.lower()) for name in names):
            names.add(HALF_CONVERTER_NAME)
        return frozenset(names)

    def _written_by(self, call: ast.Call) -> Iterable[str]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in BUFFER_WRITERS \
                and isinstance(func.value, ast.Name):
            yield func.value.id
        # LibCST's first argument: the first positional one, else the first keyword one
        first = call.args[0] if call.args else call.keywords[0].value if call.keywords else None
        if isinstance(first, (ast.List, ast.Tuple)) \
                and self._callee_names(func).intersection(CONCAT_NAMES):
            for item in first.elts:
                if isinstance(item, ast.Name):
                    yield item.id

    def _callee_names(self, func: ast.AST) -> Set[str]:
        if isinstance(func, ast.Name):
            return {func.id} | self._aliases.get(func.id, set())
        if isinstance(func, ast.Attribute):
            return {func.attr}
        return set()

    def _constant(self, node: ast.AST, depth: int) -> bool:
        """Could facts/fills.py evaluate this to a number (a superset of its `_evaluate`)?"""
        if depth > _CONSTANT_DEPTH:
            return False
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd)) and self._constant(node.operand, depth + 1)
        if isinstance(node, ast.BinOp):
            return self._constant(node.left, depth + 1) and self._constant(node.right, depth + 1)
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Name) and node.func.id in ("float", "int")
        if isinstance(node, ast.Attribute):
            return node.attr in ("min", "max") and isinstance(node.value, ast.Call)
        if isinstance(node, ast.Name):
            return any(self._constant(value, depth + 1) for value in self._constants.get(node.id, ()))
        return False
