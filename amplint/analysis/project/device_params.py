"""Parameters used as an autocast's device type that call sites of other files bind to a
`torch.device` object (AMP131 across files): DETR's engine.py runs
`with torch.autocast(device_type=device, ...)` in `train_one_epoch(model, ..., device, ...)`, and
main.py calls it with `device = torch.device(args.device)`. The file that opens the region sees
an unannotated parameter; the project pass sees what its callers pass.

A parameter is bound at a call site by position or keyword (a method's call through an instance
leaves `self` out), the class flow's call sites as context_params.py reads them. A site's value
is a `torch.device` when it is `torch.device(...)` inline or a name the caller's scope binds only
to one (amplint.analysis.facts.device_values, the same test AMP131 makes in one file). One such
site is enough: that call raises. A parameter the function binds again, or one annotated (the
file's own facts read the annotation), is not asked about. Nothing else is guessed."""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from amplint.analysis.facts.device_values import EntryParamDevice, device_call, name_is_device
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.context_params import frame_of, rebound_names, statements

# `autocast(name` / `autocast(device_type=name` with `name` a plain word: the text test
_DEVICE_ARG = re.compile(r"autocast\(\s*(?:device_type\s*=\s*)?([A-Za-z_]\w*)\s*[,)]")

# (function key, parameter, line of the autocast call)
ParamDevice = Tuple[str, str, int]


def param_devices(text: str) -> List[ParamDevice]:
    """The autocast calls of a file whose device type is an unannotated parameter of the
    enclosing function that its body never binds again."""
    names = {m.group(1) for m in _DEVICE_ARG.finditer(text)} if "autocast(" in text else set()
    # a name the file assigns as a statement (`device_type = x.device.type`, transformers' idiom)
    # is rebound where that happens; only a name never assigned in the file is worth a parse (a
    # parameter of one function assigned in another is missed, never guessed)
    names = {n for n in names if not re.search(rf"^[ \t]*{n}[ \t]*(?::[^=\n]*)?=(?!=)", text, re.M)}
    if not names:
        return []
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: List[ParamDevice] = []

    def visit(node, key: str) -> None:
        for child in statements(node):
            if type(child) in (ast.FunctionDef, ast.AsyncFunctionDef):
                inner = f"{key}.{child.name}" if key else child.name
                _function(child, inner, names, found)
                visit(child, inner)
            elif type(child) is ast.ClassDef:
                visit(child, f"{key}.{child.name}" if key else child.name)

    visit(tree, "")
    return found


def _function(function, key: str, names: set, found: List[ParamDevice]) -> None:
    args = function.args
    plain = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation is None}
    wanted = plain & names
    if not wanted:
        return
    rebound = None
    for node in _own_nodes(function):
        if type(node) is not ast.Call or not _is_autocast(node.func):
            continue
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "device_type"), None)
        if type(arg) is not ast.Name or arg.id not in wanted:
            continue
        if rebound is None:
            rebound = rebound_names(function)
        if arg.id not in rebound:
            found.append((key, arg.id, node.lineno))


def _own_nodes(function):
    """The nodes of a function's body, not those of functions or classes inside it."""
    stack = list(function.body) + list(function.decorator_list)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if type(child) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                stack.append(child)


def _is_autocast(func) -> bool:
    if type(func) is ast.Name:
        return func.id == "autocast"
    return type(func) is ast.Attribute and func.attr == "autocast"


def param_device_entries(project) -> None:
    """Puts EntryParamDevice into `project.device_params` (path -> entries) and the callers'
    files into `project.device_deps`, read with the other entries (__init__.py)."""
    for path in project.first_pass:
        summary = project.summaries.get(path)
        text = project.files.get(path) if summary is not None and summary.flow is not None else None
        if not text or "autocast(" not in text:
            continue
        for key, param, _line in param_devices(text):
            bound = _binding(project, path, key, param)
            if bound is None:
                continue
            cite, deciding = bound
            project.__dict__.setdefault("device_params", {}).setdefault(path, set()).add(
                EntryParamDevice(key, param, cite))
            project.__dict__.setdefault("device_deps", {}).setdefault(path, set()).update(deciding)


def _binding(project, path: str, key: str, param: str) -> Optional[Tuple[str, set]]:
    """(the first call site that binds `param` to a torch.device, the callers' files) or None."""
    flow = project.flow
    functions = flow._flow(path)
    function = functions.functions.get(key) if functions is not None else None
    if function is None or param not in function.params:
        return None
    parts = key.split(".")
    if len(parts) > 2:
        return None
    summary = project.summary(path)
    if len(parts) == 2 and (summary is None or parts[0] not in summary.classes):
        return None
    index = function.params.index(param)
    positional = index if index < function.positional else None
    cites: List[Tuple[str, int, str]] = []
    files = set()
    for where, caller, args, offset in flow._binding_sites(parts[-1], (path, key), False, 0):
        value = next((v for slot, v in args if slot == param
                      or (positional is not None and slot == positional - offset)), None)
        if value is None:
            continue
        files.add(where)
        line = _device_line(project, where, caller, value)
        if line is not None:
            cites.append((project.display(where), line, value[1]))
    if not cites:
        return None
    shown, line, name = min(cites)
    return f"`{name} = torch.device(...)` at {shown}:{line}", files


def _device_line(project, where: str, caller: str, value) -> Optional[int]:
    """The line binding the caller's name `value` to a torch.device, or None when it is not one."""
    if value[0] != "local":
        return None
    from amplint.analysis.project.function_entries import parsed_facts
    from amplint.analysis.project.lines import node_lines

    parsed = parsed_facts(project, where)
    if parsed is None:
        return None
    module, facts = parsed
    frame = frame_of(facts, caller)
    name = value[1]
    if frame is None or not name_is_device(facts, name, frame):
        return None
    nodes = [s.value for s in facts.tree.assigns if s.frame.scope is frame.scope and len(s.targets) == 1
             and getattr(s.targets[0], "value", None) == name and device_call(facts, s.value, s.frame)]
    if not nodes:
        return None  # an annotated parameter of the caller: not followed further
    return node_lines(module, nodes[:1]).get(id(nodes[0]), 0) or None
