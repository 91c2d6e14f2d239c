"""Regions opened through an attribute a base class of another file stores: `with self.autocast:`
in a subclass's method, where `self.autocast = torch.autocast("cuda", dtype=torch.bfloat16)` is
stored by the base class's `__init__` (audiocraft's `StandardSolver` / `MusicGenSolver` shape).
The file that opens it stores nothing under that name, so its own alias table (facts/regions.py)
sees no region; the project pass can.

Exact or nothing:
- only a `with self.<attr>:` (the value itself, not a call) in a method of a module-level class C
  of a first-pass file, where C's own body stores no `self.<attr>`;
- C's bases are followed through the project (a base outside it other than `object` /
  `nn.Module` may store the attribute: no answer); with the project subclasses of C, exactly one
  class D stores `self.<attr>`, in another file, and no other file of the project writes
  `.<attr> =` at all (text test: a store from outside the hierarchy, `solver.autocast = ...`);
- what D's stores hold is read by D's file's own region facts, as `with self.<attr>:` written in
  D's method would be (the same aliases, enabled / maybe / disabled, device and dtype).
The calling file gets an EntryAttrRegion (its rules see the region at that `with`) and the calls
under it seed the propagation, as a region of the file itself would."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.property_dtypes import PLAIN_BASES
from amplint.analysis.facts.region_entries import EntryAttrRegion
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.context_params import frame_of, seeds_under, statements
from amplint.analysis.project.summary import CALLER_WORDS

_WITH_SELF = re.compile(r"with\s+self\.(\w+)\s*:")
_MAX_DEPTH = 8

# (class, method key, attribute, line of the with, (first, last) line of its body)
AttrWith = Tuple[str, str, str, int, Tuple[int, int]]


def attr_region_seeds(project) -> list:
    """Seeds (file, function, Candidate, deciding files) for the calls under such `with`s."""
    seeds: list = []
    parsed: Dict[str, Optional[ast.Module]] = {}
    stores: Dict[str, Optional[str]] = {}
    for path in project.first_pass:
        summary = project.summaries.get(path)
        text = project.files.get(path) if summary is not None and summary.flow is not None else None
        if not text or "with self." not in text or not _WITH_SELF.search(text):
            continue
        # stored in one other file, or nowhere (a property of a base class: _stored_by finds its
        # one definition in the hierarchy)
        wanted = {attr for attr in _WITH_SELF.findall(text) if _store_file(project, attr, stores) not in (None, path)}
        if not wanted:
            continue  # no attribute read here is stored, only by `self.`, in one other file with a region word
        own = {info.origin.line for info in list(summary.regions) + list(summary.region_infos)}
        for cls, key, attr, line, span in _attr_withs(_parse(project, path, parsed)):
            if attr in wanted and line not in own and cls in summary.classes:
                seeds.extend(_seed_with(project, path, cls, key, attr, line, span, parsed, stores[attr]))
    seeds.extend(_property_seeds(project, parsed, stores))
    return seeds


def _seed_with(project, path: str, cls: str, key: str, attr: str, line: int, span, parsed, where) -> list:
    found = _stored_by(project, path, cls, attr, parsed, where)
    if found is None:
        return []
    where, (method, stored), deciding = found
    region = _region(project, where, method, attr)
    if region is None:
        return []
    info = (region.enabled, region.device, region.dtype)
    how = "the property" if _is_property(_parse(project, where, parsed), method) else "stored by"
    desc = f"`self.{attr}` at {project.display(path)}:{line}, {how} `{method}` at " \
           f"{project.display(where)}:{stored}"
    project.__dict__.setdefault("attr_regions", {}).setdefault(path, set()).add(
        EntryAttrRegion(key, attr, *info, desc))
    project.__dict__.setdefault("attr_deps", {}).setdefault(path, set()).update(deciding)
    if region.enabled == Enabled.FALSE:
        return []
    return seeds_under(project, path, key, span, info, desc, deciding | {path})


def _property_seeds(project, parsed, stores) -> list:
    """`with self.<prop>:` in the project subclasses (files without a region word, outside the
    first pass: speechbrain's recipes/*/train.py `ASR(Brain)`) of a first-pass class whose
    `@property <prop>` returns a region word's call (`Brain.training_ctx`)."""
    seeds: list = []
    for path in project.first_pass:
        text = project.files.get(path) or ""
        if "@property" not in text or not _property_returns(text):
            continue  # text test before `ast`
        for cls, prop in _region_properties(text, _parse(project, path, parsed)):
            for sub_path, sub_cls in project.dispatch.subclasses(path, cls):
                sub_text = project.files.get(sub_path) or ""
                if sub_path == path or sub_path in project.first_pass or f"self.{prop}" not in sub_text:
                    continue  # a first-pass file: attr_region_seeds read its withs
                summary = project.summary(sub_path)
                if summary is None or summary.flow is None:
                    continue
                if prop not in stores:
                    _store_file(project, prop, stores)
                if stores[prop] != "":
                    continue  # some file stores it
                for with_cls, key, attr, line, span in _attr_withs(_parse(project, sub_path, parsed)):
                    if with_cls == sub_cls and attr == prop:
                        seeds.extend(_seed_with(project, sub_path, sub_cls, key, attr, line, span, parsed, ""))
    return seeds


def _property_returns(text: str) -> bool:
    """Is some `return` naming a region word's call (context_prefilters._RETURNS) in a def right
    after a `@property` line?"""
    from amplint.analysis.project.context_prefilters import _RETURNS

    for match in _RETURNS.finditer(text):
        head = text[:match.start()]
        found = head.rfind("def ")
        start = head.rfind("\n", 0, found)
        before = head[:start].rstrip().rsplit("\n", 1)[-1].strip() if start > 0 else ""
        if found >= 0 and before == "@property":
            return True
    return False


def _region_properties(text: str, module: Optional[ast.Module]) -> List[Tuple[str, str]]:
    """(class, property) of the module-level classes' `@property` methods that return a call
    of a region word (context_prefilters.returns_a_context)."""
    from amplint.analysis.project.context_prefilters import returns_a_context

    lines = text.splitlines()
    return [(node.name, method.name) for node in (module.body if module is not None else ())
            if isinstance(node, ast.ClassDef) for method in node.body
            if isinstance(method, ast.FunctionDef) and _decorated_property(method)
            and returns_a_context(method, lines)]


def _decorated_property(method) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in method.decorator_list)


