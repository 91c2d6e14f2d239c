"""The GradScaler protocol's blind spots for `amplint --show-regions`: the calls, inside a
function that runs scaler events (a GradScaler's or a framework's, amplint.analysis.data.scaler_vocab),
whose callee amplint could not compose into that function's protocol (the AMP12x rules stay
silent about what happens there).

A `self.method()` that no class of the file defines (a base class or mixin in another file) and
a function imported from another file of the linted tree are listed, with the function and line
they sit in, unless the project's protocol summaries followed them into that file
(amplint.analysis.project.scaler_resolution: the method found through the class's bases, the
name through the imports). Calls into libraries
(torch, the frameworks themselves) are not: their protocol is either in the vocabulary or none.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Sequence

import libcst as cst

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.scaler_remote import call_keys
from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.facts.tree import CallSite, Frame
from amplint.analysis.parsing import parse

_WORDS = SCALER_TRIGGERS + ("unscale_gradients", "clip_grad_norm_", "clip_grad_value_")
_WHY_SELF = ("`{name}` is not defined by a class of this file, and no base class or mixin the "
             "project pass resolved defines it")
_WHY_IMPORT = "defined in {module}, another file, where the project pass could not follow it"


def uncomposed(files: Sequence[str], read, display=lambda p: p, composed=frozenset()
               ) -> List[Dict[str, str]]:
    """One entry per call not composed, for the .py files among `files` (`read(path)` -> text).
    `composed`: (path, function key, call text, ordinal) of the calls the project's protocol
    summaries followed into another file (amplint.analysis.project.scaler_resolution)."""
    local = _local_modules(files)
    found: List[Dict[str, str]] = []
    for path in files:
        if not path.endswith(".py"):
            continue
        try:
            text = read(path)
        except (OSError, UnicodeDecodeError):
            continue
        if not any(word in text for word in _WORDS):
            continue
        try:
            facts = FileFacts(parse(text))
        except cst.ParserSyntaxError:
            continue  # the lint run reports it
        done = {key[1:] for key in composed if key[0] == path}
        found.extend(_file_gaps(facts, display(path), local, done))
    return found


def _local_modules(files: Iterable[str]) -> set:
    """Dotted tails of the linted files (`pkg/utils.py` -> "utils", "pkg.utils")."""
    names = set()
    for path in files:
        if not path.endswith(".py"):
            continue
        parts = os.path.normpath(path)[:-3].split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            names.add(".".join(p for p in parts[start:] if p))
    return names


def _file_gaps(facts: FileFacts, shown: str, local: set, done=frozenset()) -> List[Dict[str, str]]:
    scalers = facts.scalers
    flows = scalers.composed if scalers.infos else scalers.framework_flows
    module = facts.module
    gaps: List[Dict[str, str]] = []
    keys = call_keys(facts.tree) if done else {}
    for flow in flows:
        if flow.frame.kind != "function" or not any(e.scaler is not None for e in flow.events):
            continue
        for site in facts.tree.calls:
            if site.frame.function is not flow.frame:
                continue
            why = _why(facts, site, local)
            if why is None or keys.get(id(site.node)) in done:
                continue
            line = module.code_for_node(site.node.func).strip()
            gaps.append({
                "call": f"{line}() at {shown}:{_line(facts, site)}",
                "in": _qualname(flow.frame),
                "why": why,
            })
    return gaps


def _why(facts: FileFacts, site: CallSite, local: set) -> Optional[str]:
    graph = facts.callgraph
    if graph is not None and graph.callees(site):
        return None  # composed (or a function without protocol events)
    func = site.node.func
    if (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
        and func.value.value == "self" and site.frame.class_frame is not None
    ):
        name = func.attr.value
        if _defined_in_file(facts, name):
            return None
        cls = site.frame.class_frame
        node = cls.node  # type: ignore[attr-defined]
        if not getattr(node, "bases", None):
            return None  # no base class: an attribute set elsewhere (a callable), not a method
        return _WHY_SELF.format(name=name)
    if isinstance(func, cst.Name):
        target = _import_of(site.frame, func.value) or _relative_imports(facts).get(func.value)
        if target is None:
            return None
        module = target.rsplit(".", 1)[0].lstrip(".")
        if module in local:
            return _WHY_IMPORT.format(module=module)
    return None


def _relative_imports(facts: FileFacts) -> Dict[str, str]:
    """`from .utils import clip` -> {"clip": ".utils.clip"} (the tree records absolute ones)."""
    cache = facts.__dict__.setdefault("_scaler_report_relative", {})
    if cache:
        return cache
    for stmt in facts.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or not small.relative:
                continue
            if isinstance(small.names, cst.ImportStar) or small.module is None:
                continue
            base = facts.module.code_for_node(small.module)
            for alias in small.names:
                bound = alias.asname.name.value if alias.asname else alias.name.value
                cache[bound] = "." + base + "." + facts.module.code_for_node(alias.name)
    cache.setdefault("__scanned__", "")
    return cache


def _defined_in_file(facts: FileFacts, name: str) -> bool:
    for frame in facts.tree.frames:
        if frame.kind == "function" and frame.name == name and frame.class_frame is not None:
            return True
        if frame.kind == "class" and name in getattr(frame, "functions", {}):
            return True
    return False


def _import_of(frame: Frame, name: str) -> Optional[str]:
    scope: Optional[Frame] = frame
    while scope is not None:
        target = scope.imports.get(name)
        if target is not None:
            return target
        scope = scope.parent
    return None


def _line(facts: FileFacts, site: CallSite) -> int:
    from libcst.metadata import MetadataWrapper, PositionProvider

    cache = facts.__dict__.setdefault("_scaler_report_lines", {})
    if "wrapper" not in cache:
        wrapper = MetadataWrapper(facts.module, unsafe_skip_copy=True)
        cache["wrapper"] = wrapper.resolve(PositionProvider)
    position = cache["wrapper"].get(site.node)
    return position.start.line if position is not None else 0


def _qualname(frame: Frame) -> str:
    names = []
    current: Optional[Frame] = frame
    while current is not None and current.kind != "module":
        if current.kind in ("function", "class") and current.name:
            names.append(current.name)
        current = current.parent
    return ".".join(reversed(names))
