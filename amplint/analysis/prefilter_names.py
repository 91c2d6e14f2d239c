"""The identifiers and marks of a file's code, and of each function's, read with Python's `ast`
(a tenth of LibCST's cost): what the prefilter of a file with entries (prefilter_entries.py) and
the project pass's text gates (project/float16_args.py, project/module_outputs.py) test against
amplint.analysis.data.triggers."""

from __future__ import annotations

import ast
import functools
import re
import warnings
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from amplint.analysis.data.triggers import (
    CONSTANT_FILL, CONSTANT_STORE, FILL_NAMES, HALF_CONVERTER, HALF_CONVERTER_NAME, SQUARE, TINY_FLOAT,
    BUFFER_WRITERS, CONCAT_NAMES, FACTORY_NAMES, FACTORY_WRITE, HALF_CAST_NAMES, REGION_WORDS,
)
from amplint.analysis.parsing import python_tree
from amplint.analysis.prefilter_constants import ConstantValues

TINY_BELOW = 6e-8  # AMP140's THRESHOLD (tests/test_prefilter.py checks they agree)
# what a reached function may call without naming it: a module instance's forward, a class
_UNNAMED_CALLEES = ("forward", "__call__", "__init__")
_CONVERTER = re.compile(HALF_CONVERTER)


