"""The class flow's registrations, one registry at a time (issue 34): `HEADS.build(cfg)` holds
the classes registered in `HEADS` (classvalues.py), and only the files that may register into
it (registry_files.py) are read for it; mmdetection's other registries (pipelines, datasets,
losses, assigners, hooks) are not, unless something builds them.

Order-independent: a registration's registry is resolved as a question of its own (its own
step budget, nothing else being evaluated), so what a build makes, and whether a class is
registered (config narrowing, flowindex.narrow_by_config), is the same whichever question
asks first. The files of the registry search are counted against the class flow's parse
budget once, all of them, when the first build asks (as when every registration was read
then); those a build does not need stay owed (flowindex.summarise_owed)."""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Tuple

from amplint.analysis.project.registry_files import RegistryFiles


class Registries:
    def __init__(self, flow) -> None:
        self.f = flow  # the class flow (classvalues.ClassValues)
        self._files: Optional[List[str]] = None  # the registry search's files, counted
        self._text_files: Optional[FrozenSet[str]] = None
        self._made: Dict[tuple, List[Tuple[str, str]]] = {}
        self._light: Dict[str, Optional[list]] = {}  # registrations read without a summary
        self._keys: Dict[tuple, tuple] = {}
        self._registered: Dict[str, FrozenSet[str]] = {}
        self._words: Optional[RegistryFiles] = None
        self.read = 0  # files whose registrations were read without a summary

    @property
    def words(self) -> RegistryFiles:
        if self._words is None:
            self._words = RegistryFiles(self.f.p.python, self.f.p.files)
        return self._words

    def made_by(self, key: tuple) -> List[Tuple[str, str]]:
        """(file, class) of the classes registered in the registry `key` (a "reg" value), in
        the order of the registry search's files and of their registrations."""
        found = self._made.get(key)
        if found is None:
            # asked again while it is read (a registry made by a build): nothing yet, no cycle
            self._made[key] = []
            wanted = self.words.for_registry(key, self._search())
            owed = [path for path in dict.fromkeys(wanted) if self.f.owes(path) and path not in self._light]
            if owed:  # read without summarising them: only the files of built classes are read further
                self._light.update(self.f.p.registrations_of(owed))
                self.read += len(owed)
            found = []
            for path in wanted:
                for registry, cls in self._of(path, optional=True):
                    if key in self.keys(path, registry) and (path, cls) not in found:
                        found.append((path, cls))
            self._made[key] = found
        return found

    def is_registered(self, path: str, cls: str) -> bool:
        """Does `path` register its class `cls` in a registry (any)? Read from that file alone."""
        classes = self._registered.get(path)
        if classes is None:
            if self._text_files is None:
                self._text_files = frozenset(self._text_search())
            self._registered[path] = frozenset()  # while it is read (no cycle)
            classes = frozenset(
                name for registry, name in (self._of(path) if path in self._text_files else ())
                if self.keys(path, registry)
            )
            self._registered[path] = classes
        return cls in classes

    def keys(self, path: str, value) -> tuple:
        """The registries a registration's registry value (written in `path`) holds: asked as a
        question of its own, whatever question is being evaluated."""
        memo = (path, value)
        found = self._keys.get(memo)
        if found is None:
            self._keys[memo] = ()  # while it is evaluated: its own evaluation sees no registry
            flow = self.f
            saved = flow._steps, flow._active, flow._cuts, flow._context.frames
            flow._active, flow._context.frames = set(), []
            try:
                held = flow.values(path, "", value)
            finally:
                flow._steps, flow._active, flow._cuts, flow._context.frames = saved
            found = self._keys[memo] = tuple(dict.fromkeys(
                thing if thing[0] == "reg" else ("reg", thing[1])
                for thing in held if thing[0] in ("reg", "ext")
            ))
        return found

    def _of(self, path: str, optional: bool = False) -> list:
        light = self._light.get(path)
        if light is not None and path not in self.f.p.summaries:
            return light
        flow = self.f._flow(path, optional=optional)
        return flow.registrations if flow is not None else []

    def _text_search(self) -> List[str]:
        return self.f._files_with("register_module") + self.f._files_with("register")

    def _search(self) -> List[str]:
        """The registry search's files: counted against the parse budget once, all of them;
        the planned framework files among them summarised (as when every one was read)."""
        if self._files is None:
            files = self._text_search()
            self.f._prefetch(files, count_only=True)
            free = [path for path in files if path not in self.f.p.summaries and self.f.p.is_deferred(path)]
            if free:
                self.f.p.summarise(free)
            self._files = files
        return self._files
