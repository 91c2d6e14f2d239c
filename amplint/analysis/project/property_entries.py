"""Properties inherited across files (facts/property_dtypes.py): BLIP's `BertSelfAttention(nn.Module,
ModuleUtilsMixin)` in models/med.py reads `torch.finfo(self.dtype).min`, and `dtype` is a property
of the mixin in models/module_utils.py returning `next(self.parameters()).dtype`.

Asked only of the files whose rules can use it: those the pass reaches with a region or that
open one (first pass), whose text reads `finfo(self.<attr>)`. The class's bases are walked in
their order, as Python's attribute lookup does for these single chains: a project class that
defines the name answers (a property with that getter, or nothing: another definition); a base
outside the project other than `nn.Module`/`object` ends the walk without an answer, since it may
define the name first. The defining file is read with `ast`, once."""

from __future__ import annotations

import ast
import re
from typing import Dict, Optional, Tuple

from amplint.analysis.facts.property_dtypes import PLAIN_BASES, EntryParamsDtype, ast_returns_params_dtype

_FINFO_SELF = re.compile(r"finfo\(\s*self\.(\w+)\s*\)")
_MAX_DEPTH = 8


def params_dtype_entries(project, paths) -> None:
    """Puts EntryParamsDtype into `project.property_dtypes` (path -> entries) and the files that
    decided them into `project.property_deps`."""
    parsed: Dict[str, Optional[ast.Module]] = {}
    for path in sorted(paths):
        text = project.files.get(path) if path.endswith(".py") else None
        if not text or "finfo(" not in text:
            continue
        attrs = set(_FINFO_SELF.findall(text))
        summary = project.summaries.get(path) if attrs else None
        if summary is None:
            continue
        for cls, info in sorted(summary.classes.items()):
            for attr in sorted(attrs):
                if attr in info.methods:
                    continue  # the class's own: the file's facts read it
                deciding = {path}
                found = _inherited(project, path, info.bases, attr, parsed, deciding, 0)
                if found is None:
                    continue
                where, owner, line = found
                cite = f"the property `{attr}` of {owner} at {project.display(where)}:{line}"
                project.__dict__.setdefault("property_dtypes", {}).setdefault(path, set()).add(
                    EntryParamsDtype(cls, attr, cite))
                project.__dict__.setdefault("property_deps", {}).setdefault(path, set()).update(deciding)


def _inherited(project, path: str, bases, attr: str, parsed, deciding: set,
               depth: int) -> Optional[Tuple[str, str, int]]:
    """(file, class, line) of the property the first base defining `attr` gives, or None."""
    if depth > _MAX_DEPTH:
        return None
    for base in bases:
        if base in PLAIN_BASES:
            continue
        found = project.resolve_ref(path, base)
        if found is None or len(found[1]) != 1:
            return None  # outside the project (or not one class): it may define the name
        where, (cls,) = found
        summary = project.summary(where)
        info = summary.classes.get(cls) if summary is not None else None
        if info is None:
            return None
        deciding.add(where)
        if attr in info.methods:
            line = _property_line(project, where, cls, attr, parsed)
            return (where, cls, line) if line else None
        if _class_binds(project, where, cls, attr, parsed):
            return None
        hit = _inherited(project, where, info.bases, attr, parsed, deciding, depth + 1)
        if hit is not None:
            return hit
        if _defines_anywhere(project, where, info.bases, attr, parsed, depth + 1):
            return None
    return None


def _defines_anywhere(project, path: str, bases, attr: str, parsed, depth: int) -> bool:
    """Whether the walk stopped below for a reason other than "not defined": an external base
    (which may define it) or another definition. Then the later bases are not asked."""
    for base in bases:
        if base in PLAIN_BASES:
            continue
        found = project.resolve_ref(path, base)
        if found is None or len(found[1]) != 1 or depth > _MAX_DEPTH:
            return True
        summary = project.summary(found[0])
        info = summary.classes.get(found[1][0]) if summary is not None else None
        if info is None or attr in info.methods or _class_binds(project, found[0], found[1][0], attr, parsed):
            return True
        if _defines_anywhere(project, found[0], info.bases, attr, parsed, depth + 1):
            return True
    return False


def class_node(project, path: str, cls: str, parsed) -> Optional[ast.ClassDef]:
    if path not in parsed:
        try:
            parsed[path] = ast.parse(project.files.get(path) or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            parsed[path] = None
    tree = parsed[path]
    if tree is None:
        return None
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)


def _property_line(project, path: str, cls: str, attr: str, parsed) -> int:
    node = class_node(project, path, cls, parsed)
    if node is None:
        return 0
    defs = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == attr]
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or not ast_returns_params_dtype(defs[0]):
        return 0
    if _stores_self(node, attr):
        return 0
    return defs[0].lineno


def _class_binds(project, path: str, cls: str, attr: str, parsed) -> bool:
    """A class-level binding of `attr` the summary's methods do not show (`dtype = torch.float16`)."""
    node = class_node(project, path, cls, parsed)
    if node is None:
        return True
    for stmt in node.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else (
            [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else [])
        if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
            return True
        if isinstance(stmt, ast.ClassDef) and stmt.name == attr:
            return True
    return _stores_self(node, attr)


def _stores_self(node: ast.ClassDef, attr: str) -> bool:
    """`self.<attr> = ...` anywhere in the class's methods."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == attr and isinstance(sub.ctx, ast.Store):
            return True
    return False
