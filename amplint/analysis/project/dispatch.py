"""Template methods (issue 13): `self.m(...)` in a method of class B that runs under a region
runs the `m` of the instance's class. Every project subclass S of B that inherits the calling
method runs that call, so S's resolution of `m` (its own, or the nearest class between S and B)
runs under the region too: mmdet's `BaseDetector.forward`, under `@auto_fp16`, calls
`self.forward_train`, which `TwoStageDetector` defines in another file. Where the class flow
knows the instance's class, only that class's resolution is taken.

Subclasses are found through the summaries; the files that may define them are summarised on
demand, chosen by the words written in their `class X(...)` bases."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from amplint.analysis.project.candidates import Candidate
from amplint.analysis.project.scan_view import texts_holding

_CLASS_BASES = re.compile(r"class\s+\w+\s*\(([^)]*)")
_WORD = re.compile(r"\w+")
_CLASS_HEADS = re.compile(r"class\s+(\w+)\s*\(([^)]*)")
MAX_DEPTH = 8  # subclass levels below B
MAX_CLASSES = 300  # subclasses of one class followed

Cls = Tuple[str, str]  # (file, class)


def base_words(files, path: str, cache: Dict[str, FrozenSet[str]]) -> FrozenSet[str]:
    """The words written between `class X(` and the next `)` anywhere in the file's text
    (one scan per file, however many subclass waves ask)."""
    found = cache.get(path)
    if found is None:
        found = frozenset(
            word for bases in _CLASS_BASES.findall(files[path]) for word in _WORD.findall(bases)
        )
        cache[path] = found
    return found


def text_subclasses(project, cls: str) -> Optional[Tuple[Set[str], Tuple[str, ...]]]:
    """The files whose classes may derive from a class named `cls` (their bases' words,
    BaseIndex), transitively, and the names of those classes (`cls` first); None when the
    chain is deeper than MAX_DEPTH. A class bound under another name (`renamed`) is not
    followed here."""
    bases = project.dispatch.bases
    names, files = {cls}, set()
    for _ in range(MAX_DEPTH):
        found = set(bases.files(names)) - files
        wave = {child for path in found for child, written in _CLASS_HEADS.findall(project.files[path])
                if set(_WORD.findall(written)) & names} - names
        files |= found
        if not wave:
            return files, (cls,) + tuple(sorted(names - {cls}))
        names |= wave
    return None


def renamed(project, names) -> bool:
    """Does some file bind one of the classes `names` under another name (`Cls as Base`,
    `Base = Cls`), which a subclass's bases could then write instead?"""
    pattern = re.compile(r"\b(?:%s)\s+as\s+\w|=\s*(?:[\w.]+\s*,\s*)*(?:\w+\.)*(?:%s)\s*(?:,|$)"
                         % (("|".join(map(re.escape, sorted(names))),) * 2), re.M)
    # each name's holders through the pass's memo (texts_holding): a scan read to the end is
    # kept, so a later class name containing this one (fairseq's
    # `SparseTransformerSentenceEncoderLayer` after `TransformerSentenceEncoderLayer`) reads
    # only its files
    return any(pattern.search(text) for name in names for _path, text in texts_holding(project, name))


class BaseIndex:
    """word -> the files (in the project's order) whose `class X(...)` bases write it, built
    once from every file's text: a subclass wave looks up the names it follows instead of
    testing every file of the project again (issue 34). `examined`: the entries the lookups
    have stepped over, for tests that count them."""

    def __init__(self, project, words: Dict[str, FrozenSet[str]]) -> None:
        self.p = project
        self._words = words
        self._files: Optional[Dict[str, List[str]]] = None
        self._order: Dict[str, int] = {}
        self.examined = 0

    def words(self, path: str) -> FrozenSet[str]:
        """The words the file's `class X(...)` bases write."""
        return base_words(self.p.files, path, self._words)

    def files(self, names: Set[str]) -> List[str]:
        """The files whose class bases write one of `names` (`base_words(...) & names`)."""
        if self._files is None:
            self._files = {}
            for i, path in enumerate(self.p.python):
                self._order[path] = i
                for word in base_words(self.p.files, path, self._words):
                    self._files.setdefault(word, []).append(path)
        hits: Set[str] = set()
        for name in names:
            found = self._files.get(name, ())
            self.examined += len(found) + 1
            hits.update(found)
        return sorted(hits, key=self._order.__getitem__)


