"""Fields of dataclasses in the class flow (issue 26 "Other carriers"): accelerate's examples
keep their settings in `@dataclass class TrainingConfig:` with `criterion: nn.Module =
field(default_factory=AsymmetricBCE)`, a config may hold `model_cls: type = Net`, and a caller
may pass `TrainingConfig(model_cls=Net)`. A dataclass has no `__init__` in the flow facts, so
`cfg.criterion` found no store; here a field holds its default (`= Net`: the class;
`field(default=X)`: X; `field(default_factory=F)`: what `F()` makes) and what the class's
construction sites pass for it, by keyword or by position in the fields' order.

The flow facts keep a class body's assignments with the module's (function key ""), by name: a
field is read there only when its name is assigned in no other class body and not at module
level of its file (checked on the file's text with `ast`, once per file), so the defaults of two
classes are never mixed. Only classes decorated `dataclasses.dataclass` and without an
`__init__` of their own; flags (`fp16: bool = True`) are not followed."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from amplint.analysis.parsing import python_tree
from amplint.analysis.project.flowindex import Things, merge_things

_FIELD = "dataclasses.field"


def is_dataclass(flow, path: str, cls: str) -> bool:
    summary = flow.p.summary(path)
    if summary is None or cls not in summary.classes:
        return False
    if not any(d == "dataclasses.dataclass" for d in summary.classes[cls].decorators):
        return False
    method = flow.p.method(path, cls, "__init__")
    return method is None or method != (path, f"{cls}.__init__")


def field_values(flow, path: str, cls: str, attr: str, depth: int) -> Things:
    """What field `attr` of an instance of dataclass `cls` (file `path`) may hold."""
    fields = _fields(flow, path).get(cls)
    if fields is None or attr not in fields:
        return {}
    out: Things = {}
    facts = flow._flow(path)
    module = facts.functions.get("") if facts is not None else None
    for value in (module.assigns.get(attr, ()) if module is not None else ()):
        merge_things(out, _default(flow, path, module, value, depth))
    # by position only when no base class may add fields before these
    position = fields.index(attr) if not flow.p.summary(path).classes[cls].bases else None
    # asked as halfspread's `_constructed_with` asks (site_files.py): a file whose text shows no
    # call that may hold this class (its own class of the same name, a library's) holds no site
    # this loop reads, and is not summarised for it
    for where, caller, callee, args, _line in flow._call_sites(cls, ("class", path, cls)):
        if ("class", path, cls) not in flow.values(where, caller, callee, depth):
            continue
        for slot, value in args:
            if slot == attr or (position is not None and slot == position):
                merge_things(out, flow.values(where, caller, value, depth))
    return out


def _default(flow, path: str, module, value, depth: int) -> Things:
    if value[0] != "call" or value[1] != ("ref", _FIELD):
        return flow.values(path, "", value, depth)
    # `field(default=X)` / `field(default_factory=F)`: the call's arguments, recorded at its line
    out: Things = {}
    for _last, callee, args, line in module.calls:
        if line != value[3] or callee != value[1]:
            continue
        for slot, arg in args:
            if slot == "default":
                merge_things(out, flow.values(path, "", arg, depth))
            elif slot == "default_factory":
                merge_things(out, flow.values(path, "", ("call", arg, value[2], line), depth))
    return out


def _fields(flow, path: str) -> Dict[str, List[str]]:
    """class name -> its fields in order, for the module-level classes of the file; a name
    assigned in two class bodies, or at module level, is left out of both."""
    cache = flow.__dict__.setdefault("_dataclass_fields", {})
    found = cache.get(path)
    if found is None:
        found = cache[path] = _read_fields(flow.p.files.get(path, ""))
    return found


def _read_fields(text: str) -> Dict[str, List[str]]:
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError):
        return {}
    seen: Dict[str, int] = {}
    bodies = [tree.body] + [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for body in bodies:
        for name in set(_assigned(body)):
            seen[name] = seen.get(name, 0) + 1
    classes: Dict[str, List[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            fields = [name for name, annotated in _annotated(node.body) if annotated]
            classes[node.name] = [name if seen.get(name) == 1 else "" for name in fields]
    return classes


def _assigned(body) -> List[str]:
    return [name for name, _ in _annotated(body)]


def _annotated(body) -> List[Tuple[str, bool]]:
    """(name, whether it is an annotated field) for each name a body assigns at its top level."""
    out: List[Tuple[str, bool]] = []
    for stmt in body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out.append((stmt.target.id, not _class_var(stmt.annotation)))
        elif isinstance(stmt, ast.Assign):
            out.extend((t.id, False) for t in stmt.targets if isinstance(t, ast.Name))
    return out


def _class_var(annotation: Optional[ast.AST]) -> bool:
    text = ast.unparse(annotation) if annotation is not None else ""
    return text.startswith(("ClassVar", "typing.ClassVar"))
