"""Half dtypes kept as dataclass field defaults (AMP103 across files): facebookresearch/lingua's
`TrainArgs` holds `model: ModelArgs = field(default_factory=ModelArgs)`, whose
`param_dtype: torch.dtype = torch.float16`; apps/lm/train.py runs
`model.to(device="cuda", dtype=args.model.param_dtype)` with `args: TrainArgs`. The field
chain ("model", "param_dtype") of `TrainArgs` is float16 by default, and the answer travels as
an EntryDtypeField to each file naming the outer class (facts/fp16.py reads it).

Only what nothing can change is taken, judged on the project's texts: a field whose default is
a literal `torch.float16` / `torch.half` / `torch.bfloat16` (or `field(default=...)`), nested
through fields whose default is `field(default_factory=Cls)` or `Cls()` of a dataclass of the
same file; no text assigns a field of the chain (`.param_dtype = ...`, `.model = ...`,
`setattr(..., "param_dtype", ...)`; nor, in a file naming a class of the chain, a `setattr` of a
computed name or a `__dict__` write), no text constructs a class of the chain with arguments
(`ModelArgs(param_dtype=...)`, `ModelArgs(**cfg)`), no non-Python file
names the leaf field (a YAML config), and no text uses a loader that fills dataclasses from
configs or the command line (OmegaConf, dacite, tyro, simple_parsing, HfArgumentParser,
jsonargparse, Hydra, `dataclasses.replace`). Only files holding `@dataclass` and a half dtype
literal are parsed (with `ast`)."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.half_callees import LOCAL, EntryDtypeField
from amplint.analysis.project.text_tests import names_a_half_dtype, names_half_literal  # noqa: F401 (read here)

_HALF = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16"}
_LOADERS = re.compile(r"\b(?:OmegaConf|dacite|tyro|simple_parsing|HfArgumentParser|jsonargparse|hydra)\b"
                      r"|dataclasses\.replace|from dataclasses import[^\n]*\breplace\b")
_MAX_NESTING = 3
# `setattr(obj, key, ...)` with a name not written as a string (a write through `__dict__` too)
COMPUTED_SETATTR = re.compile(r"setattr\(\s*[^,()]+,\s*(?![\s'\"])")


def dtype_field_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryDtypeField, ...]]:
    texts = {path: project.files.get(path) or "" for path in paths}
    python = [path for path in paths if path.endswith(".py")]
    defining = [path for path in python if names_half_literal(project, path) and "dataclass" in texts[path]]
    if not defining or any(_LOADERS.search(texts[path]) for path in python):
        return {}
    found: Dict[str, List[EntryDtypeField]] = {}
    for path in defining:
        module = module_of(path)
        for cls, chain, dtype, line in _half_chains(texts[path]):
            if not _untouched(texts, python, path, cls, chain):
                continue
            cite = (f"`{'.'.join(chain)}` of `{cls}` defaults to torch.{dtype} at "
                    f"{project.display(path)}:{line}")
            deliver(found, texts, python, path, EntryDtypeField(module, cls, chain, dtype, cite))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def deliver(found, texts, python, path: str, entry: EntryDtypeField) -> None:
    """Hand `entry` (a fact about class `entry.cls` defined in `path`) to its own file (as LOCAL)
    and to every file naming the class, under its module's name and the packages re-exporting it."""
    word = re.compile(r"\b%s\b" % re.escape(entry.cls))
    found.setdefault(path, []).append(replace(entry, module=LOCAL))
    exported = [replace(entry, module=package) for package in reexports(texts, python, path, entry.cls)]
    for user in python:
        if user != path and word.search(texts[user]):
            found.setdefault(user, []).extend([entry] + exported)


def reexports(texts, python, path: str, cls: str) -> List[str]:
    """The packages whose `__init__.py` imports `cls` from the module of `path` (`from
    .fsdp import fsdp_config`, `from pkg.configs.fsdp import fsdp_config`): a user's
    `from pkg.configs import fsdp_config` names the same class."""
    module = module_of(path)
    found = []
    for init in python:
        if not init.endswith("/__init__.py") and init != "__init__.py":
            continue
        package = module_of(init)
        for match in re.finditer(r"^from[ \t]+(\.?[\w.]+)[ \t]+import[ \t]+([^\n#]+)", texts[init], re.M):
            source, names = match.group(1), match.group(2)
            if cls not in re.findall(r"\w+", names) or re.search(r"\b%s[ \t]+as\b" % re.escape(cls), names):
                continue
            if source.startswith("."):
                source = package + source if not source.startswith("..") else ""
            if source and (module == source or module.endswith("." + source)):
                found.append(package)
    return found


