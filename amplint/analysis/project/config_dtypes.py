"""Half dtypes a config object holds whatever built it: a PROPERTY whose getter returns one half
dtype literal on every path (tloen/alpaca-lora forks' `TrainConfig.compute_dtype`, a
`@property` returning `torch.bfloat16`), or an ATTRIBUTE every store of the project sets to the
same half dtype literal (`self.compute_dtype = torch.bfloat16` in `__init__`). The answer is
an EntryDtypeField of chain (name,) with `any_args`: unlike a dataclass field's default
(dtype_fields.py), the arguments the class is built with change nothing, so
`cfg = TrainConfig(**kwargs)` reads it too (facts/dtype_fields.py), for an autocast's
`dtype=cfg.compute_dtype` and a cast's `.to(dtype=cfg.compute_dtype)` alike.

Exact or nothing, judged on the project's texts: the name is defined by no other `def` and no
class-level or dataclass-field binding anywhere (a subclass or sibling overriding it); a
property has no setter and no text assigns `.name`; an attribute's every `.name = ...` store
in the project is the same literal, no `setattr` names it, no file that names the class stores
attributes by a computed name (`setattr(self, k, v)`, `__dict__`), and no non-Python file names
it (a YAML config a loader copies in). Only files holding a half dtype literal are parsed."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Sequence, Tuple

from amplint.analysis.facts.half_callees import EntryDtypeField
from amplint.analysis.project.dtype_fields import (
    COMPUTED_SETATTR, deliver, half_literal, module_of,
)
from amplint.analysis.project.text_tests import names_half_literal

_PROPERTIES = frozenset({"property", "cached_property"})
# the lines a candidate needs (`return torch.bfloat16`, `self.x = torch.bfloat16`): only files
# holding one are parsed (transformers: 123 files name a half dtype, 4 hold such a line)
_SHAPES = re.compile(r"^[ \t]+(?:return|self\.\w+[ \t]*=)[ \t]*torch\.(?:float16|half|bfloat16)[ \t]*(?:#.*)?$", re.M)
_DTYPE = re.compile(r"torch\.(?:float16|half|bfloat16)")  # (led by its literal: skipped to)


def holds_shape(text: str) -> bool:
    """`_SHAPES.search(text) is not None`, tried only at the start of each line that writes a
    half dtype (every match is one line holding one): led by `^[ \t]+`, the search is tried at
    every line of the file (the mixed monorepo tree's 169 candidate files: ~8x the CPU)."""
    tried = -1  # the end of the last line tried
    for match in _DTYPE.finditer(text):
        at = match.start()
        if at <= tried:
            continue
        if _SHAPES.match(text, text.rfind("\n", 0, at) + 1) is not None:
            return True
        tried = text.find("\n", at)
        if tried < 0:
            return False
    return False


def config_dtype_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryDtypeField, ...]]:
    texts = {path: project.files.get(path) or "" for path in paths}
    python = [path for path in paths if path.endswith(".py")]
    defining = [path for path in python if names_half_literal(project, path) and holds_shape(texts[path])]
    found: Dict[str, List[EntryDtypeField]] = {}
    for path in defining:
        module = module_of(path)
        for cls, name, dtype, line, kind in _candidates(texts[path]):
            if not _sole(texts, python, cls, name, dtype, kind):
                continue
            what = "the property" if kind == "property" else "every store of"
            cite = f"{what} `{name}` of `{cls}` is torch.{dtype} ({project.display(path)}:{line})"
            deliver(found, texts, python, path, EntryDtypeField(module, cls, (name,), dtype, cite, any_args=True))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def _candidates(text: str) -> List[Tuple[str, str, str, int, str]]:
    """(class, name, dtype, line, "property" | "attribute") of the module's classes."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for stmt in cls.body:
            if not isinstance(stmt, ast.FunctionDef):
                continue
            if any(_decorator_name(d) in _PROPERTIES for d in stmt.decorator_list):
                dtype = _returned_literal(stmt)
                if dtype is not None:
                    out.append((cls.name, stmt.name, dtype, stmt.lineno, "property"))
                continue
            for node in _own_nodes(stmt):
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Attribute)
                        and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"):
                    dtype = half_literal(node.value)
                    if dtype is not None:
                        out.append((cls.name, node.targets[0].attr, dtype, node.lineno, "attribute"))
    return sorted(set(out))


def _decorator_name(decorator: ast.expr):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)


def _own_nodes(function: ast.FunctionDef):
    todo = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _returned_literal(getter: ast.FunctionDef):
    """The one half dtype every `return` of the getter gives, its body ending in a `return`
    (a getter that can fall off its end returns None); None for anything else."""
    if not getter.body or not isinstance(getter.body[-1], ast.Return):
        return None
    found = set()
    for node in _own_nodes(getter):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Return):
            found.add(half_literal(node.value) if node.value is not None else None)
    return found.pop() if len(found) == 1 and None not in found else None


_TARGET_CHARS = re.compile(r"[\w.\s,*\[\]]*")  # what a target list is written with, up to its `=`


def _in_targets(before: str, after: str) -> bool:
    """The word is one of several assignment targets of its line (`a.x, a.name = ...`): the
    line up to it and from it up to an `=` (not `==`) are target-list text, with a comma."""
    head = _TARGET_CHARS.match(after)
    return (_TARGET_CHARS.fullmatch(before) is not None and head is not None
            and after[head.end():head.end() + 1] == "=" and after[head.end() + 1:head.end() + 2] != "="
            and "," in before + after[:head.end()])


def _sole(texts, python, cls: str, name: str, dtype: str, kind: str) -> bool:
    """Nothing else in the project defines, overrides or stores `name` differently (each use of
    the word read from its line: one scan per text that holds it)."""
    word = re.compile(r"\b%s\b" % re.escape(name))
    same = {f"torch.{dtype}"} | ({"torch.half"} if dtype == "float16" else set())
    defs = 0
    for path in python:
        text = texts[path]
        if name not in text:  # a substring test first: the regex reads few texts
            continue
        for match in word.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            before, after = text[start:match.start()], text[match.end():end if end >= 0 else len(text)]
            lead, rest = before.strip(), after.lstrip()
            if lead in ("def", "async def"):
                defs += 1  # the property itself, a setter, another class's method of the name
            elif not lead and rest[:1] in (":", "=") and not rest.startswith("=="):
                return False  # a class attribute or dataclass field of the name (a subclass's too)
            elif before.endswith(".") and rest[:1] == "=" and not rest.startswith("=="):
                value = rest[1:].split("#", 1)[0].split(";", 1)[0].strip()
                if kind == "property" or value not in same:
                    return False  # a store: none for a property, the same literal for an attribute
            elif before.endswith(".") and (rest[:1] == ":" or _in_targets(before, after)):
                return False  # `cfg.name: T = v`, `cfg.name, cfg.x = v, w`: stores it does not read
            elif before.rstrip().endswith(("'", '"')) and ("setattr(" in before or "vars(" in before):
                return False  # `setattr(cfg, "name", v)`, `vars(cfg)["name"] = v`
            elif "__dict__" in before:
                return False  # `cfg.__dict__["name"] = v`, `cfg.__dict__.update(name=v)`
    if defs != (1 if kind == "property" else 0):
        return False
    if kind == "property":
        return True
    named = re.compile(r"\b%s\b" % re.escape(cls))
    for path in python:
        text = texts[path]
        if ("__dict__" in text or "setattr" in text and COMPUTED_SETATTR.search(text)) and named.search(text):
            return False  # attributes stored by a computed name in a file naming the class
    return not any(word.search(text) for path, text in texts.items() if not path.endswith(".py") and name in text)
