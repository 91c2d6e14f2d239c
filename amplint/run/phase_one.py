"""Phase 1 of a project run, planned: which files are linted before the project pass (those
whose lint it reads: amplint.run.first_pass), from the cache and their text. The CLI runner, the
flake8 plugin's project context and the language server's first pass share it."""

from __future__ import annotations

import functools
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from amplint.analysis.results import FileResult
from amplint.run.options import Need
from amplint.run.result_cache import add_summaries, cached_map, cached_need, cached_results


class FirstPass(NamedTuple):
    """The first pass of a project, planned: `results[i]` is items[i]'s cached lint (None: not
    cached), `needs` each uncached file's Need (None: unreadable), `asked` the indices to lint
    now (the project pass reads their lint, or they are unreadable and the lint reports it)."""

    results: List[Optional[FileResult]]
    needs: Dict[str, Optional[Need]]
    asked: List[int]
    # with plan_first_pass's `defer`: the cached results whose summaries `inputs` reads later
    # (result_cache.cached_results' `later`), and what it needs to read them
    later: Dict[int, Tuple[str, dict]]
    cache: object
    items: Sequence

    def item(self, item):
        """An item to lint, with its file's Need, known already, in place of True."""
        need = self.needs.get(item[0])
        return item if need is None else item[:4] + (need,)

    def inputs(self, paths: Sequence[str]) -> Tuple[Dict[str, object], Dict[str, object]]:
        """(summaries, protocol plans or summaries) the project pass reads, from `results`
        and, for files not linted, what their Need says (a lint would have said the same)."""
        from amplint.analysis.project.first_pass_walks import note_walks  # (the pass runs next)

        self._read_later()
        summaries: Dict[str, object] = {}
        scalers: Dict[str, object] = {}
        for path, result in zip(paths, self.results):
            if result is not None:
                if path.endswith((".py", ".pyi")) and result.summary is not False:
                    summaries[path] = result.summary
                if result.scaler is not None:
                    scalers[path] = result.scaler
                note_walks(result.walks)
            elif self.needs.get(path) is not None and self.needs[path].plan is not None:
                scalers[path] = self.needs[path].plan  # False: not a caller
        return summaries, scalers


    def inputs_when_read(self, paths: Sequence[str]) -> Tuple[Callable[[], Dict[str, object]],
                                                              Callable[[], Dict[str, object]]]:
        """`inputs(paths)` as two callables (summaries, scalers) for project_entries, which calls
        them only where the pass is not in the cache; read once, at the first call of either."""
        read = functools.lru_cache(maxsize=None)(lambda: self.inputs(paths))
        return (lambda: read()[0]), (lambda: read()[1])

    def _read_later(self) -> None:
        """The summaries of the results made without them; a file whose blob cannot be read
        back is linted again here, as a cache miss would have been."""
        for index, stored in sorted(self.later.items()):
            if not add_summaries(self.cache, stored, self.results[index]):
                self.results[index] = cached_map(self.cache, "lint", [self.items[index]], 1, None)[0]
        self.later.clear()


def _need_on_disk(path: str, settings) -> Optional[Need]:
    """first_pass.need_on_disk, imported where a Need is not in the cache: a warm run imports
    none of the project pass's text tests."""
    from amplint.run.first_pass import need_on_disk

    return need_on_disk(path, settings)


def plan_first_pass(cache, items, defer: bool = False) -> FirstPass:
    """`items`: phase-1 lint items (path, settings, options, entries, True). `defer`: the
    cached results' project and protocol summaries are read by `inputs` (a run whose project
    pass is cached never calls it), not here."""
    later: Dict[int, Tuple[str, dict]] = {}
    results = cached_results(cache, "lint", items, later if defer else None)
    needs = {item[0]: cached_need(cache, item, _need_on_disk) for item, result in zip(items, results)
             if result is None}
    asked = [i for i, item in enumerate(items) if item[0] in needs
             and (needs[item[0]] is None or needs[item[0]].first)]
    return FirstPass(results, needs, asked, later, cache, items)
