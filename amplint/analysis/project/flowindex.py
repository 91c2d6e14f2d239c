"""The class flow's view of the project's files: their flow facts (parsed on demand within a
budget), the call sites of a name and the registrations, found by a text search first. Also
the class flow's small types (`Hold`, `Things`)."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from amplint.analysis.project.call_words import (  # noqa: F401 (indirect_binders: re-exported)
    CallWords, indirect_binders,
)
from amplint.analysis.project.binding_calls import binding_call as _binding_call
from amplint.analysis.project.flowvalues import CHAIN
from amplint.analysis.project.registries import Registries
from amplint.analysis.project.site_files import SiteFiles


_ON_DEMAND_PARSES = 16  # files the class flow may parse beyond those already summarised
# ... when the summaries come in batches from the runner's pool and cache (warm runs read them)
_BATCHED_PARSES = 256


class Hold(tuple):
    """(cite, half dtype or None, wrapper or None): where the value came from; `wrap` cites the
    `nn.DataParallel(...)` around it on some path ("torch.nn.DataParallel(model) at b.py:15")."""

    __slots__ = ()

    def __new__(cls, cite: str, half: Optional[str] = None, wrap: Optional[str] = None):
        return tuple.__new__(cls, (cite, half, wrap))

    @property
    def wrap(self) -> Optional[str]:
        return self[2]

    @property
    def cite(self) -> str:
        return self[0]

    @property
    def half(self) -> Optional[str]:
        return self[1]


Things = Dict[tuple, Hold]

# in the cite of every class a set stands for (a registry lookup by a key no literal fixes, or
# one several configs name: registry_classes.py, string_classes.py), before the key's name
SET_WORDS = ", when `"

# `loss_bbox=dict(type="SmoothL1Loss", ...)` in a config or as a default argument (also
# `bbox_head=dict(_delete_=True, type=...)`, `bbox_head=[dict(type=...), ...]`'s first)
# `key=dict(..., type='Name')`, `key = [dict(type='Name'), ...]`: found from the `dict(` on,
# then the key looked for just before it (a regex starting at every word is 40 times slower)
_CONFIG_DICT = re.compile(r"dict\(\s*(?:\w+\s*=\s*[\w.'\"-]+\s*,\s*)*type\s*=\s*['\"]([\w.]+)['\"]")
# `(\w+)\s*=\s*\[?\s*$` searched in the 200 characters before a match, read backwards
_CONFIG_KEY_BACKWARDS = re.compile(r"\s*\[?\s*=\s*(\w+)")
_FIRST_ARG = re.compile(r"^[\w.\[\]]+\((?:[\w]+\.)*(\w+)[,)]")


class FlowIndex:
    def __init__(self, project) -> None:
        self.p = project
        self._calls: Dict[str, list] = {}
        self._by_name: Dict[str, tuple] = {}  # path -> (its flow facts, `_calls_by_name`)
        self.calls_read = 0  # recorded calls read by the call-site search (tests count the work)
        self._kept_callers: Dict[tuple, Dict[str, bool]] = {}  # (name, plain) -> file -> kept by `_other_callers`
        self._text_hits: Dict[str, List[str]] = {}
        self._words: Optional[CallWords] = None  # the text questions, indexed (call_words.py)
        self._parses = 0
        self._batched = getattr(project, "_summarize_many", None) is not None
        self._budget = _BATCHED_PARSES if self._batched else _ON_DEMAND_PARSES
        self.skipped: set = set()  # files a text search found but the budget left unparsed
        # files the budget counts as summarised (as the search that found them did before)
        # but not summarised, since none of their call sites can reach the callee asked
        # about (site_files.py); summarised when something reads them
        self._owed: Set[str] = set()
        self._accounted: Set[str] = set()  # names whose files the budget counted
        self._frozen: Optional[Set[str]] = None  # `freeze`: the files optional reads may take
        self._site_files = None
        self._config_types: Optional[Dict[str, Set[str]]] = None
        self.registries = Registries(self)  # what a registry's build makes (registries.py)
        self._timm_models: Optional[Dict[str, List[Tuple[str, str]]]] = None

    def config_types(self) -> Dict[str, Set[str]]:
        """key -> the class names the project's files give as `key=dict(type=...)`."""
        if self._config_types is None:
            found: Dict[str, Set[str]] = {}
            for path in self.p.python:
                text = self.p.files[path]
                for key, name in (_config_pairs(text) if "type" in text else ()):
                    found.setdefault(key, set()).add(name.rsplit(".", 1)[-1])
            self._config_types = found
        return self._config_types

    def narrow_by_config(self, path: str, key: str, text: str, out: Things) -> Things:
        """`build_loss(loss_bbox)`, `X.build(self.loss_bbox)`: of the registered classes held,
        only those the project's configs (or defaults) give as `loss_bbox=dict(type=...)`,
        when they name one of them: a registry build makes only what a config names. A
        factory's parameter (`def build_head(cfg): return HEADS.build(cfg)`) is decided by the
        factory's call sites, not by its own name."""
        if not any(thing[0] == "inst" for thing in out):
            return out
        match = _FIRST_ARG.match(text)
        name = match.group(1) if match else None
        flow = self._flow(path) if name and "." not in key else None
        function = flow.functions.get(key) if flow is not None else None
        if not name or (function is not None and name in function.params):
            return out
        types = self.config_types().get(name, ())
        if not any(thing[0] == "inst" and thing[2] in types for thing in out):
            return out  # the configs' `name=dict(type=...)` are about something else
        registered = self.registries.is_registered  # read from the class's own file
        held = [thing for thing in out if thing[0] == "inst" and registered(thing[1], thing[2])]
        if not any(thing[2] in types for thing in held):
            return out
        return {thing: hold for thing, hold in out.items() if thing not in held or thing[2] in types}

    def _flow(self, path: str, optional: bool = False):
        """The flow facts of a file. `optional`: a file found by a text search (call sites,
        registrations, half casts); parsed here only while the budget lasts, so that a
        common name cannot send most of a large tree to the parser."""
        if optional and not self._counted(path) and not self.p.is_deferred(path):
            if self._parses >= self._budget:
                self.skipped.add(path)
                return None
            self._parses += 1
            if self._frozen is not None:
                self._frozen.add(path)
        summary = self.p.summary(path)
        return summary.flow if summary is not None else None

    def _counted(self, path: str) -> bool:
        if self._frozen is not None:
            return path in self._frozen or path in self._owed
        return path in self.p.summaries or path in self._owed or path in self.p.reexport_read

    def freeze(self) -> None:
        """From now on an optional read takes a file counted when frozen (summarised, owed,
        read for a re-export) or one the budget counts from now on; no longer a file that an
        earlier question summarised in passing (resolving a reference reads any file, without
        the budget). Once the budget is spent (the mixed tree's is by the end of the build),
        what a later question's text searches read no longer depends on which questions were
        asked before it: a pass may then leave out a question it does not need (the scaler
        protocol's, r23-cost-scaler) without moving another's answer through the parses."""
        if self._frozen is None:
            self._frozen = set(self.p.summaries) | set(self.p.reexport_read)

    def _prefetch(self, paths: List[str], count_only: bool = False) -> None:
        """Summarise, in one batch, the files a text search found (as far as the budget goes).
        `count_only`: count them against the budget only (they become owed)."""
        if not self._batched:
            if count_only:  # what `_flow(path, optional=True)` counts, file by file
                for path in paths:
                    if not self._counted(path) and not self.p.is_deferred(path):
                        if self._parses >= self._budget:
                            self.skipped.add(path)
                            continue
                        self._parses += 1
                        self._owed.add(path)
            return
        todo = [path for path in paths if not self._counted(path)]
        free = [path for path in todo if self.p.is_deferred(path)]  # not counted, as before
        todo = [path for path in todo if not self.p.is_deferred(path)]
        todo = todo[: max(0, self._budget - self._parses)]
        self._parses += len(todo)
        if self._frozen is not None:
            self._frozen.update(todo)
        if count_only:
            self._owed.update(free + todo)
            return
        owed = [path for path in paths if path in self._owed and path not in self.p.summaries]
        if todo or free or owed:
            self.p.summarise(owed + free + todo)

    def owes(self, path: str) -> bool:
        return path in self._owed and path not in self.p.summaries

    def summarise_owed(self) -> None:
        """Summarise the files counted as summarised but not made: before a loop over every
        summary of the project (framework seeds, the points-to scope), which then reads the
        same summaries as when every file a search found was summarised."""
        owed = sorted(path for path in self._owed if path not in self.p.summaries)
        if owed:
            self.p.summarise(owed)

    def _files_with(self, word: str) -> List[str]:
        found = self._text_hits.get(word)
        if found is None:
            found = self._text_hits[word] = self.call_words.files_calling(word)
        return found

    @property
    def call_words(self) -> CallWords:
        if self._words is None:
            self._words = CallWords(self.p.python, self.p.files, self.p)
        return self._words

    def indexed_calls(self, word: str) -> Optional[List[str]]:
        """`call_words.files_calling(word)` when the call index is built (a lookup); None when
        it is not (a scan, or the index's build, would cost more than the asker's own test)."""
        words = self._words
        # (`texts_indexed`: the files the index read, none until it is built)
        if words is None or not words.texts_indexed or re.fullmatch(r"\w+", word) is None:
            return None
        return words.files_calling(word)

    def _indirect(self, path: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        return self.call_words.indirect(path)

    def _files_calling(self, name: str) -> List[str]:
        """The files whose text may hold a call that flowfacts records as a call site of
        `name`: one with arguments, not a `def name(` nor a `super().name(`."""
        key = "(" + name
        found = self._text_hits.get(key)
        if found is None:
            plain = name in CHAIN  # `train(model, ...)`, not `model.train(False)`: see flowfacts
            found = [path for path in self._files_with(name)
                     if _binding_call(name, self.p.files[path], plain, self._indirect(path)[0])]
            # `partial(obj.name, x)`, `super().__init__(x)` in a subclass of `name`, `(A if c else name)(x)`
            known = set(found)
            found += [path for path in self.call_words.binding_indirectly(name, plain) if path not in known]
            if plain:
                defined = re.compile(r"^def %s\(" % re.escape(name), re.M)
                written = f"def {name}("
                if not any(written in self.p.files[path] and defined.search(self.p.files[path])
                           for path in self._files_with(name)):
                    found = []  # no module-level `def eval(` in the project: `eval(...)` is the builtin
            self._text_hits[key] = found
        return found

    def _call_sites(self, name: str, question: Optional[tuple] = None) -> list:
        """Every recorded call whose callee's last name is `name`: (file, function key,
        callee, args, line). flowfacts records no call of a chain method (`model.train(False)`),
        only a plain name's (`train(model, loader)`). `question` (site_files.py): only the
        files whose calls can reach that callee are summarised and read; the others are
        counted against the budget as when they were."""
        memo = name if question is None else (name, question)
        found = self._calls.get(memo)
        if found is None:
            found = []
            # a chain method's name (`train`) is recorded only where it is called by its plain name
            files = self._files_calling(name)
            if question is not None:
                self.account(name)
                plain = name in CHAIN
                # a file binding `name` through partial, a subclass's super().__init__ or a
                # conditional class call (indirect_binders) is kept: its text calls no `name(`
                sites = self.site_files
                files = self._other_callers(name, plain, files, question)
                files = [path for path in files
                         if sites.binds_indirectly(path, name, question, plain, self._indirect(path))
                         or sites.may_reach(path, name, question, plain)]
            self._prefetch(files)
            for path in files:
                flow = self._flow(path, optional=True)
                if flow is not None:
                    found.extend((path,) + site for site in self._calls_by_name(path, flow).get(name, ()))
            self._calls[memo] = found
        return found

    def _calls_by_name(self, path: str, flow) -> Dict[str, list]:
        """The recorded calls of a file by the callee's last name, each as (function key,
        callee, args, line) in `_call_sites`' order: read once per file, not once per name."""
        known = self._by_name.get(path)
        if known is None or known[0] is not flow:
            index: Dict[str, list] = {}
            for key in sorted(flow.functions):
                for last, callee, args, line in flow.functions[key].calls:
                    index.setdefault(last, []).append((key, callee, args, line))
                    self.calls_read += 1
            known = self._by_name[path] = (flow, index)
        return known[1]

    def _other_callers(self, name: str, plain: bool, files: List[str], question: tuple) -> List[str]:
        """`files` less those whose every call of `name` reaches only their own code
        (site_files.reaches_own_only) and that bind nothing indirectly, unless it is the file
        the question asks about: what `may_reach` and `binds_indirectly` would drop for any
        question, found once per (name, file) and only where it can drop the file: the file
        asked about is kept unread (a method called only in its own file, `self._run_epoch(...)`
        in HF's trainer.py, asks no scan of the project for stores of `_run_epoch`)."""
        kept = self._kept_callers.get((name, plain))
        if kept is None:
            kept = self._kept_callers[(name, plain)] = {}
        own = question[1][0] if question[0] == "bind" else question[1]
        found = []
        for path in files:
            keep = path == own or kept.get(path)
            if keep is None:
                partial, other = self._indirect(path)
                keep = kept[path] = name in partial or (not plain and name in other) \
                    or not self.site_files.reaches_own_only(path, name, plain)
            if keep:
                found.append(path)
        return found

    @property
    def site_files(self) -> SiteFiles:
        if self._site_files is None:
            self._site_files = SiteFiles(self, callee_targets)
        return self._site_files

    def account(self, name: str) -> None:
        """Count the files a call-site search of `name` finds against the parse budget, once
        per name, whatever the question (they become owed): as the first search did."""
        if name not in self._accounted:
            self._accounted.add(name)
            self._prefetch(self._files_calling(name), count_only=True)

    def timm_models(self) -> Dict[str, List[Tuple[str, str]]]:
        """timm registry name -> (file, function) of the project's `@register_model` functions."""
        if self._timm_models is None:
            self._timm_models = {}
            files = [path for path in self.p.python if "register_model" in self.p.files[path]]
            self._prefetch(files)
            for path in files:
                flow = self._flow(path, optional=True)
                for name in (flow.timm_models if flow is not None else ()):
                    self._timm_models.setdefault(name, []).append((path, name))
        return self._timm_models


def thing_order(item) -> str:
    return repr(item)


def merge_things(out: Things, more: Things) -> None:
    for thing, hold in more.items():  # keep(), inlined: the class flow's most frequent step
        found = out.setdefault(thing, hold)
        if found is not hold and hold[2] is not None and found[2] is None:
            out[thing] = hold


def keep(out: Things, thing: tuple, hold: Hold) -> None:
    """`out.setdefault(thing, hold)`, except that a value wrapped on one path is wrapped: the
    first wrapped hold replaces an unwrapped one (a factory returning `model.cuda()` on one
    branch and `nn.DataParallel(model)` on another may hand back the wrapper)."""
    found = out.setdefault(thing, hold)
    if found is not hold and hold[2] is not None and found[2] is None:
        out[thing] = hold


def _config_pairs(text: str) -> List[Tuple[str, str]]:
    """(key, type name) for each `key=dict(type='Name')` of a text."""
    pairs = []
    for match in _CONFIG_DICT.finditer(text):
        start = match.start()
        key = _CONFIG_KEY_BACKWARDS.match(text[max(0, start - 200):start][::-1])
        if key is not None:
            pairs.append((key.group(1)[::-1], match.group(1)))
    return pairs


def callee_targets(held: Things):
    """What a call of a value holding `held` runs: ({(file, key): (position, parameters left
    out)}, [(position, file, class)] whose constructor it runs), positions in `held`'s order."""
    direct: Dict[tuple, tuple] = {}
    classes = []
    for position, thing in enumerate(held):
        kind = thing[0]
        if kind == "func":
            direct.setdefault((thing[1], thing[2]), (position, 0))
        elif kind == "bound":
            direct.setdefault((thing[3], thing[4]), (position, 1))
        elif kind == "cfunc":
            direct.setdefault((thing[1], thing[2]), (position, 1))
        elif kind == "class":
            classes.append((position, thing[1], thing[2]))
    return direct, classes


class SiteTable:
    """The call sites of one name, by the functions they call (those whose callee is final)."""

    def __init__(self, count: int) -> None:
        self.unsettled: Set[int] = set(range(count))
        self.settled: Dict[int, tuple] = {}
        self.by_target: Dict[tuple, list] = {}
        self.with_classes: Set[int] = set()

    def settle(self, number: int, found) -> None:
        self.unsettled.discard(number)
        self.settled[number] = found
        for target in found[0]:
            self.by_target.setdefault(target, []).append(number)
        if found[1]:
            self.with_classes.add(number)
