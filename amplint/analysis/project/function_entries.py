"""Custom autograd Functions that another file of the project defines (AMP151 across files).

A file whose code may run under autocast (it opens a region, or the project pass put one
around one of its functions) and that imports a name from another file of the project, then
writes `Name.apply(...)` or calls `Name(...)`: when that name leads (through re-exports) to a
dtype-sensitive, undecorated `torch.autograd.Function` subclass, or to a module-level
`fn = Cls.apply` of one (amplint.analysis.facts.custom_functions), the file gets an
`EntryFunction` under the name it imports. The rule decides at each call whether it runs
under an active region; this pass only says what the name is.

Cost: text tests first (the importing file must hold `.apply` or a call of an imported name,
the defining file `Function` and `forward`); only the defining files that pass are parsed,
once each, here (there are few: Function classes live in a handful of ops modules).
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from amplint.analysis.facts.custom_functions import (
    EntryFunction, FunctionClass, apply_aliases, function_classes,
)
from amplint.analysis.facts.kernel_sources import half_kernels_near, read_text
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.project.text_views import called_names

_DEFINES = re.compile(r"\bFunction\b")
_APPLY = re.compile(r"\.apply\b")
_APPLIED = re.compile(r"\b([A-Za-z_]\w*)\.apply\b")
_RELATIVE_IMPORT = re.compile(r"^from\s+\.(\w+)\s+import\s+([^\n]*)$", re.M)

# file -> (classes, module-level aliases, class lines) or None
_Defined = Optional[Tuple[Dict[str, FunctionClass], Dict[str, str], Dict[str, int]]]


def function_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryFunction, ...]]:
    """path -> EntryFunctions for the other files' Functions it imports and may apply."""
    defined: Dict[str, _Defined] = {}
    found: Dict[str, Tuple[EntryFunction, ...]] = {}
    for path in paths:
        if not path.endswith((".py", ".pyi")) or not may_run_under_autocast(project, path):
            continue
        summary = project.summaries.get(path)
        text = project.files.get(path) if summary is not None else None
        if not text or not summary.imports:
            continue
        entries: List[EntryFunction] = []
        called, applied = called_names(project, path), set(_APPLIED.findall(text))
        for name, ref in sorted(summary.imports.items()):
            as_class = name in applied
            if not as_class and name not in called:
                continue
            # no file it may name defines a Function: nothing to summarise. An exported
            # `fn = Cls.apply` is looked for in the module the import names only (names called
            # through a package's re-exports are many: timm 122 resolutions for none)
            if not leads_to(project, path, ref, lambda p: _defines_function(project, p, as_class), as_class):
                continue
            target = project.resolve_ref(path, ref)
            if target is None or len(target[1]) != 1 or target[0] == path:
                continue
            where, (attr,) = target
            if where not in defined:
                defined[where] = _defined_in(project, where)
            facts = defined[where]
            if facts is None:
                continue
            classes, aliases, lines = facts
            cls = attr if as_class else aliases.get(attr)
            if cls is None or cls not in classes:
                continue
            info = classes[cls]
            entries.append(EntryFunction(
                name, not as_class, cls, f"{project.display(where)}:{lines.get(cls, 0)}",
                info.has_fwd, info.has_bwd, info.reason, info.extension_only,
            ))
        if entries:
            found[path] = tuple(entries)
    return found


def _defines_function(project, path: str, applied_here: bool = False) -> bool:
    """The file may define a Function the importer uses: one it applies itself (`Cls.apply` in
    the importer's text: InternImage's dcnv3_func.py holds no `.apply`), or one the file exports
    as `fn = Cls.apply`."""
    text = project.files.get(path) or ""
    return "staticmethod" in text and _DEFINES.search(text) is not None and (
        applied_here or _APPLY.search(text) is not None)


def leads_to(project, importer: str, ref: str, wanted, through_init: bool = True) -> bool:
    """Whether `ref` may name something in a file that passes `wanted(path)`, possibly through a
    package `__init__.py` whose text names it: a cheap test before `resolve_ref`, which
    summarises every file on the way. A reference to a module itself leads to no class."""
    for path, attrs in project._module_candidates(importer, ref):
        if not attrs:
            if project._package_rebinds(path):
                continue  # the package's own `name` (resolve.py)
            return False
        if wanted(path):
            return True
        if path.endswith("__init__.py") and attrs[0] in (project.files.get(path) or ""):
            if through_init:
                return True
            sibling = _reexported_from(project, path, attrs[0])  # one level: `from .x import name`
            return sibling is not None and wanted(sibling)
    return False


