"""Class attributes read as a dtype (facts/class_dtypes.py): `dtype=self.<attr>` in a method of
class K is the attribute of whichever class is `self`: K or one of its project subclasses, in any
file (sd-scripts' `SdxlNetworkTrainer(train_network.NetworkTrainer)` overriding
`autocast_dtype = torch.bfloat16`).

Asked only of the files whose rules can use it: those the pass reaches with a region or that open
one (first pass), whose text passes `dtype=self.<attr>`. Each class that can be self reads the
attribute as Python does for single chains: its own class body, then its one project base, and
so on. The answer is given only when every class has a known floating torch dtype there: a
method, property or `self.<attr> = ...` store on the way, a binding to anything but
`torch.<dtype>`, a base outside the project other than `nn.Module`/`object`, several project
bases, an attribute no class binds, or a `<obj>.<attr> = ...` store anywhere in the project
gives no answer. A class whose `__init__` stores a parameter there (`self.<attr> = dtype`) reads
what every construction of the project passes (init_dtypes.py)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Optional, Set

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.class_dtypes import EntryClassDtype
from amplint.analysis.facts.property_dtypes import PLAIN_BASES
from amplint.analysis.project.init_dtypes import init_param_dtype
from amplint.analysis.project.property_entries import class_node
from amplint.analysis.project.text_tests import starts_a_word

# `\bdtype\s*=\s*self\.(\w+)\s*[,)]` led by its literal, which the engine skips to (one led by
# `\b` is tried at every position); the word boundary is tested before each match (`self_dtype_attrs`)
_SELF_DTYPE_AHEAD = re.compile(r"dtype\s*=\s*self\.(\w+)\s*[,)]")
_MAX_DEPTH = 8
_FLOATS = {name: dtype for name, dtype in R.DTYPE_NAMES.items() if dtype in R.FLOAT_ORDER}
_UNKNOWN = "?"


def self_dtype_attrs(text: str) -> Set[str]:
    """The attributes of `dtype=self.X` (as `set(re.findall(r"\\bdtype\\s*=\\s*self\\.(\\w+)\\s*[,)]",
    text))`): a match the boundary drops holds no `dtype` where one it
    keeps could start (inside it `dtype` follows a word character, or `self.`'s word runs on
    to `\\s*[,)]`, never to `=`)."""
    return {match.group(1) for match in _SELF_DTYPE_AHEAD.finditer(text)
            if starts_a_word(text, match.start())}


def class_dtype_entries(project, paths) -> None:
    """Puts EntryClassDtype into `project.class_dtypes` (path -> entries) and the files that
    decided them into `project.class_dtype_deps`."""
    parsed: Dict[str, Optional[ast.Module]] = {}
    stored: Dict[str, bool] = {}
    for path in sorted(paths):
        text = project.files.get(path) if path.endswith(".py") else None
        if not text or "autocast" not in text:
            continue
        attrs = self_dtype_attrs(text)
        summary = project.summary(path) if attrs else None
        if summary is None:
            continue
        for cls in sorted(summary.classes):
            for attr in sorted(attrs):
                deciding = {path}
                value = _class_value(project, path, cls, attr, parsed, deciding, 0)
                if value is _UNKNOWN and attr not in summary.classes[cls].methods:
                    # `self.<attr> = <param>` in `__init__`: what every construction passes
                    node = class_node(project, path, cls, parsed)
                    kept = init_param_dtype(project, path, node, summary.classes[cls].bases, attr,
                                            parsed, deciding) if node is not None else None
                    if kept is not None:
                        project.__dict__.setdefault("class_dtypes", {}).setdefault(path, set()).add(
                            EntryClassDtype(cls, attr, (kept,)))
                        project.__dict__.setdefault("class_dtype_deps", {}).setdefault(path, set()).update(deciding)
                    continue
                if value in (None, _UNKNOWN):
                    continue  # the class itself does not read a dtype: its subclasses are not asked
                if attr not in stored:
                    stored[attr] = _stored_elsewhere(project, attr)
                if stored[attr]:
                    continue
                options = []
                for where, name in [(path, cls)] + list(project.dispatch.subclasses(path, cls)):
                    dtype = _class_value(project, where, name, attr, parsed, deciding, 0)
                    if dtype in (None, _UNKNOWN):
                        options = []
                        break
                    node = class_node(project, where, name, parsed)  # read by _class_value
                    options.append((f"{name} at {project.display(where)}:{node.lineno}", dtype))
                if not options:
                    continue
                project.__dict__.setdefault("class_dtypes", {}).setdefault(path, set()).add(
                    EntryClassDtype(cls, attr, tuple(options)))
                project.__dict__.setdefault("class_dtype_deps", {}).setdefault(path, set()).update(deciding)


def _class_value(project, path: str, cls: str, attr: str, parsed, deciding: Set[str],
                 depth: int) -> Optional[str]:
    """The dtype class `cls` of `path` reads for `attr`; None where no class of its chain binds
    it, _UNKNOWN where the chain cannot be read or binds something else."""
    summary = project.summary(path)
    info = summary.classes.get(cls) if summary is not None else None
    node = class_node(project, path, cls, parsed) if info is not None else None
    if node is None or depth > _MAX_DEPTH:
        return _UNKNOWN
    deciding.add(path)
    if attr in info.methods or _stores_self(node, attr):
        return _UNKNOWN
    value = _class_binding(node, attr)
    if value is not None:
        return _dtype_of(summary, value)
    bases = [b for b in info.bases if b not in PLAIN_BASES]
    if not bases:
        return None
    if len(bases) > 1:
        return _UNKNOWN
    found = project.resolve_ref(path, bases[0])
    if found is None or len(found[1]) != 1:
        return _UNKNOWN  # outside the project (or not one class): it may bind the name
    return _class_value(project, found[0], found[1][0], attr, parsed, deciding, depth + 1)


def _class_binding(node: ast.ClassDef, attr: str):
    """The value of the one plain `attr = <value>` of the class body; _UNKNOWN for any other
    binding (several, annotated without a value, augmented, a nested class), None for none."""
    values = []
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
            values.append(stmt.value if len(stmt.targets) == 1 else None)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id == attr:
            values.append(stmt.value if isinstance(stmt, ast.AnnAssign) else None)
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == attr:
            values.append(None)
    if not values:
        return None
    return values[0] if len(values) == 1 and values[0] is not None else _UNKNOWN


def _dtype_of(summary, value) -> str:
    if value is _UNKNOWN or not isinstance(value, ast.Attribute) or not isinstance(value.value, ast.Name):
        return _UNKNOWN
    if summary.imports.get(value.value.id) != "torch":
        return _UNKNOWN
    return _FLOATS.get(f"torch.{value.attr}", _UNKNOWN)


def _stores_self(node: ast.ClassDef, attr: str) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == attr and isinstance(sub.ctx, ast.Store):
            return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr":
            return True
    return False


def _stored_elsewhere(project, attr: str) -> bool:
    """`<something>.<attr> = ...` (or `setattr`) in a project file: an instance or class may
    then hold another value than its class body binds. Read as text, once per attribute."""
    store = re.compile(r"\.%s\s*(?::[^=\n]*)?=(?!=)" % re.escape(attr))
    for path, text in project.files.items():
        if path.endswith(".py") and attr in text and store.search(text):
            return True
    return False
