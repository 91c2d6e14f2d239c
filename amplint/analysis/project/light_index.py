"""A cheap per-file index of classes, from Python's own parser (`ast`, ~6x cheaper than a
LibCST parse and no facts): the names of the module's classes, what their bases and
decorators are written as, and what each name may be imported as (issue 34).

The project pass uses it (seed_files.py) to plan the subclass expansion from class names
without a summary, and to leave unsummarised a file whose classes are all `harmless`
(`class TestRPN(unittest.TestCase)`, `class Foo(nn.Module)`): no active framework can run
them, which a summary would only confirm. Anything the index cannot vouch for (duplicate
class names, a class inside a `with`, a base that is not a dotted name, a relative import,
a reference that may lead into the project) takes the summary path, so the seeds are the
ones a summary of every file gives."""

from __future__ import annotations

import ast
import gc
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Optional, Sequence, Set, Tuple

from amplint.analysis.parsing import python_tree

Dotted = Tuple[str, ...]

# kept as amplint.analysis.facts.names spells them (a resolved reference is canonicalised)
_CANONICAL_PREFIX = "torch."


@dataclass(frozen=True)
class LightClass:
    name: str
    bases: Tuple[Optional[Dotted], ...]  # None: not a dotted name
    decorators: Tuple[Optional[Dotted], ...]  # the decorator's callable


@dataclass(frozen=True)
class LightFile:
    """`exact`: `names` are exactly the class names a summary of the file lists (the module's
    classes, first definition of each name at module level, outside `with` blocks)."""

    exact: bool
    names: Tuple[str, ...]
    classes: Tuple[LightClass, ...]  # the module-level ones
    local: FrozenSet[str]  # every class name defined anywhere in the file
    imports: Dict[str, FrozenSet[str]]  # bound name -> absolute targets (anywhere in the file)
    relative: FrozenSet[str]  # names a relative import binds (anywhere in the file)


_MEMO: Dict[Tuple[str, int], Optional[LightFile]] = {}
_MEMO_MAX = 20000


def light_file(path: str, text: str) -> Optional[LightFile]:
    """The index of one file's text (None: Python cannot parse it); memoised by content."""
    key = (path, hash(text))
    if key in _MEMO:
        return _MEMO[key]
    collecting = gc.isenabled()
    gc.disable()  # an `ast` tree has no cycles: no collection walks its young nodes
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = None
    else:
        found = _index(tree)
    finally:
        if collecting:
            gc.enable()
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = found
    return found


def _dotted(expr: ast.expr) -> Optional[Dotted]:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return tuple(reversed(parts))
    return None


_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_OPAQUE = (ast.With, ast.AsyncWith, ast.Match)
# The fields of a statement (an `except` clause, a `case`) that hold statements (clauses,
# cases), in the order ast.iter_child_nodes gives them; no other field of these nodes holds
# one, and no expression does: the walk reads only these, not every child node.
_BLOCK_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")
_BLOCKS = {
    kind: tuple(field for field in kind._fields if field in _BLOCK_FIELDS)
    for kind in (*ast.stmt.__subclasses__(), ast.ExceptHandler, ast.match_case)
}


def _index(tree: ast.Module) -> LightFile:
    classes = []
    seen: Set[str] = set()
    exact = True
    imports: Dict[str, Set[str]] = {}
    relative: Set[str] = set()
    # (node, inside a frame, inside a with/match at module level)
    stack = [(child, False, False) for child in reversed(tree.body)]
    while stack:
        node, nested, opaque = stack.pop()
        if isinstance(node, ast.ClassDef):
            if node.name in seen or (opaque and not nested):
                exact = False
            seen.add(node.name)
            if not nested and not opaque:
                classes.append(LightClass(
                    node.name,
                    tuple(_dotted(base) for base in node.bases),
                    tuple(_dotted(dec.func if isinstance(dec, ast.Call) else dec) for dec in node.decorator_list),
                ))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports.setdefault(alias.asname, set()).add(alias.name)
                else:
                    root = alias.name.split(".")[0]
                    imports.setdefault(root, set()).add(root)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name
                if node.level:
                    relative.add(bound)
                elif node.module:
                    imports.setdefault(bound, set()).add(f"{node.module}.{alias.name}")
        blocks = _BLOCKS.get(type(node), ())
        if blocks:
            inner_nested = nested or isinstance(node, _FRAMES)
            inner_opaque = opaque or isinstance(node, _OPAQUE)
            children = [child for field in blocks for child in getattr(node, field)]
            stack.extend((child, inner_nested, inner_opaque) for child in reversed(children))
    return LightFile(
        exact, tuple(c.name for c in classes), tuple(classes), frozenset(seen),
        {name: frozenset(targets) for name, targets in imports.items()}, frozenset(relative),
    )


def _refs(info: LightFile, dotted: Dotted) -> Iterable[str]:
    """The absolute references `dotted` may resolve to at module level (a superset)."""
    rest = dotted[1:]
    for target in sorted(info.imports.get(dotted[0], ())):
        yield ".".join((target,) + rest)


def harmless(project, path: str, info: Optional[LightFile], tests: Sequence[Callable[[str], bool]]) -> bool:
    """True when no class of the file can be one a framework runs: none of its bases or
    decorators can be a reference that passes one of `tests`, either directly or through a
    class of the project (a reference that may lead into the project counts as passing)."""
    if info is None or not info.exact:
        return False
    for cls in info.classes:
        for dotted in cls.decorators:
            if dotted is None or dotted[0] in info.relative:
                return False
            if any(test(ref) for ref in _refs(info, dotted) for test in tests):
                return False
        for dotted in cls.bases:
            if dotted is None or dotted[0] in info.relative:
                return False
            for ref in _refs(info, dotted):
                if any(True for _ in project._module_candidates(path, ref)):
                    return False
                if any(test(ref) or test(_canonical(ref)) for test in tests):
                    return False
            # a class of the file as a base: harmless when that class is (all are checked)
    return True


def _canonical(ref: str) -> str:
    if not ref.startswith(_CANONICAL_PREFIX):
        return ref
    from amplint.analysis.facts.names import _CANONICAL

    return _CANONICAL.get(ref, ref)

