"""Where a reference leads in the project: module names to files (absolute, relative,
re-exports through `__init__.py`), a class's methods through its bases, the non-project classes
it derives from, and the functions a call reaches.

ProjectResolver is mixed into ProjectFacts, which supplies `python` (the Python files),
`display(path)`, `_norm` (normalised path -> path), `_index` (set from `_module_index()`),
`summary(path)`, `summaries`, `summaries_looped` and `reexport_read`."""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

from amplint.analysis.project.reexports import reexport
from amplint.analysis.project.summary import ExternalCall

# `from .module import *` at the start of a line; `__all__ = [...]` and the names it lists
STAR_IMPORT = re.compile(r"^from\s+([.\w]+)\s+import\s+\*", re.M)
ALL_NAMES = re.compile(r"^__all__\s*=\s*[\[(]([^\])]*)[\])]", re.M)
QUOTED_NAME = re.compile(r"['\"](\w+)['\"]")


class ProjectResolver:
    # -- module names ---------------------------------------------------------------------
    def package_prefix(self) -> List[str]:
        """The packages the folder holding the whole project lies in: `amplint basicsr/` on a
        package whose files import each other as `basicsr.losses` (Python's own rule: a folder
        with an `__init__.py` is a package of its parent)."""
        prefix = self.__dict__.get("_package_prefix")
        if prefix is None:
            given = {os.path.normcase(os.path.abspath(p)) for p in self.python}
            prefix, folder = [], self.root
            while True:
                init = os.path.join(folder, "__init__.py")
                parent = os.path.dirname(folder)
                if parent == folder or not (os.path.normcase(init) in given or os.path.isfile(init)):
                    break
                prefix.insert(0, os.path.basename(folder))
                folder = parent
            if not all(part.isidentifier() for part in prefix):
                prefix = []
            self.__dict__["_package_prefix"] = prefix
        return prefix

    def _module_index(self) -> Dict[str, List[str]]:
        index: Dict[str, List[str]] = {}
        prefix = self.package_prefix()
        above = [] if prefix else self._namespace_folders()
        extra: Dict[str, List[str]] = {}
        for path in self.python:
            relative = self.display(path)
            parts = prefix + relative[: relative.rfind(".")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for start in range(len(parts)):
                index.setdefault(".".join(parts[start:]), []).append(path)
            if parts and parts[0] != "..":
                for start in range(len(above)):
                    extra.setdefault(".".join(above[start:] + parts), []).append(path)
        # the folder holding the whole project (the deepest one holding every file), without an
        # `__init__.py`, may be a namespace package, as the folders inside it are taken to be
        # (`amplint .` on a checkout whose `parlai/` has none): `parlai.core.agent` names
        # <...>/parlai/core/agent.py exactly. Only names absent from the index above are added
        for name, paths in extra.items():
            index.setdefault(name, paths)
        return index

    def _namespace_folders(self) -> List[str]:
        """The names of the folders (innermost last, at most 3) that hold the project's folder,
        when none of them has an `__init__.py` (else `package_prefix` spoke) and each is a name."""
        folders: List[str] = []
        folder = self.root
        while len(folders) < 3:
            name = os.path.basename(folder)
            if not name.isidentifier() or os.path.isfile(os.path.join(folder, "__init__.py")):
                break
            folders.insert(0, name)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return folders

    def _closest(self, candidates: List[str], importer: str) -> str:
        if len(candidates) == 1:
            return candidates[0]  # the module's one file (most are): no path to compare
        here = os.path.dirname(os.path.abspath(importer))

        def score(path: str):
            there = os.path.abspath(path)
            common = os.path.commonpath([here, there])
            return (-len(common), path)

        return min(candidates, key=score)

    def _module_candidates(self, importer: str, ref: str) -> Iterable[Tuple[str, Tuple[str, ...]]]:
        if ref.startswith("."):
            level = len(ref) - len(ref.lstrip("."))
            parts = [p for p in ref[level:].split(".") if p]
            base = os.path.dirname(os.path.normpath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            for cut in range(len(parts), -1, -1):
                stem = os.path.join(base, *parts[:cut]) if cut else base
                # `from . import x` names the package's own __init__ when cut is 0
                names = (stem + ".py", os.path.join(stem, "__init__.py")) if cut else (
                    os.path.join(stem, "__init__.py"),
                )
                for candidate in names:
                    original = self._norm.get(os.path.normpath(candidate))
                    if original is not None:
                        yield original, tuple(parts[cut:])
            return
        parts = ref.split(".")
        for cut in range(len(parts), 0, -1):
            paths = self._index.get(".".join(parts[:cut]))
            if paths:
                yield self._closest(paths, importer), tuple(parts[cut:])

    def resolve_ref(self, importer: str, ref: str, depth: int = 0) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(file, names inside it) for a reference as `importer` writes it; re-exports followed."""
        if depth:
            return self._resolve_ref(importer, ref, depth)
        memo = self.__dict__.setdefault("_resolved", {})
        key = (importer, ref)
        if key not in memo:  # the files' summaries never change: neither does the answer
            memo[key] = self._resolve_ref(importer, ref, 0)
        return memo[key]

    def _resolve_ref(self, importer: str, ref: str, depth: int) -> Optional[Tuple[str, Tuple[str, ...]]]:
        if ref.startswith("?") or depth > 6:
            return None
        if ref.startswith("@"):
            return importer, (ref[1:],)
        for path, attrs in self._module_candidates(importer, ref):
            if not attrs:
                if self._package_rebinds(path):
                    continue  # `from pkg import name`: the package's own `name`, below
                return path, ()
            light = self._reexport(path, attrs[0])
            if light is not None:
                if light[0] == "import":
                    return self.resolve_ref(path, ".".join((light[1],) + attrs[1:]), depth + 1)
                continue
            summary = self.summary(path)
            if summary is None:
                continue
            head = attrs[0]
            if head in summary.classes or head in summary.functions or (
                summary.flow is not None and head in summary.flow.globals
                and head not in summary.imports
            ):
                return path, attrs
            if head in summary.imports:
                target = summary.imports[head]
                return self.resolve_ref(path, ".".join((target,) + attrs[1:]), depth + 1)
        return None

    def _package_rebinds(self, module: str) -> bool:
        """Does the `__init__.py` of the package holding the module `pkg/name.py` import a
        `name` of its own (xformers' ops/__init__.py `from .fused_linear_gelu import
        fused_linear_gelu`)? Then `pkg.name` is that binding, not the submodule: the import
        binds the package's attribute after the submodule's import set it. Read from the
        `__init__`'s imports alone (reexports.py); a file it cannot read that way: no."""
        if module.endswith("__init__.py") or not module.endswith(".py"):
            return False
        name = os.path.basename(module)[:-3]
        init = self._norm.get(os.path.normpath(os.path.join(os.path.dirname(module), "__init__.py")))
        text = self.files.get(init) if init is not None else None
        if not text or name not in text:
            return False
        found = reexport(init, text, name)
        return found is not None and found[0] == "import" and found[1].rsplit(".", 1)[-1] == name \
            and found[1].lstrip(".") != name

    def _reexport(self, path: str, name: str) -> Optional[Tuple[str, str]]:
        """What the summary of a package's unsummarised `__init__.py` would say of `name`, from
        its imports alone (reexports.py), once no loop over every summary made is ahead (a
        summary made here would be read by it); None: ask the summary."""
        if not self.summaries_looped or path in self.summaries or not path.endswith("__init__.py"):
            return None
        found = reexport(path, self.files[path], name)
        if found is not None:
            self.reexport_read.add(path)
        return found

    def method(self, path: str, cls: str, name: str, depth: int = 0, seen=None) -> Optional[Tuple[str, str]]:
        if depth or seen is not None:
            return self._method(path, cls, name, depth, seen)
        memo = self.__dict__.setdefault("_methods", {})
        key = (path, cls, name)
        if key not in memo:
            memo[key] = self._method(path, cls, name, 0, None)
        return memo[key]

    def _method(self, path: str, cls: str, name: str, depth: int, seen) -> Optional[Tuple[str, str]]:
        summary = self.summary(path)
        if summary is None or depth > 8:
            return None
        info = summary.classes.get(cls)
        if info is None:
            return None
        if seen is not None:
            seen.add(path)
        if name in info.methods:
            return path, f"{cls}.{name}"
        for base in info.bases:
            found = self.base_ref(path, base)
            if found is not None and len(found[1]) == 1:
                hit = self.method(found[0], found[1][0], name, depth + 1, seen)
                if hit is not None:
                    return hit
        return None

    def external_bases(self, path: str, cls: str, seen: Set[str], depth: int = 0) -> Set[str]:
        """References of the non-project classes `cls` derives from (transitively); `seen`
        collects the files consulted."""
        summary = self.summary(path)
        if summary is None or depth > 8 or cls not in summary.classes:
            return set()
        seen.add(path)
        info = summary.classes[cls]
        found = {self.absolute_ref(path, ref) for ref in info.decorators}
        for base in info.bases:
            target = self.base_ref(path, base)
            if target is not None and len(target[1]) == 1:
                found |= self.external_bases(target[0], target[1][0], seen, depth + 1)
            elif not base.startswith(("@", "?")):
                found.add(base)
        return found

    def base_ref(self, path: str, base: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """Where a base class of a class of `path` is defined: as `resolve_ref`, and a plain name
        the file binds only through `from .module import *` of a project module that defines
        that class (threestudio's `from .dreamfusion import *` then `class
        EffDreamFusion(DreamFusion)`; the last star import that gives the name wins, as in
        Python; an `__all__` that leaves it out gives nothing)."""
        if not base.startswith("?") or "." in base:
            return self.resolve_ref(path, base)
        memo = self.__dict__.setdefault("_star_bases", {})
        key = (path, base)
        if key not in memo:
            memo[key] = self._star_base(path, base[1:])
        return memo[key]

    def _star_base(self, path: str, name: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        text = self.files[path]
        if "*" not in text:
            return None
        for source in reversed(STAR_IMPORT.findall(text)):
            module = self.resolve_ref(path, source)
            if module is None or module[1] or module[0] == path:
                continue
            declared = ALL_NAMES.search(self.files[module[0]])
            if declared is not None and name not in QUOTED_NAME.findall(declared.group(1)):
                continue
            summary = self.summary(module[0])
            if summary is not None and name in summary.classes:
                return module[0], (name,)
            if summary is not None and name in summary.imports:
                return self.resolve_ref(module[0], summary.imports[name])
        return None

    def absolute_ref(self, path: str, ref: str) -> str:
        """`.build.META_ARCH_REGISTRY.register` in detectron2/modeling/meta_arch/rcnn.py ->
        `detectron2.modeling.meta_arch.build.META_ARCH_REGISTRY.register`: a relative
        reference as the module's dotted name under the project's folder spells it (a framework's
        own source registers its classes through relative imports)."""
        if not ref.startswith("."):
            return ref
        rest = ref.lstrip(".")
        level = len(ref) - len(rest)
        package = self.display(path).split("/")[:-1]
        if level - 1 > len(package) or ".." in package:
            return ref
        head = package[: len(package) - (level - 1)]
        return ".".join(head + ([rest] if rest else [])) if head else ref

    def instance_class(self, path: str, call: ExternalCall) -> Optional[Tuple[str, str]]:
        """(file, class) of the instance an "instance" or "method" call runs on."""
        if call.kind not in ("instance", "method"):
            return None
        found = self.resolve_ref(path, call.ref)
        return (found[0], found[1][0]) if found is not None and len(found[1]) == 1 else None

    def targets(self, path: str, call: ExternalCall) -> List[Tuple[str, str]]:
        found = self.resolve_ref(path, call.ref)
        if found is None:
            return []
        where, attrs = found
        summary = self.summary(where)
        if summary is None or not attrs:
            return []
        if call.kind == "call":
            if len(attrs) == 1 and attrs[0] in summary.functions and "." not in attrs[0]:
                return [(where, attrs[0])]
            if len(attrs) == 2 and attrs[0] in summary.classes:
                hit = self.method(where, attrs[0], attrs[1])
                return [hit] if hit else []
            return []
        if len(attrs) != 1 or attrs[0] not in summary.classes:
            return []
        names = ("forward", "__call__") if call.kind == "instance" else (call.attr,)
        for name in names:
            hit = self.method(where, attrs[0], name)
            if hit is not None:
                return [hit]
        return []
