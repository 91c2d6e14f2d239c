"""The files that may define the classes an active framework runs, summarised only when the
framework seeds read every summary (issue 34).

framework_seeds.py picks them by a text test (`_REGISTRY|detectron2\\.modeling`, ...) and by
the subclass expansion (`class M(Base)` where Base is one of the summarised classes), and
then reads every summary of the project only for a setting whose models are not known (no
config names them, the class flow cannot follow its instance). A setting its config scopes
(detectron2's `train.amp.enabled = True` in a LazyConfig naming the model) never reads them.
So they are planned first, from the class names the cheap index gives (light_index.py; a
file it cannot vouch for is summarised for its names), and left unparsed: the class flow's
parse budget counts them as summarised (`project.deferred`), as it did when they were. A
loop over every summary first summarises them (`materialise`), except those whose classes
no active framework can run, which a summary would only confirm. Whatever the pass then
reads is what a summary of every planned file up front gives."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from amplint.analysis.project.light_index import harmless, light_file

_NOT_FOLLOWED = {"Module", "Model", "object"}


class SeedFiles:
    def __init__(self, project, chosen: Sequence[str]) -> None:
        self.p = project
        self.files: List[str] = []  # in the order they would have been summarised
        self._names: Dict[str, Tuple[str, ...]] = {}
        self._plan(list(chosen))
        project.deferred.update(path for path in self.files if path not in project.summaries)

    def _add(self, paths: List[str]) -> None:
        """Plan these files and learn their class names (a summary where the index cannot
        give them exactly)."""
        unsure = []
        for path in paths:
            info = light_file(path, self.p.files[path])
            if info is not None and info.exact:
                self._names[path] = info.names
            else:
                unsure.append(path)
        self.p.summarise(unsure)
        for path in unsure:
            summary = self.p.summaries.get(path)
            self._names[path] = tuple(summary.classes) if summary is not None else ()
        self.files.extend(paths)

    def _plan(self, chosen: List[str]) -> None:
        """The chosen files, then each wave of files subclassing a class known so far (a
        summarised one or a planned one), until a wave adds no class name or no file."""
        self._add(chosen)
        planned: Set[str] = set(self.files)
        known: Set[str] = set()
        while True:
            names = {
                name for summary in self.p.summaries.values() if summary is not None
                for name in summary.classes
            }
            names.update(name for path in self.files for name in self._names[path])
            new = names - _NOT_FOLLOWED - known
            if not new:
                return
            known |= new
            wanted = [path for path in self.p.dispatch.bases.files(new)
                      if path not in self.p.summaries and path not in planned]
            if not wanted:
                return
            planned.update(wanted)
            self._add(wanted)

    def materialise(self, tests: Optional[Sequence[Callable[[str], bool]]]) -> None:
        """Summarise the planned files before a loop over every summary; with `tests` (the
        active frameworks' base tests), not those whose classes none of them can run."""
        todo = [path for path in self.files if path not in self.p.summaries]
        if tests is not None:
            todo = [path for path in todo
                    if not harmless(self.p, path, light_file(path, self.p.files[path]), tests)]
        self.p.summarise(todo)