def _reexported_from(project, init: str, name: str):
    """The sibling module a package's `__init__.py` imports `name` from (`from .ops import
    name`), or None. Kept for the pass: the entry modules ask it of the same package for
    every file importing through it (the mixed monorepo tree: 815 questions)."""
    memo = project.__dict__.setdefault("_reexported_from", {})
    key = (init, name)
    if key not in memo:
        memo[key] = None
        for module, names in _relative_imports(project, init):
            if re.search(rf"\b{re.escape(name)}\b", names):
                candidate = os.path.join(os.path.dirname(init), module + ".py")
                memo[key] = project._norm.get(os.path.normpath(candidate))
                break
    return memo[key]


def _relative_imports(project, init: str) -> List[Tuple[str, str]]:
    """(module, the text after `import`) of each `from .module import ...` line, in order."""
    memo = project.__dict__.setdefault("_relative_imports", {})
    if init not in memo:
        text = project.files.get(init) or ""
        memo[init] = [(match.group(1), match.group(2))
                      for match in _RELATIVE_IMPORT.finditer(text)] if "from" in text else []
    return memo[init]


def may_run_under_autocast(project, path: str) -> bool:
    summary = project.summaries.get(path)
    if summary is not None and summary.regions:
        return True
    return any(isinstance(e, EntryRegion) for e in project.entries_for(path))


def parsed_facts(project, path: str):
    """(module, FileFacts) of a project file, parsed once for this pass, or None."""
    memo = project.__dict__.setdefault("_entry_facts", {})
    if path not in memo:
        from amplint.analysis.facts import FileFacts
        from amplint.analysis.project import parse_or_none

        text = project.files.get(path)
        module = parse_or_none(text) if text else None
        try:
            memo[path] = (module, FileFacts(module)) if module is not None else None
        except (RecursionError, MemoryError):
            memo[path] = None
    return memo[path]


def escape_facts(project, path: str):
    """(module, FileFacts, its escape walk) of a project file, or None (not parsed, or the
    walk's limits: nothing is named)."""
    return with_escape_walk(parsed_facts(project, path))


def with_escape_walk(parsed):
    """(module, FileFacts) -> (module, FileFacts, its escape walk), or None (not parsed, or the
    walk's limits: nothing is named)."""
    if parsed is None:
        return None
    module, facts = parsed
    try:
        return module, facts, facts.escape
    except (RecursionError, MemoryError):
        return None


def may_escape_in(project, path: str) -> bool:
    """False when the file's escape walk can give no escaped value (facts/escape.may_escape):
    a reader that wants only escaped values need not walk it."""
    parsed = parsed_facts(project, path)
    if parsed is None:
        return False
    from amplint.analysis.facts.escape import may_escape

    return may_escape(parsed[1])


def _defined_in(project, path: str) -> _Defined:
    text = project.files.get(path)
    if not text or "forward" not in text or not _DEFINES.search(text):
        return None
    parsed = parsed_facts(project, path)
    if parsed is None:
        return None
    return _defined_in_module(*parsed, python_module=lambda name: name in project._index,
                              half_kernel=half_kernels_near(path, _reader(project)))


def _reader(project):
    """A file's text: the project's own copy first (the files it was given), else the disk."""
    def read(path: str):
        known = project._norm.get(os.path.normpath(path))
        text = project.files.get(known) if known is not None else None
        return text if text is not None else read_text(path)
    return read


def defined_functions(text: str):
    """What the project pass reads of a file as the module that defines Functions: per
    dtype-sensitive, undecorated Function class, its line and what its `EntryFunction` carries,
    and the module-level `fn = Cls.apply` aliases. For the language server, whose pass runs
    again when an edit changes this (a `custom_fwd` added or removed). () when the file defines
    none; None when it does not parse (being typed)."""
    if not text or "forward" not in text or not _DEFINES.search(text):
        return ()
    from amplint.analysis.facts import FileFacts
    from amplint.analysis.project import parse_or_none

    module = parse_or_none(text)
    if module is None:
        return None
    try:
        defined = _defined_in_module(module, FileFacts(module))
    except (RecursionError, MemoryError):
        return None
    if defined is None:
        return ()
    classes, aliases, lines = defined
    return (tuple(sorted((name, lines.get(name, 0), c.has_fwd, c.has_bwd, c.reason, c.extension_only)
                         for name, c in classes.items())), tuple(sorted(aliases.items())))


def _defined_in_module(module, facts, python_module=None, half_kernel=None) -> _Defined:
    from amplint.analysis.project.lines import node_lines

    try:
        classes = function_classes(facts, python_module, half_kernel)
        if not classes:
            return None
        aliases = apply_aliases(facts, classes)
        nodes = {name: c.frame.node.name for name, c in classes.items()}
        at = node_lines(module, list(nodes.values()))
    except (RecursionError, MemoryError):
        return None
    lines = {name: at.get(id(node), 0) for name, node in nodes.items()}
    return classes, aliases, lines
