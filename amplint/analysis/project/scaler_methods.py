"""Which project methods the GradScaler protocol's value calls may reach with events, told
from the texts once per pass (scaler_resolution.py asks the class flow only when one may).

A value call `x.m()` (a local's or parameter's instance, a wrapper's, an attribute's object)
gives an entry only where the class flow's one answer is a method `C.m` that the callee file's
protocol summary gives events. Such a method is a nested `def m` of a file holding a callee
word (`callee_files`). Of those files, a caller's first-pass summary (it has calls, so its
`functions` were made) says exactly which methods have events; for the others scaler_quiet's
`protocol_keys` gives a superset. A name none of whose files may give a method `*.m` events
needs no question: every answer the class flow could give ends without an entry.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.project.scaler_summaries import CALLEE_WORDS
from amplint.analysis.project.scan_view import scan_texts, scannable

# paths -> `scaler_quiet.protocol_keys` of each one's text (None: any function may have events)
KeysOf = Callable[[List[str]], Mapping[str, Optional[FrozenSet[str]]]]

METHOD_DEF = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
# METHOD_DEF's matches, found from the literal `def` (re skips to a literal; a pattern led by
# `^` is tried at every line): the line's text before it is then the indent (and `async`)
_DEF_NAME = re.compile(r"def[ \t]+(\w+)")
_DEF_INDENT = re.compile(r"[ \t]+(?:async[ \t]+)?")

# CALLEE_WORDS without those that hold another of them (`clip_grad_norm_` holds `clip`): the
# same test, fewer scans of a text that holds none (most texts); the words most texts that
# hold one hold first (a text holding one is scanned no further)
_COMMON_FIRST = ("backward", "clip", "caler", ".step(")
CALLEE_TESTS = tuple(sorted(
    (word for word in CALLEE_WORDS if not any(other != word and other in word for other in CALLEE_WORDS)),
    key=lambda word: _COMMON_FIRST.index(word) if word in _COMMON_FIRST else len(_COMMON_FIRST)))
assert all(scannable(word) for word in CALLEE_TESTS)  # (callee_files reads the reduced copies)


class KnownKeys:
    """A KeysOf that reads each file's keys once (`read`: how many it read), so that a test may
    ask for them one file at a time and stop at its answer."""

    def __init__(self, keys_of: KeysOf) -> None:
        self._keys_of = keys_of
        self._known: Dict[str, Optional[FrozenSet[str]]] = {}
        self.read = 0

    def __call__(self, paths: List[str]) -> Dict[str, Optional[FrozenSet[str]]]:
        wanted = [path for path in paths if path not in self._known]
        if wanted:
            self._known.update(self._keys_of(wanted))
            self.read += len(wanted)
        return {path: self._known.get(path) for path in paths}

    @staticmethod
    def of(keys_of: KeysOf) -> "KnownKeys":
        return keys_of if isinstance(keys_of, KnownKeys) else KnownKeys(keys_of)


# the text `protocol_keys` may read per value call of a name: a name whose files lacking an
# exact summary hold more is asked of the class flow without the test (reading the keys of
# fairseq's or transformers' 200 files defining `forward` costs more than its few questions)
_BYTES_PER_CALL = 200_000


def callee_files(project) -> List[str]:
    """The project's files whose text holds a callee word, in order, once per project: every
    file a scaler trigger word is in, too (SCALER_TRIGGERS are callee words)."""
    found = project.__dict__.get("_scaler_callee_files")
    if found is None:
        # the pass's scan view: its texts in order, without a lookup each, and the ASCII copy of
        # a 4-byte text where it has one (the words are ASCII, with no `?`: the same answers)
        found = project.__dict__["_scaler_callee_files"] = [
            path for path, scan, _text in scan_texts(project, CALLEE_TESTS[0])
            if any(word in scan for word in CALLEE_TESTS)]
    return found


def method_files(project) -> Dict[str, Tuple[str, ...]]:
    """Method name -> the callee files (in order) with a nested (indented) def of that name,
    once per project: one scan of each callee file."""
    found = project.__dict__.get("_scaler_method_files")
    if found is None:
        names: Dict[str, List[str]] = {}
        for path in callee_files(project):
            for name in method_defs(project.files[path]):
                names.setdefault(name, []).append(path)
        found = project.__dict__["_scaler_method_files"] = {
            name: tuple(paths) for name, paths in names.items()}
    return found


def method_defs(text: str) -> Set[str]:
    """The names of the nested defs of a text: `set(METHOD_DEF.findall(text))`. The first `def`
    of a line that METHOD_DEF matches is where its match starts (what comes before it there,
    the indent and `async`, holds no `def`), and no match crosses a line."""
    found: Set[str] = set()
    for match in _DEF_NAME.finditer(text):
        start = match.start()
        line = text.rfind("\n", 0, start) + 1
        if line < start and _DEF_INDENT.fullmatch(text, line, start):
            found.add(match.group(1))
    return found


def method_names(project) -> FrozenSet[str]:
    """The names of the nested defs of the callee files: `x.m()` on an instance can run no
    project method with events unless one of them is named `m`."""
    found = project.__dict__.get("_scaler_method_names")
    if found is None:
        found = project.__dict__["_scaler_method_names"] = frozenset(method_files(project))
    return found


def held_methods(project, summaries, keys_of: Optional[KeysOf]) -> FrozenSet[str]:
    """The names `m` of the `self.x.m()` calls the summaries record that are followed: a method
    of the object an attribute holds is composed only when it is the AMP helper, a nested def
    `m` of a file whose text speaks of a scaler (`SCALER_TRIGGERS`) that may hold events there
    (`keys_of`, scaler_quiet's `protocol_keys`, a superset of the functions a summary gives
    events, told from `ast`). The class flow's first questions cost a project its flow index:
    fairseq's files record 147 such calls (`self.task.build_model()`, ...)."""
    asked = {call[4].split(".", 1)[1] for summary in summaries for call in summary.calls
             if call[3] == "held"}
    if not asked:
        return frozenset()
    defined = method_files(project)
    files: Dict[str, List[str]] = {}
    speaks: Dict[str, bool] = {}  # path -> whether its text holds a trigger: once per file
    for name in sorted(asked):
        for path in defined.get(name, ()):
            if path not in speaks:
                speaks[path] = any(word in project.files[path] for word in SCALER_TRIGGERS)
            if speaks[path]:
                files.setdefault(name, []).append(path)
    if not files or keys_of is None:
        return frozenset(files)
    # a name is held at its first file that may give `*.name` events: the files after it are
    # not read for it
    keys_of = KnownKeys.of(keys_of)
    # every name's first file is read whatever its answer: one batch (a parallel pool's)
    keys_of(list(dict.fromkeys(paths[0] for paths in files.values())))
    return frozenset(name for name, paths in files.items()
                     if any(_may_keep(keys_of, path, name) for path in paths))