class Dispatch:
    def __init__(self, project) -> None:
        self.p = project
        self.words: Dict[str, FrozenSet[str]] = {}
        self.bases = BaseIndex(project, self.words)
        self._subclasses: Dict[Cls, List[Cls]] = {}
        self._targets: Dict[tuple, list] = {}

    def subclasses(self, path: str, cls: str) -> List[Cls]:
        """The project classes deriving from `cls` of `path`, transitively (bounded)."""
        key = (path, cls)
        if key in self._subclasses:
            return self._subclasses[key]
        found: List[Cls] = []
        frontier: Set[Cls] = {key}
        seen: Set[Cls] = {key}
        for _ in range(MAX_DEPTH):
            names = {name for _, name in frontier}
            files = self.bases.files(names)
            self.p.summarise(files)
            wave: Set[Cls] = set()
            for f in files:
                summary = self.p.summaries.get(f)
                for name, info in (summary.classes.items() if summary is not None else ()):
                    if (f, name) not in seen and any(self._derives(f, base, names, frontier) for base in info.bases):
                        wave.add((f, name))
            if not wave:
                break
            seen |= wave
            found.extend(sorted(wave))
            frontier = wave
            if len(found) >= MAX_CLASSES:
                break
        self._subclasses[key] = found[:MAX_CLASSES]
        return self._subclasses[key]

    def _derives(self, path: str, base: str, names: Set[str], frontier: Set[Cls]) -> bool:
        if base.rsplit(".", 1)[-1].lstrip("@?") not in names:
            return False
        target = self.p.resolve_ref(path, base)
        return target is not None and len(target[1]) == 1 and (target[0], target[1][0]) in frontier

    def targets(self, path: str, caller: str, attr: str, known: Optional[Cls], opener: str = ""):
        """What `self.<attr>(...)` in method `caller` ("B.forward") of `path` may run beyond
        the same-file call graph: [((file, key), "TwoStageDetector in ...", files consulted)].
        `opener`: the method of B whose region reaches `caller` through same-file calls; a
        subclass that overrides it (or the caller) does not run this call under it."""
        memo = (path, caller, attr, known, opener)
        if memo not in self._targets:
            self._targets[memo] = self._find(path, caller, attr, known, opener)
        return self._targets[memo]

    def _find(self, path: str, caller: str, attr: str, known: Optional[Cls], opener: str):
        cls, method = caller.split(".")
        own = (path, caller)
        methods = [(method, own)] + ([(opener.split(".")[1], (path, opener))] if opener and opener != caller else [])
        same_file = self.p.method(path, cls, attr)
        classes = [known] if known is not None else [(path, cls)] + self.subclasses(path, cls)
        out: Dict[Tuple[str, str], Tuple[str, Set[str]]] = {}
        for spath, sub in classes:
            seen: Set[str] = {path}
            if any(self.p.method(spath, sub, name, seen=seen) != inherited for name, inherited in methods):
                continue  # this class overrides the calling method: it does not run this call
            hit = self.p.method(spath, sub, attr, seen=seen)
            if hit is None or hit == own or (hit == same_file and hit[0] == path) or hit in out:
                continue
            out[hit] = (f"{hit[1].split('.')[0]} in {self.p.display(hit[0])}", seen)
        return [(hit, held, seen) for hit, (held, seen) in sorted(out.items())]


def dispatched(project, path: str, caller: str, attr: str, line: int, candidate: Candidate, known,
               under: str, opener: str = ""):
    """(target, Candidate) for each method `self.<attr>(...)` at `path:line` may run."""
    site = f"{project.display(path)}:{line}"
    out = []
    for hit, held, seen in project.dispatch.targets(path, caller, attr, known, opener):
        cite = f"called as self.{attr} at {site} {under}, dispatched to {held}"
        out.append((hit, candidate.reached(cite, site), frozenset(seen | {hit[0]})))
    return out


def dispatch_seeds(project):
    """Seeds for `self.m(...)` under a first-pass file's own region (`@auto_fp16` forward)."""
    seeds = []
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        for caller, attr, line, index, opener in summary.self_roots:
            info = summary.region_infos[index]
            desc = f"{info.origin.what} at {project.display(info.origin.path)}:{info.origin.line}"
            base = Candidate(info.enabled, info.device, info.dtype, desc, "")
            under = f"under {desc}"
            for hit, candidate, seen in dispatched(project, path, caller, attr, line, base, None, under, opener):
                seeds.append((hit[0], hit[1], candidate, seen | {path}))
    return seeds
