"""The GradScaler protocol across files, the project side: the calls the per-file protocol
summaries (scaler_summaries.py) leave unresolved, resolved over the project (methods through
base classes and mixins, imported names through re-exports: the resolver the region pass uses,
a called value through the class flow), the callee's file summarised on demand, and the
caller's file handed one `EntryScaler` per call whose callee has protocol events
(amplint.analysis.facts.scaler_remote). The entries travel with the file's other project
entries, so a cached result of that file is used again only while they are the same: editing
the helper's file changes them.

One level: a callee's own calls into a third file are not followed.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from amplint.analysis.facts.returned_values import EntryReturn
from amplint.analysis.facts.scaler_flags import EntryScalerFlag, stored_in_texts
from amplint.analysis.facts.scaler_remote import EntryCallerUpdate, EntryScaler
from amplint.analysis.project.light_index import light_file
from amplint.analysis.project.module_defs import loop_variable, noop_function, parse_or_none
from amplint.analysis.project.return_values import function_returns
from amplint.analysis.project.scaler_methods import (
    EventMethods, KeysOf, KnownKeys, held_methods, method_calls, method_names,
)
from amplint.analysis.project.scaler_quiet import protocol_keys, quiet_files
from amplint.analysis.project.scaler_constructed import constructed_texts
from amplint.analysis.project.scaler_stored import stored_parameters
from amplint.analysis.project.scaler_summaries import CALLEE_WORDS, ScalerSummary
from amplint.analysis.project.scaler_unhanded import unhanded_entries

# paths -> their scaler summaries (None: no summary); `force`: also files without the words
SummarizeScaler = Callable[[List[str], bool], Mapping[str, Optional[ScalerSummary]]]
# path -> whether `summarize([path], True)` may give a summary (False: it gives None, the
# file holding none of the CALLEE_WORDS, as `summarize` tests it)
MayHold = Callable[[str], bool]


def scaler_entries(project, paths: Sequence[str], summarize: SummarizeScaler,
                   resolved: Optional[Set[tuple]] = None,
                   may_hold: Optional[MayHold] = None,
                   keys_of: Optional[KeysOf] = None) -> Dict[str, Tuple[EntryScaler, ...]]:
    """path -> the EntryScalers of its calls into other files' functions with protocol events.
    `resolved` collects (path, function, call text, ordinal) of every call followed into
    another file, events or not (--show-regions lists the others). `may_hold`: calls to an
    imported name that can only end in files without a callee word are not resolved (their
    region summaries not made): they could give neither an entry nor a `resolved` record.
    `keys_of`: callee files none of whose called functions may hold events (scaler_quiet.py)
    are not summarised (without `resolved`, which records the calls into summarised files)."""
    # the class flow's text searches read, from here on, the files the build counted (and those
    # its budget counts since): which value questions the gate below leaves out moves no answer
    # of a later one through the files read (flowindex.FlowIndex.freeze)
    project.flow.freeze()
    python = [p for p in paths if p.endswith(".py")]
    summaries = summarize(python, False)
    callers = {p: s for p, s in summaries.items() if s is not None and s.calls}
    targets: Dict[Tuple[str, int], Tuple[str, str]] = {}
    if keys_of is not None:
        keys_of = KnownKeys(keys_of)  # each file's keys read once, whichever test asks first
    held = held_methods(project, callers.values(), keys_of)
    # without `resolved`, a value call none of whose answers could give an entry is not asked
    events = EventMethods(project, callers, keys_of, method_calls(callers.values())) if resolved is None else None
    for path, summary in callers.items():
        for index, call in enumerate(summary.calls):
            found = _resolve(project, path, summary, call, may_hold, held,
                             events if index not in summary.wanted else None)
            if found is not None and (found[0] != path or call[3] in ("wrapper", "held")):
                # a wrapper's methods, or those of the object an attribute holds: its own file's
                # too (the file's call graph does not follow `self.optim = optim` to a class)
                targets[(path, index)] = found
    wanted = sorted({where for where, _ in targets.values()})
    known = {p: callers.get(p) for p in wanted if p in callers}
    forced = [p for p in wanted if known.get(p) is None]
    if keys_of is not None and resolved is None and forced:
        asked: Dict[str, Set[str]] = {p: set() for p in forced}
        for (path, index), (where, key) in targets.items():
            if where in asked:  # "make_step.": the closure a factory returns, any nested key
                asked[where].add(key + "." if callers[path].calls[index][3] == "closure" else key)
        quiet = quiet_files(asked, keys_of)
        forced = [p for p in forced if p not in quiet]
    known.update(summarize(forced, True))
    entries: Dict[str, List[EntryScaler]] = {}
    stored: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
    for (path, index), (where, key) in sorted(targets.items()):
        callee = known.get(where)
        name, text, ordinal = callers[path].calls[index][:3]
        if callee is not None and resolved is not None:
            resolved.add((path, name, text, ordinal))
        factory: tuple = ()
        if callers[path].calls[index][3] == "closure":  # the closure the factory `key` returns
            closure = callee.closures.get(key) if callee is not None else None
            if closure is None:
                continue
            key, factory = closure[0], closure[1:]
        function = callee.functions.get(key) if callee is not None and callee.functions else None
        if function is None:
            continue
        positional, keywords, events = function[:3]
        method = (callers[path].calls[index][3] in ("value", "wrapper", "held")
                  and "." in callers[path].calls[index][4])
        kept = stored_parameters(_ast_of(project, where), key) if method else ()
        entries.setdefault(path, []).append(EntryScaler(
            name, text, ordinal, f"{project.display(where)}: {key}", positional, keywords, events,
            function[3] if len(function) > 3 else (), factory,
            method=method, source=where, flags=function[4] if len(function) > 4 else (),
            stored=kept,
        ))
        for made in _caller_updates(project, path, callers[path], index, key, events, kept):
            entries.setdefault(where, []).append(made)  # type: ignore[arg-type]
        for flag in callers[path].flags:
            if flag[0] == index:
                made = _flag_entry(project, path, key, positional, keywords, flag, stored)
                if made is not None:
                    entries.setdefault(where, []).append(made)
    for path, summary in sorted(callers.items()):
        for index in summary.wanted:
            entry = _returned(project, path, summary, index, targets.get((path, index)))
            if entry is not None:
                entries.setdefault(path, []).append(entry)  # type: ignore[arg-type]
    for path, unhanded in unhanded_entries(project, summaries, lambda where: _ast_of(project, where)).items():
        entries.setdefault(path, []).extend(unhanded)  # type: ignore[arg-type]
    return {path: tuple(found) for path, found in entries.items()}


def _returned(project, path: str, summary: ScalerSummary, index: int,
              target: Optional[Tuple[str, str]]) -> Optional[EntryReturn]:
    """The EntryReturn of a wanted call (return_values.py), resolved here when the protocol's
    own resolution left it out (its callee file holds no protocol word)."""
    call = summary.calls[index]
    if target is None:
        target = _resolve(project, path, summary, call)
        if target is None or target[0] == path:
            return None
    where, key = target
    found = function_returns(where, project.files[where], key)
    if found is None:
        return None
    name, text, ordinal = call[:3]
    return EntryReturn(name, text, ordinal, f"{project.display(where)}: {key}", found[0], found[1], found[2])


def _caller_updates(project, path: str, summary: ScalerSummary, index: int, key: str,
                    events, stored=()) -> List[EntryCallerUpdate]:
    """The callee's side of a `self.m()` call into a base class or mixin of another file: the
    `self.` scalers `m` steps that a method of the calling class updates (the same object's
    scaler, `self.` on both sides)."""
    call = summary.calls[index]
    cls = call[5]
    if call[3] in ("value", "held") and "." in key and call[4].count(".") == 1:
        return _instance_updates(project, path, summary, call, key, events, stored)
    if call[3] != "self" or not cls or "." not in key:
        return []
    stepped = {e[1] for e in events if e[0] == "step" and e[1].startswith("self.")}
    if not stepped:
        return []
    updated = {e[1] for name, function in (summary.functions or {}).items()
               if name.rsplit(".", 1)[0] == cls for e in function[2] if e[0] == "update"}
    return [EntryCallerUpdate(key.rsplit(".", 1)[0], scaler, f"{project.display(path)}: {cls}")
            for scaler in sorted(stepped & updated)]


def _instance_updates(project, path: str, summary: ScalerSummary, call, key: str,
                      events, stored=()) -> List[EntryCallerUpdate]:
    """The callee's side of `x.m()` (or `self.x.m()`) on an instance of a class of another file,
    where `m` steps `self.scaler` and the calling function updates `x.scaler` itself
    (StyleTTS2's `optimizer.step(key)` per key, then `optimizer.scaler.update()`), or updates
    the scaler it handed the constructor of `x` (`x = Accumulator(optimizer, 2, scaler)`, then
    `scaler.update()`: scaler_constructed.py)."""
    holder = call[4].split(".", 1)[0]
    prefix = holder if call[3] == "value" else "self." + holder
    updated = set(summary.updates.get(call[0], ()))
    stepped = {e[1] for e in events if e[0] == "step" and e[1].startswith("self.")}
    handed: Dict[str, str] = {}
    if call[3] == "value" and stored and any(prefix + s[len("self"):] not in updated for s in stepped):
        handed = constructed_texts(_ast_of(project, path), call[0], holder, key.split(".", 1)[0], stored)
    return [EntryCallerUpdate(key.rsplit(".", 1)[0], scaler, f"{project.display(path)}: {call[0]}")
            for scaler in sorted(stepped)
            if prefix + scaler[len("self"):] in updated or handed.get(scaler) in updated]


def _flag_entry(project, path: str, key: str, positional, keywords, flag,
                stored: Dict[Tuple[str, ...], Tuple[str, ...]]) -> Optional[EntryScalerFlag]:
    """The callee's side of a call that passes a scaler enabled by a flag of an object it also
    passes (scaler_flags.py): the two slots named by the callee's parameters."""
    _, scaler_slot, root_slot, attr, root_name, line = flag
    names = []
    for slot in (scaler_slot, root_slot):
        if isinstance(slot, int):
            names.append(positional[slot] if slot < len(positional) else None)
        else:
            names.append(slot if slot in positional or slot in keywords else None)
    param, root = names
    if param is None or root is None:
        return None
    words = tuple(sorted({root_name, root}))
    if words not in stored:
        stored[words] = stored_in_texts((project.files[p] for p in project.python), words)
    return EntryScalerFlag(key, param, root, attr, f"{project.display(path)}:{line}", stored[words])


def text_may_hold(files: Mapping[str, str]) -> MayHold:
    """`may_hold` for `local_summaries` over these texts (its callee-word test)."""
    return lambda path: any(word in files[path] for word in CALLEE_WORDS)


def text_keys_of(files: Mapping[str, str]) -> KeysOf:
    """`keys_of` made here from the texts (`local_summaries` makes no summary of a text
    without a callee word)."""
    return lambda paths: {path: protocol_keys(files[path]) if any(
        word in files[path] for word in CALLEE_WORDS) else frozenset() for path in paths}


def _resolve(project, path: str, summary: ScalerSummary, call,
             may_hold: Optional[MayHold] = None,
             held: FrozenSet[str] = frozenset(),
             events: Optional[EventMethods] = None) -> Optional[Tuple[str, str]]:
    """(file, function key) the call runs in another file of the project, or None. The
    caller's own imports and bases come from its protocol summary; the files they lead to
    are asked of the project (its resolver and region summaries). `held`: the method names a
    `self.x.m()` call is followed for (`held_methods`). `events`: a value call `x.m()` is
    answered None, unasked, when no method `m` may have events (scaler_methods.py)."""
    _, _, _, kind, name, cls = call
    if kind == "self":
        return _method(project, path, summary, cls, name, 0)
    if kind == "template":
        return _override(project, path, call[0], name)
    if kind == "held" and name.split(".", 1)[1] not in held:
        return None
    if kind in ("value", "wrapper", "held"):
        if "." in name and name.split(".", 1)[1] not in method_names(project):
            return None  # no class of the project that may hold an event has such a method
        if "." in name and events is not None and not events.may_have_events(name.split(".", 1)[1]):
            events.skipped += 1
            return None  # its method could give no entry, whatever the class flow answered
        return _value_target(project, path, call[0], name, "self" if kind == "held" else "local")
    # "name" and "closure": the imported function called, or the factory whose closure is
    head, _, attr = name.partition(".")
    ref = summary.imports.get(head)
    if ref is None:
        return None
    ref += "." + attr if attr else ""
    if may_hold is not None and _dead_end(project, path, ref, may_hold):
        return None
    found = project.resolve_ref(path, ref)
    if found is None or len(found[1]) != 1:
        return None
    where, (key,) = found
    target = project.summary(where)
    if target is None or key not in target.functions or "." in key:
        return None
    return where, key


def _value_target(project, path: str, key: str, name: str,
                  holder: str = "local") -> Optional[Tuple[str, str]]:
    """What calling local or parameter `name` of function `key` runs, when the class flow
    knows exactly one: the `__call__` of the one project class it holds (torchvision's
    references with a grad-norm clipping object), or the one function. `name` "x.m": the
    method `m` of the one project class whose instance `x` holds (its `self` is `x`; never a
    module stored in the attribute `m`, whose `self` would be `x.m`). `holder` "self": `x` is
    the attribute of the method's `self` (`self.x.m()`)."""
    if project.summary(path) is None:
        return None
    local, _, attr = name.partition(".")
    targets = project.flow.call_targets(path, key, (holder, local), attr)
    if attr and any(instance is None or target[1].rsplit(".", 1)[-1] != attr
                    for target, _held, _source, instance in targets):
        return None
    found = {target for target, _held, _source, _instance in targets}
    if len(found) > 1 and attr and loop_variable(_ast_of(project, path), key, local):
        found = _beside_noops(project, found)
    if len(found) != 1:
        return None
    where, target = found.pop()
    summary = project.summary(where)
    return (where, target) if summary is not None and target in summary.functions else None


def _beside_noops(project, found: Set[Tuple[str, str]]) -> Set[Tuple[str, str]]:
    """The hook idiom (detectron2's HookBase, Lightning's Callback): `for h in self._hooks:
    h.after_backward()` runs the method of every registered hook in turn, and a hook that does
    not take part inherits the base's empty one. When every target but one is such a method
    doing nothing, the loop runs that one's events: it is composed. Otherwise (and for a call
    on one object that may be of several classes) the call's callees stay unknown."""
    noops = {target for target in found if noop_function(_ast_of(project, target[0]), target[1])}
    rest = found - noops
    return rest if len(rest) == 1 and noops else found


def _ast_of(project, path: str):
    """The module's `ast` (None: it does not parse), once per project."""
    trees = project.__dict__.setdefault("_scaler_asts", {})
    if path not in trees:
        trees[path] = parse_or_none(project.files.get(path, ""))
    return trees[path]


def _dead_end(project, importer: str, ref: str, may_hold: MayHold) -> bool:
    """True when `_resolve` can only answer None or a file for which `may_hold` is False,
    told without region summaries. It follows the candidate modules `resolve_ref` tries
    (ProjectResolver._resolve_ref); at each, the search ends there (the name is defined
    there) or goes on to the next candidate, unless the name is imported there (then it
    follows the import), which the `ast` index (light_index) tells from a superset of the
    imports a summary records. Ending at a candidate that holds no callee word, or with more
    than one name left (`optim.lr_scheduler.build` found in `optim/__init__.py` as a module
    attribute), gives no function to compose."""
    if ref.startswith(("?", "@")):
        return True  # None, or the importer itself (not a call into another file)
    for candidate, attrs in project._module_candidates(importer, ref):
        if not attrs:
            return True  # the module itself: no function key
        if len(attrs) == 1 and may_hold(candidate):
            return False
        info = light_file(candidate, project.files[candidate])
        if info is None or attrs[0] in info.imports or attrs[0] in info.relative:
            return False  # a re-export may lead on into another file
    return True


def _override(project, path: str, caller: str, name: str) -> Optional[Tuple[str, str]]:
    """`self.name()` in method `caller` of a class whose `name` is abstract or missing: the
    one `name` the project's subclasses that run `caller` resolve to; None when they resolve
    to several (which one runs depends on the instance) or to none."""
    if caller.count(".") != 1:
        return None
    hits = project.dispatch.targets(path, caller, name, None)
    return hits[0][0] if len(hits) == 1 else None


def _method(project, path: str, summary: ScalerSummary, cls: str, name: str, depth: int):
    """`name` through the bases of class `cls` of the caller's file (a class of the file that
    defines it is the file's own call graph's business)."""
    if depth > 4 or cls not in summary.bases:
        return None  # a nested class, or too deep
    for base in summary.bases[cls]:
        if base.startswith("@"):
            found = _method(project, path, summary, base[1:], name, depth + 1)
        elif base.startswith("?"):
            continue
        else:
            target = project.resolve_ref(path, base)
            found = (project.method(target[0], target[1][0], name)
                     if target is not None and len(target[1]) == 1 else None)
        if found is not None:
            return found
    return None