class CodeNames(ConstantValues):
    """The identifiers (and marks) of a file's code, and of each function's."""

    def __init__(self, tree: ast.AST) -> None:
        self._aliases: Dict[str, Set[str]] = {}
        self._constants: Dict[str, List[ast.AST]] = {}
        self.defs: Dict[str, List[ast.AST]] = {}
        self.classes: Dict[str, List[ast.AST]] = {}
        self._half: Dict[Tuple[str, ...], FrozenSet[str]] = {}
        self._numbers: Dict[Tuple[int, int], Optional[FrozenSet[float]]] = {}
        self.names: FrozenSet[str] = self._names_in([tree], whole=True)
        self._reached: Dict[Tuple[str, ...], List[FrozenSet[str]]] = {}

    @staticmethod
    @functools.lru_cache(maxsize=8)
    def of(source: str) -> Optional["CodeNames"]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = python_tree(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return CodeNames(tree)

    def without_own_half(self, source: str) -> bool:
        """No region of the file's own and no half cast: a rule that needs a region at its
        site can fire only in the functions the entries reach."""
        return not any(word in source for word in REGION_WORDS) \
            and not self.names.intersection(HALF_CAST_NAMES + (HALF_CONVERTER_NAME,))

    def function_names(self, name: str) -> List[FrozenSet[str]]:
        """The names of each function called `name` (with the functions nested in it)."""
        return [self._names_in([node]) for node in self.defs.get(name, ())]

    def reached(self, targets: Tuple[str, ...]) -> List[FrozenSet[str]]:
        """The names of each function the entries' regions can reach (with the functions
        nested in it)."""
        found = self._reached.get(targets)
        if found is None:
            found = self._reached[targets] = [self._names_in([node])
                                              for node in self._reached_defs(targets)]
        return found

    def half_reached(self, classes: Tuple[str, ...]) -> FrozenSet[str]:
        """The names of the code a file's half classes make fp16 code, where no region and no
        half cast of its own exists: the bodies of the classes named so (Fp16Analysis'
        `functions`, their methods; `float16_functions` and walk_float16_code, the same with
        nested functions), and of the classes a reached body names (`self.x = Sub(...)`:
        `_add_submodules` follows CallGraph.self_instances, a call of a class of the file by
        its plain name in the owner's body), and of the functions they call by a plain name,
        at any depth (float16_scope.float16_callees). A superset: every class or function of
        that name, whole."""
        key = ("<half>",) + classes
        found = self._half.get(key)
        if found is None:
            nodes: List[ast.AST] = []
            named: Set[str] = set()
            pending = list(classes)
            called: Set[str] = set()
            while pending:
                name = pending.pop()
                if name in named:
                    continue
                named.add(name)
                for node in self.classes.get(name, ()):
                    nodes.append(node)
                    for inner in ast.walk(node):
                        kind = type(inner)
                        if kind is ast.Name and inner.id in self.classes:
                            pending.append(inner.id)
                        elif kind is ast.Call and type(inner.func) is ast.Name and inner.func.id in self.defs:
                            called.add(inner.func.id)
            while called:  # the functions a reached body calls by name (float16_scope.float16_callees)
                name = called.pop()
                if name in named:
                    continue
                named.add(name)
                for node in self.defs[name]:
                    nodes.append(node)
                    called.update(_called_defs(node, self.defs))
            found = self._half[key] = self._names_in(nodes)
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
            pending.extend(self._aliases.get(name, ()))  # `bw = _backward; bw(loss)`
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

    def _names_in(self, roots: Iterable[ast.AST], whole: bool = False) -> FrozenSet[str]:
        """One walk; `whole`: the module, whose imports, assignments and functions are
        recorded on the way (what the marks are read with, after the walk)."""
        names: Set[str] = set()
        stores: List[ast.AST] = []  # values stored by index
        fills: List[ast.Call] = []  # every call
        buffers: List[Tuple[str, ast.AST]] = []  # (name, callee) of `name = callee(...)`
        written: Set[str] = set()  # names a hazardous write may write into
        for root in roots:
            for node in ast.walk(root):
                kind = type(node)
                if kind is ast.Name:
                    names.add(node.id)
                elif kind is ast.Attribute:
                    names.add(node.attr)
                elif kind is ast.Call:
                    fills.append(node)
                elif kind is ast.Constant:
                    value = node.value
                    if type(value) is float and 0 < value < TINY_BELOW:
                        names.add(TINY_FLOAT)
                elif kind is ast.Assign or kind is ast.AnnAssign:
                    targets = node.targets if kind is ast.Assign else [node.target]
                    for target in targets:
                        if isinstance(target, ast.Subscript) and _buffer_key(target.value):
                            written.add(_buffer_key(target.value))
                    value = node.value
                    if whole and type(value) is ast.Attribute and value.attr == "apply":
                        _apply_aliases(targets, self._aliases)
                    if len(targets) == 1 and value is not None:
                        target = targets[0]
                        if isinstance(target, ast.Subscript):
                            stores.append(value)
                        elif isinstance(target, ast.Attribute) and _buffer_key(target):
                            if whole:  # read as `self.inf` (facts/param_defaults.attr_default)
                                self._constants.setdefault("." + target.attr, []).append(value)
                            if kind is ast.Assign and isinstance(value, ast.Call):
                                buffers.append((_buffer_key(target), value.func))  # `self.cache = ...`
                        elif isinstance(target, ast.Name):
                            if whole:
                                self._constants.setdefault(target.id, []).append(value)
                                if kind is ast.Assign:  # a name bound to a function (facts/tree.py)
                                    bound = _bound_function_names(value, self._aliases)
                                    if bound:
                                        self._aliases.setdefault(target.id, set()).update(bound)
                            if kind is ast.Assign and isinstance(value, ast.Call):
                                buffers.append((target.id, value.func))
                elif kind is ast.keyword:
                    if node.arg == "out" and _buffer_key(node.value):
                        written.add(_buffer_key(node.value))
                elif kind is ast.BinOp:
                    right = node.right
                    if isinstance(node.op, ast.Pow) and isinstance(right, ast.Constant) \
                            and type(right.value) in (int, float) and right.value == 2 \
                            or isinstance(node.op, ast.Mult) \
                            and ast.dump(node.left) == ast.dump(right):
                        names.add(SQUARE)
                elif kind is ast.alias:
                    names.update(node.name.split("."))
                    if node.asname:
                        names.add(node.asname)
                        if whole:
                            self._aliases.setdefault(node.asname, set()).update(node.name.split("."))
                elif whole and kind is ast.ClassDef:
                    self.classes.setdefault(node.name, []).append(node)
                elif whole and (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef):
                    self.defs.setdefault(node.name, []).append(node)
                    # a parameter's default is its value where no call passes it (facts/param_defaults.py)
                    args = node.args
                    positional = args.posonlyargs + args.args
                    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                        self._constants.setdefault(arg.arg, []).append(default)
                    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
                        if default is not None:
                            self._constants.setdefault(arg.arg, []).append(default)
        pending = list(names.intersection(self._aliases))
        while pending:  # an alias of an alias (facts/names.resolve follows up to 5)
            for name in self._aliases[pending.pop()] - names:
                names.add(name)
                if name in self._aliases:
                    pending.append(name)
        if any(self._constant(value, 0) for value in stores):
            names.add(CONSTANT_STORE)
        if names.intersection(FILL_NAMES) and any(
            self._callee_names(call.func).intersection(FILL_NAMES)
            and any(self._constant(v, 0) for v in call.args + [k.value for k in call.keywords])
            for call in fills
        ):
            names.add(CONSTANT_FILL)
        if buffers:  # (after the walk: the aliases of the whole module are known)
            for call in fills:
                written.update(self._written_by(call))
        if written and any(name in written and self._callee_names(func).intersection(FACTORY_NAMES)
                           for name, func in buffers):
            names.add(FACTORY_WRITE)
        elif any(isinstance(call.func, ast.Attribute) and call.func.attr in BUFFER_WRITERS
                 and isinstance(call.func.value, ast.Call)
                 and self._callee_names(call.func.value.func).intersection(FACTORY_NAMES)
                 for call in fills):
            names.add(FACTORY_WRITE)  # `torch.zeros(...).index_add_(...)`: the chained write
        if any(_CONVERTER.search(name.lower()) for name in names):
            names.add(HALF_CONVERTER_NAME)
        return frozenset(names)

    def _written_by(self, call: ast.Call) -> Iterable[str]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in BUFFER_WRITERS \
                and _buffer_key(func.value):
            yield _buffer_key(func.value)
        # LibCST's first argument: the first positional one, else the first keyword one
        first = call.args[0] if call.args else call.keywords[0].value if call.keywords else None
        if isinstance(first, (ast.List, ast.Tuple)) \
                and self._callee_names(func).intersection(CONCAT_NAMES):
            for item in first.elts:
                if _buffer_key(item):
                    yield _buffer_key(item)

    def _callee_names(self, func: ast.AST) -> Set[str]:
        if isinstance(func, ast.Name):
            found, pending = {func.id}, [func.id]
            while pending:
                for name in self._aliases.get(pending.pop(), set()) - found:
                    found.add(name)
                    pending.append(name)
            return found
        if isinstance(func, ast.Attribute):
            return {func.attr}
        return set()


def _dotted_names(node: ast.AST) -> Optional[List[str]]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts


def _bound_function_names(value: ast.AST, imported: Dict[str, Set[str]]) -> List[str]:
    """The names a `name = <dotted>` or `name = partial(<dotted>, ...)` binding may make the name
    mean (a superset of facts/tree._alias_value's): its calls then call that function.
    `imported`: what each `import ... as` name imports (`from functools import partial as P`)."""
    dotted = _dotted_names(value)
    if dotted is not None:
        return dotted
    if isinstance(value, ast.Call) and value.args:
        func, first = _dotted_names(value.func), _dotted_names(value.args[0])
        if func is not None and first is not None \
                and (func[0] == "partial" or "partial" in imported.get(func[0], ())):
            return first
    return []


def _apply_aliases(targets: Iterable[ast.AST], aliases: Dict[str, Set[str]]) -> None:
    """`fn = Fn.apply`, `self.fn = Fn.apply`: a call of `fn` / `self.fn` applies a Function
    (AMP151's `_apply_aliases`, which reads a `self.x` target too)."""
    for target in targets:
        if isinstance(target, ast.Name):
            aliases.setdefault(target.id, set()).add("apply")
        elif isinstance(target, ast.Attribute):
            aliases.setdefault(target.attr, set()).add("apply")


def _called_defs(node: ast.AST, defs: Dict[str, List[ast.AST]]) -> Set[str]:
    """The names `node` calls plainly (`rms_norm(x)`) that the file defines."""
    return {inner.func.id for inner in ast.walk(node)
            if type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id in defs}


def _buffer_key(node: ast.AST) -> str:
    """A buffer's name as facts/buffer_writes reads it: `buf`, or "self.cache" for `self.cache`
    (buffer_writes.held_buffer); "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return ""