def module_of(path: str) -> str:
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _half_chains(text: str) -> List[Tuple[str, Tuple[str, ...], str, int]]:
    """(class, field chain, dtype, line of the leaf's default) of each dataclass of the file."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and _is_dataclass(node)}
    out = []
    for name in sorted(classes):
        for chain, dtype, line in _chains(classes, name, 0):
            out.append((name, chain, dtype, line))
    return out


def _chains(classes, name: str, depth: int) -> List[Tuple[Tuple[str, ...], str, int]]:
    out: List[Tuple[Tuple[str, ...], str, int]] = []
    if depth > _MAX_NESTING:
        return out
    for stmt in classes[name].body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None):
            continue
        field = stmt.target.id
        default = _default(stmt.value)
        dtype = half_literal(default) if default is not None else None
        if dtype is not None:
            out.append(((field,), dtype, stmt.lineno))
            continue
        inner = _factory(stmt.value)
        if inner in classes and inner != name:
            out.extend(((field,) + chain, dtype, line) for chain, dtype, line in _chains(classes, inner, depth + 1))
    return out


def _is_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name == "dataclass":
            return not any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body)
    return False


def _default(value: ast.expr) -> Optional[ast.expr]:
    if _is_field_call(value):
        return next((k.value for k in value.keywords if k.arg == "default"), None)  # type: ignore[union-attr]
    return value


def _factory(value: ast.expr) -> Optional[str]:
    """The class a field's default makes: `field(default_factory=Cls)` or `Cls()`."""
    if _is_field_call(value):
        made = next((k.value for k in value.keywords if k.arg == "default_factory"), None)  # type: ignore[union-attr]
        return made.id if isinstance(made, ast.Name) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args and not value.keywords:
        return value.func.id
    return None


def _is_field_call(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return (isinstance(func, ast.Name) and func.id == "field") or (
        isinstance(func, ast.Attribute) and func.attr == "field" and isinstance(func.value, ast.Name)
        and func.value.id == "dataclasses")


def half_literal(value: ast.expr) -> Optional[str]:
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "torch":
        return _HALF.get(value.attr)
    return None


def _untouched(texts, python, path: str, cls: str, chain: Tuple[str, ...]) -> bool:
    """No text sets a field of the chain, constructs a class on the way with arguments, and no
    config file names the leaf field."""
    for field in chain:
        written = re.compile(r"\.%s\s*=(?!=)|setattr\([^)\n]*['\"]%s['\"]" % (field, field))
        if any(written.search(texts[p]) for p in python):
            return False
    leaf = re.compile(r"\b%s\b" % re.escape(chain[-1]))
    if any(leaf.search(text) for p, text in texts.items() if not p.endswith(".py")):
        return False
    names = _classes_on_the_way(texts[path], cls, chain)
    for name in names:
        if any(re.search(r"\b%s\(\s*[^)\s]" % re.escape(name), texts[p]) for p in python):
            return False
    # a file that names a class of the chain (or defines it) and stores attributes by a computed
    # name may set the field: minGPT's `merge_from_args` runs `setattr(config, key, value)`
    for p in python:
        text = texts[p]
        if (p == path or any(name in text for name in names)) and (
                "__dict__" in text or "setattr" in text and COMPUTED_SETATTR.search(text)):
            return False
    return True


def _classes_on_the_way(text: str, cls: str, chain: Tuple[str, ...]) -> List[str]:
    tree = ast.parse(text)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    names, current = [cls], cls
    for field in chain[:-1]:
        node = classes.get(current)
        stmt = next((s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                     and s.target.id == field), None) if node is not None else None
        current = _factory(stmt.value) if stmt is not None and stmt.value is not None else None
        if current is None:
            break
        names.append(current)
    return names