def _may_keep(keys_of: KeysOf, path: str, name: str) -> bool:
    """Whether the file's function keys (None: any) may hold a method named `name`."""
    keys = keys_of([path]).get(path)
    return keys is None or _keeps(keys, name)


def _keeps(keys, name: str) -> bool:
    """Whether function keys hold a method (or nested function) named `name`."""
    return any("." in key and key.rsplit(".", 1)[-1] == name for key in keys)


class EventMethods:
    """`may_have_events(name)`: whether some project method named `name` may have protocol
    events in the summary scaler_entries would compose it with; False only when none can.
    `callers`: the first-pass summaries with calls (path -> summary: exact `functions`);
    `calls`: method name -> how many value calls may ask for it (what the test may cost)."""

    def __init__(self, project, callers: Mapping[str, object], keys_of: Optional[KeysOf],
                 calls: Optional[Mapping[str, int]] = None) -> None:
        self._project = project
        self._callers = callers
        self._keys_of = KnownKeys.of(keys_of) if keys_of is not None else None
        self._calls = calls or {}
        self._counted: Set[str] = set()  # the files whose keys the budget counts as read
        self._names: Dict[str, bool] = {}
        self.skipped = 0  # questions not asked (tests)

    def may_have_events(self, name: str) -> bool:
        known = self._names.get(name)
        if known is None:
            known = self._names[name] = self._decide(name)
        return known

    def _decide(self, name: str) -> bool:
        inexact = []
        for path in method_files(self._project).get(name, ()):
            summary = self._callers.get(path)
            functions = getattr(summary, "functions", None)
            if functions is not None:  # the summary scaler_entries composes with: exact
                if _keeps(functions, name):
                    return True
            else:
                inexact.append(path)
        if not inexact:
            return False
        if self._keys_of is None:
            return True
        wanted = [path for path in inexact if path not in self._counted]
        files = self._project.files
        if sum(len(files[path]) for path in wanted) > _BYTES_PER_CALL * self._calls.get(name, 1):
            return True
        self._counted.update(wanted)  # their keys are paid for: a later name's test reads them
        # at the first file that may give `*.name` events the answer is known: the files after
        # it are not read for it
        return any(_may_keep(self._keys_of, path, name) for path in inexact)


def method_calls(summaries) -> Dict[str, int]:
    """Method name -> how many value calls `x.m()` (local, wrapper, held) the summaries record."""
    found: Dict[str, int] = {}
    for summary in summaries:
        for call in summary.calls:
            if call[3] in ("value", "wrapper", "held") and "." in call[4]:
                name = call[4].split(".", 1)[1]
                found[name] = found.get(name, 0) + 1
    return found
