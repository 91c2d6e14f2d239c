"""The files that may define the classes an active framework runs, summarised only when the
framework seeds read every summary (issue 34).

framework_seeds.py picks them by a text test (`_REGISTRY|detectron2\\.modeling`, ...) and by
the subclass expansion (`class M(Base)` where Base is one of the summarised classes), and
then reads every summary of the project only for a setting whose models are not known (no
config names them, the class flow cannot follow its instance). A setting its config scopes
(detectron2's `train.amp.enabled = True` in a LazyConfig naming the model) never reads them.
They are left unparsed: the class flow's parse budget counts them as summarised (`holds`), as
it did when they were. A loop over every summary first summarises them (`materialise`),
except those whose classes no active framework can run, which a summary would only confirm.
Whatever the pass then reads is what a summary of every planned file up front gives.

The plan itself is lazy (issue 34, round 36): its subclass waves need the class names of the
planned files, from an `ast` parse each (light_index.py), or a summary where that index cannot
vouch for them. They are worked out only when something needs the exact plan: `materialise`,
or the budget asking about a file that an outline of the plan (the same waves over the names
every `class X` line of the planned files' text writes, a superset) holds. The plan reads the
summaries made when it was asked for, not those made since, so it is the same whenever (and
whether) it is worked out."""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from amplint.analysis.project.light_index import harmless, light_file

_NOT_FOLLOWED = {"Module", "Model", "object"}
# every class statement's name (nested ones and those in strings too: a superset of the names
# a summary or the light index gives for the file)
_CLASS_NAME = re.compile(r"^[\ufeff \t\f]*class[\s\\]+(\w+)", re.M)


class SeedFiles:
    def __init__(self, project, chosen: Sequence[str]) -> None:
        self.p = project
        self._chosen = list(chosen)
        self._chosen_set = frozenset(self._chosen)
        # the summaries the plan reads: those made when it was asked for
        self._before: FrozenSet[str] = frozenset(project.summaries)
        self._files: Optional[List[str]] = None
        self._file_set: FrozenSet[str] = frozenset()
        self._outline: Optional[FrozenSet[str]] = None
        self._names: Dict[str, Tuple[str, ...]] = {}  # planned file -> its class names
        self._held: Dict[str, bool] = {}  # `holds`' answers before the plan is worked out
        self._summarised: Set[str] = set()  # the class names of the summaries it reads
        self._definers: Dict[str, List[str]] = {}  # class name -> the outline's files writing it
        self.made = 0  # how many times the exact plan was worked out (0 or 1; for tests)

    @property
    def files(self) -> List[str]:
        """The planned files, in the order they would have been summarised."""
        if self._files is None:
            self._files = []
            self.made += 1
            self._plan(self._chosen)
            self._file_set = frozenset(self._files)
        return self._files

    def holds(self, path: str) -> bool:
        """Is `path` one of the planned files? Without working the plan out: a file outside its
        outline is in no wave; one inside is planned when a class it subclasses is defined by
        a summarised file or by a planned one (found the same way, backwards), which reads
        the class names of those files only."""
        if path in self._chosen_set:
            return True
        if self._files is not None:
            return path in self._file_set
        if path in self._before or path not in self.outline():
            return False
        found = self._held.get(path)
        if found is None:
            found = self._held[path] = self._derived(path, set())
        return found

    def summarises(self, path: str) -> bool:
        """Does working the plan out summarise this file (a planned one whose class names the
        index cannot give)? Such a file was summarised when the plan was made; a reader that
        takes every summary made (half_callees.py) reads it as it did."""
        if path in self.p.summaries or not self.holds(path):
            return False
        info = light_file(path, self.p.files[path])
        return info is None or not info.exact

    def _derived(self, path: str, seen: Set[str]) -> bool:
        """Does a wave of the plan reach `path` (in the outline, not chosen, not summarised
        when the plan was asked for)? A search back through the files defining its bases."""
        seen.add(path)
        for word in sorted(self.p.dispatch.bases.words(path) - _NOT_FOLLOWED):
            if word in self._summarised:
                return True
            for other in self._definers.get(word, ()):
                if other in seen:
                    continue
                # planned first: only a planned file's names are read (a summary, for some)
                if (other in self._chosen_set or self._derived(other, seen)) \
                        and word in self._names_of(other):
                    self._held[other] = True
                    return True
        return False

    def _names_of(self, path: str) -> Tuple[str, ...]:
        if path not in self._names:
            self._add([path])
        return self._names[path]

    def outline(self) -> FrozenSet[str]:
        """The plan's waves over the names every `class X` line of a planned file writes:
        a superset of the planned files, from their text alone."""
        if self._outline is None:
            self._summarised = self._summarised_names()
            names = set(self._summarised)
            found = list(self._chosen)
            for path in found:
                names.update(_CLASS_NAME.findall(self.p.files[path]))
            self._outline = frozenset(self._waves(found, names, lambda paths: [
                name for path in paths for name in _CLASS_NAME.findall(self.p.files[path])]))
            for path in sorted(self._outline):
                for name in set(_CLASS_NAME.findall(self.p.files[path])):
                    self._definers.setdefault(name, []).append(path)
        return self._outline

    def _summarised_names(self) -> Set[str]:
        return {
            name for path in self._before for name in _classes(self.p.summaries.get(path))
        }

    def _waves(self, found: List[str], names: Set[str], named: Callable[[List[str]], Iterable[str]]) -> List[str]:
        """`found` grown by each wave of files subclassing a name known so far, until a wave
        adds no class name or no file; `named(paths)`: the names the new files define."""
        planned: Set[str] = set(found)
        known: Set[str] = set()
        while True:
            new = names - _NOT_FOLLOWED - known
            if not new:
                return found
            known |= new
            wanted = [path for path in self.p.dispatch.bases.files(new)
                      if path not in self._before and path not in planned]
            if not wanted:
                return found
            planned.update(wanted)
            found.extend(wanted)
            names.update(named(wanted))

    def _add(self, paths: List[str]) -> List[str]:
        """Learn these files' class names (a summary where the index cannot give them
        exactly); the names."""
        unsure = []
        for path in paths:
            info = light_file(path, self.p.files[path])
            if info is not None and info.exact:
                self._names[path] = info.names
            else:
                unsure.append(path)
        self.p.summarise(unsure)
        for path in unsure:
            self._names[path] = _classes(self.p.summaries.get(path))
        return [name for path in paths for name in self._names[path]]

    def _plan(self, chosen: List[str]) -> None:
        """The chosen files, then each wave of files subclassing a class known so far (a
        summarised one or a planned one), until a wave adds no class name or no file."""
        names = self._summarised_names()
        names.update(self._add(chosen))
        self._files.extend(self._waves(list(chosen), names, self._add))

    def materialise(self, tests: Optional[Sequence[Callable[[str], bool]]]) -> None:
        """Summarise the planned files before a loop over every summary; with `tests` (the
        active frameworks' base tests), not those whose classes none of them can run."""
        todo = [path for path in self.files if path not in self.p.summaries]
        if tests is not None:
            todo = [path for path in todo
                    if not harmless(self.p, path, light_file(path, self.p.files[path]), tests)]
        self.p.summarise(todo)


def _classes(summary) -> Tuple[str, ...]:
    return tuple(summary.classes) if summary is not None else ()
