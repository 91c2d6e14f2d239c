"""Numeric constants a file imports from another file of the project (AMP110 across files):
NeMo's `from nemo.collections.asr.parts.utils.constants import INF_VAL` (`INF_VAL = 10000.0`
there), then `scores.masked_fill(mask, -INF_VAL)` in the attention module. Within one file
facts/fills.py reads a module-level `NAME = <number>`; here the same is read in the module an
import names (through re-exports), and the file gets an `EntryConstant` under the name it
imports, which fills.py then takes as that number.

Exact or nothing: the defining module binds the name once, at module level, to a number that
plain arithmetic makes (`1e9`, `-1e4`, `2 ** 16`, `float("inf")` is no finite fill), and nothing
else in it rebinds it (`global`, a second assignment, a loop, an import, `del`); only numbers
beyond float16's range are delivered (the only ones AMP110 reads).

Cost: text tests first (the importing file must call a fill, the defining file must hold
`NAME = <a number>` at the start of a line: detectron2's `logger = ...` sent 38 files to a parse
for none); the defining files that pass are read from their `ast` tree (shared,
parsing.python_tree), each once. A module many files import from (transformers' modeling_utils,
utils/__init__: ~3,000 imports of the files that fill) is searched once per name it is asked
for, not once per importing file, and only where the name starts a line; a text is searched
for the fill names only around a `fill`/`full` before a `(` (issue 34)."""

from __future__ import annotations

import ast
import math
import re
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.data.overflow import FP16_MAX
from amplint.analysis.data.triggers import FILL_NAMES
from amplint.analysis.facts.fills import EntryConstant
from amplint.analysis.parsing import python_tree

_FILLS = re.compile(r"\b(?:%s)\s*\(" % "|".join(sorted(FILL_NAMES)))
# every name of FILL_NAMES ends in one of these, begun at most 7 characters before ("masked_"):
# this pattern (a literal first letter) scans a text ~20x faster than _FILLS
_FILL_ENDS = re.compile(r"f(?:ill|ull)(?:_like|_)?\s*\(")


def _calls_a_fill(text: str) -> bool:
    """`_FILLS.search(text) is not None`, read only around the ends of fill names (a search
    from a position still sees the character before it for `\\b`)."""
    for match in _FILL_ENDS.finditer(text):
        if _FILLS.search(text, max(0, match.start() - 7), match.end()) is not None:
            return True
    return False


def constant_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryConstant, ...]]:
    """path -> EntryConstants for the big numeric constants it imports and may fill with."""
    memo: Dict[Tuple[str, str], Optional[Tuple[float, int]]] = {}
    found: Dict[str, Tuple[EntryConstant, ...]] = {}
    defining: Dict[tuple, Optional[str]] = {}  # (module, names in it, name, depth) -> its answer
    patterns: Dict[str, "re.Pattern[str]"] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = project.files.get(path)
        if not text or not _calls_a_fill(text):
            continue
        summary = project.made_summary(path) or project.planned_summary(path)
        if summary is None or not summary.imports:
            continue
        entries: List[EntryConstant] = []
        for name, ref in sorted(summary.imports.items()):
            if ref.startswith(("?", "@")) or not _twice(text, name):
                continue
            attr = ref.rsplit(".", 1)[-1]
            where = _defining_file(project, path, ref, (attr, patterns), defining, 0)
            if where is None or where == path:
                continue
            defined = attr
            key = (where, defined)
            if key not in memo:
                memo[key] = _module_constant(project.files.get(where) or "", defined)
            value = memo[key]
            if value is not None:
                entries.append(EntryConstant(name, ref, value[0], f"{project.display(where)}:{value[1]}"))
        if entries:
            found[path] = tuple(entries)
    return found


def _defining_file(project, importer: str, ref: str, defines, answers: dict, depth: int) -> Optional[str]:
    """The project module `ref` names a module-level name of, when its text binds the name to a
    number (`defines`: the name, and the patterns by name), through package `__init__.py` re-exports
    (`from .constants import X`, `from pkg.constants import X`, at most 3 deep): read from the
    texts alone, no summary made. The answer depends only on the module `ref` leads to first,
    the names in it and `defines`: kept in `answers` for the other files that import it."""
    if depth > 3:
        return None
    for path, attrs in project._module_candidates(importer, ref):
        key = (path, attrs, defines[0], depth)
        if key not in answers:
            answers[key] = _defined_in(project, path, attrs, defines, answers, depth)
        return answers[key]
    return None


def _defined_in(project, path: str, attrs: Tuple[str, ...], defines, answers: dict, depth: int) -> Optional[str]:
    if len(attrs) != 1:
        return None
    text = project.files.get(path) or ""
    if _binds_a_number(text, defines[0], defines[1]):
        return path
    if not path.endswith("__init__.py") or attrs[0] not in text:
        return None
    for match in re.finditer(r"^from\s+([.\w]+)\s+import\s+([^\n]*)$", text, re.M):
        names = re.findall(r"\b(\w+)\b(?:\s+as\s+(\w+))?", match.group(2))
        for name, alias in names:
            if (alias or name) == attrs[0] and name != "as":
                return _defining_file(project, path, f"{match.group(1)}.{name}" if not match.group(1).endswith(".")
                                      else f"{match.group(1)}{name}", defines, answers, depth + 1)
    return None


def _twice(text: str, name: str) -> bool:
    """`text.count(name) >= 2`, read only as far as the second."""
    first = text.find(name)
    return first >= 0 and text.find(name, first + len(name)) >= 0


def _binds_a_number(text: str, name: str, patterns: Dict[str, "re.Pattern[str]"]) -> bool:
    """Does a line of `text` start `NAME = <number>` (a literal, signed, in parentheses, or
    `float(`)? Only a text where the name starts a line is searched, with a pattern compiled
    once per name."""
    if not text.startswith(name) and "\n" + name not in text:
        return False
    pattern = patterns.get(name)
    if pattern is None:
        pattern = patterns[name] = re.compile(
            rf"^{re.escape(name)}\s*(?::[^=\n]*)?=\s*[-+(\s]*(?:\d|\.\d|float\s*\()", re.M)
    return pattern.search(text) is not None


def _module_constant(text: str, name: str) -> Optional[Tuple[float, int]]:
    """(value, line) of the one binding of `name` in this module, a number beyond float16's
    range, or None."""
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound: List[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            bound.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            bound.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            bound.append(node)
    if len(bound) != 1:
        return None
    for stmt in tree.body:  # the one binding is a module-level statement `NAME = <number>`
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is bound[0]:
            value = _number(stmt.value, 0)
        elif isinstance(stmt, ast.AnnAssign) and stmt.target is bound[0] and stmt.value is not None:
            value = _number(stmt.value, 0)
        else:
            continue
        if value is None or not math.isfinite(value) or abs(value) <= FP16_MAX:
            return None
        return value, stmt.lineno
    return None


def _number(node: ast.AST, depth: int) -> Optional[float]:
    """The number plain arithmetic makes of `node` (as facts/fills.py's `_evaluate`), or None."""
    if depth > 4:
        return None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        try:
            return float(node.value)
        except OverflowError:
            return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand, depth + 1)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.Mult, ast.Add, ast.Sub)):
        left, right = _number(node.left, depth + 1), _number(node.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Pow):
                return None if abs(right) > 400 else float(left ** right)
            if isinstance(node.op, ast.Mult):
                return left * right
            return left + right if isinstance(node.op, ast.Add) else left - right
        except (OverflowError, ZeroDivisionError, TypeError):
            return None
    return None