def _is_property(module: Optional[ast.Module], key: str) -> bool:
    cls, _, name = key.partition(".")
    return any(isinstance(node, ast.ClassDef) and node.name == cls and any(
        isinstance(m, ast.FunctionDef) and m.name == name and _decorated_property(m) for m in node.body)
        for node in (module.body if module is not None else ()))


def _parse(project, path: str, parsed) -> Optional[ast.Module]:
    if path not in parsed:
        try:
            parsed[path] = ast.parse(project.files[path])
        except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError):
            parsed[path] = None
    return parsed[path]


def _attr_withs(module: Optional[ast.Module]) -> List[AttrWith]:
    """`with self.<attr>:` in the methods of the module's classes (not in nested defs)."""
    found: List[AttrWith] = []
    for node in (module.body if module is not None else ()):
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _withs_in(method, node.name, f"{node.name}.{method.name}", found)
    return found


def _withs_in(node, cls: str, key: str, found: List[AttrWith]) -> None:
    for child in statements(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(child, (ast.With, ast.AsyncWith)):
            for item in child.items:
                expr = item.context_expr
                if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
                    span = (child.body[0].lineno, child.end_lineno or child.lineno)
                    found.append((cls, key, expr.attr, child.lineno, span))
        _withs_in(child, cls, key, found)


def _stored_by(project, path: str, cls: str, attr: str, parsed, where: str):
    """(file, (method key, line of the store), deciding files) of the one class of C's hierarchy (its project
    bases, C, its project subclasses) whose methods store `self.<attr>`, in `where` (the one file
    that writes `.<attr> =`, _store_file); None when C stores it, none or several do, or a base
    is not known."""
    deciding: Set[str] = {path}
    chain: List[Tuple[str, str]] = []
    if not _bases(project, path, cls, deciding, chain, 0):
        return None
    chain.extend(project.dispatch.subclasses(path, cls))
    storing = []
    for held, name in chain:
        deciding.add(held)
        method = _store_method(_parse(project, held, parsed), name, attr)
        if method == "?":  # the class is not read exactly
            return None
        if method is not None:
            storing.append((held, name, method))
    if len(storing) != 1 or storing[0][0] != (where or storing[0][0]) or storing[0][0] == path:
        return None  # `where` "": no file stores it, a property of another file defines it
    where = storing[0][0]
    return where, storing[0][2], frozenset(deciding)


def _store_file(project, attr: str, stores: Dict[str, Optional[str]]) -> Optional[str]:
    """The one file of the project that writes `.<attr> =`, when it does so only as `self.<attr>`
    and its text has a region word (CALLER_WORDS); None otherwise. A text test over the
    project's files, once per attribute, before anything is parsed or summarised."""
    if attr not in stores:
        written = re.compile(r"(\w*)\s*\.\s*" + re.escape(attr) + r"\s*(?:=[^=]|:[^\n=]*=[^=])")
        found: Optional[str] = ""  # no file writes it
        for other in project.python:
            text = project.files.get(other) or ""
            if attr not in text:
                continue
            matches = [m.group(1) for m in written.finditer(text)]
            if not matches:
                continue
            if found or any(word != "self" for word in matches) \
                    or not any(word in text for word in CALLER_WORDS):
                found = None
                break
            found = other
        stores[attr] = found
    return stores[attr]


def _bases(project, path: str, cls: str, deciding: Set[str], chain: List[Tuple[str, str]], depth: int) -> bool:
    """Adds (file, class) of `cls` and its project bases to `chain`; False when one is unknown."""
    if depth > _MAX_DEPTH:
        return False
    summary = project.summary(path)
    info = summary.classes.get(cls) if summary is not None else None
    if info is None:
        return False
    deciding.add(path)
    if (path, cls) in chain:
        return True
    chain.append((path, cls))
    for base in info.bases:
        if base in PLAIN_BASES:
            continue
        target = project.resolve_ref(path, base)
        if target is None or len(target[1]) != 1:
            return False
        if not _bases(project, target[0], target[1][0], deciding, chain, depth + 1):
            return False
    return True


def _store_method(module: Optional[ast.Module], cls: str, attr: str):
    """(key, line) of the first method of module-level class `cls` that stores `self.<attr>`
    (assignment, annotated or augmented), or that is the property `<attr>`; "?" when the class
    body is not found exactly once, or defines `<attr>` otherwise (a method, a class attribute)."""
    classes = [n for n in (module.body if module is not None else ()) if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1:
        return "?"
    for method in classes[0].body:
        if isinstance(method, ast.FunctionDef) and method.name == attr:
            if _decorated_property(method):
                return f"{cls}.{method.name}", method.lineno
            return "?"
        if any(isinstance(t, ast.Name) and t.id == attr for t in getattr(method, "targets", ())):
            return "?"  # a class attribute
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and leaf.attr == attr and isinstance(leaf.value, ast.Name) \
                            and leaf.value.id == "self":
                        return f"{cls}.{method.name}", node.lineno
    return None


def _region(project, where: str, method: str, attr: str):
    """The region `with self.<attr>:` written in `method` of `where` would open, by that file's facts."""
    from amplint.analysis.project.function_entries import parsed_facts

    parsed = parsed_facts(project, where)
    if parsed is None:
        return None
    _module, facts = parsed
    frame = frame_of(facts, method)
    if frame is None:
        return None
    expr = cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr))
    return facts.regions._region_of_expr(expr, frame, call_it=False)
