"""Call sites of a function passed as an argument and called through the parameter that
receives it (the class flow's parameter binding, classbinding.py `_bound`). Megatron-LM's
pretrain_gpt.py passes `forward_step` to `pretrain(model_provider, forward_step)`, which hands
it on to `train_step(forward_step_func, ...)`, which calls `forward_step_func(data_iterator,
model[0])`: that call binds `forward_step`'s parameters as a call written `forward_step(...)`
would. Without it the model `forward_step` runs is a parameter nothing binds.

Only module-level functions, passed by their name (`forward_step`, `steps.forward_step`), to a
module-level function of the project that neither rebinds the parameter nor hides it, followed
through at most `_MAX_HOPS` such hand-overs. Which files pass a name as an argument is read
from the texts once per name (`_files_passing`); what each argument and callee holds is the class
flow's answer, asked again at each question (it memoises what is settled), so the answer does
not depend on the order of the questions."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project.call_words import PassedWords

_MAX_HOPS = 3

Site = Tuple[str, str, Tuple[Tuple[object, object], ...]]  # (file, caller, args of the call)


def callback_sites(values, path: str, key: str, depth: int) -> List[Site]:
    """(file, function, args) of each call that calls module-level function `key` of `path`
    through a parameter it was passed to."""
    if "." in key or not key:
        return []
    target = ("func", path, key)
    out: List[Site] = []
    for where, caller, callee, slot, value in _passings(values, key):
        if target in values.values(where, caller, value, depth):
            out.extend(_called_through(values, where, caller, callee, slot, depth, 0))
    return out


def _passings(values, name: str) -> List[Tuple[str, str, object, object, object]]:
    """(file, caller, callee, slot, value) of each recorded call that passes a reference
    spelt `name` (its last part) as an argument; syntactic, so kept."""
    memo: Dict[str, list] = values.__dict__.setdefault("_callback_passings", {})
    found = memo.get(name)
    if found is None:
        found = memo[name] = []
        for where in _files_passing(values, name):
            flow = values._flow(where, optional=True)
            if flow is None:
                continue
            for caller in sorted(flow.functions):
                for _last, callee, args, _line in flow.functions[caller].calls:
                    for slot, value in args:
                        if value[0] == "ref" and value[1].lstrip("@").split(".")[-1] == name:
                            found.append((where, caller, callee, slot, value))
    return found


def _files_passing(values, name: str) -> List[str]:
    """The files whose text passes a name ending in `name` as a whole argument (`f(a, name)`,
    `f(step=mod.name)`): the whole pattern only on the files whose text holds the name followed
    by `,` or `)` (call_words.PassedWords, one per project pass): led by `[(,]`, it is tried at
    every parenthesis and comma of the file, and most files that name a function (`def main(`,
    `main()`) never pass it."""
    passed = re.compile(r"[(,]\s*(?:\w+\s*=\s*)?(?:\w+\.)*%s\s*[,)]" % re.escape(name))
    files = values.p.files
    candidates = passed_words(values.p).files_passing(name)
    values.passing_searched = getattr(values, "passing_searched", 0) + len(candidates)  # (tests count)
    return [path for path in candidates if passed.search(files[path])]


def _called_through(values, path: str, key: str, callee, slot, depth: int, hops: int) -> List[Site]:
    """The calls through the parameter of the function `callee` (called in `key` of `path`) that
    the argument at `slot` binds, following it handed on to other functions."""
    out: List[Site] = []
    for thing in values.values(path, key, callee, depth):
        if thing[0] != "func" or "." in thing[2]:
            continue
        flow = values._flow(thing[1], optional=True)
        function = flow.functions.get(thing[2]) if flow is not None else None
        param = _parameter(function, slot) if function is not None else None
        if param is None or param in function.assigns:
            continue  # not bound by this argument, or rebound in the function
        for _last, inner, args, _line in function.calls:
            if inner == ("local", param):
                out.append((thing[1], thing[2], args))
            elif hops < _MAX_HOPS:
                for onward, value in args:
                    if value == ("local", param):
                        out.extend(_called_through(values, thing[1], thing[2], inner, onward, depth, hops + 1))
    return out


def _parameter(function, slot) -> Optional[str]:
    if isinstance(slot, int):
        return function.params[slot] if slot < function.positional else None
    return slot if slot in function.params else None


def passed_words(project) -> PassedWords:
    """The project pass's PassedWords (kept on the project, dropped with it)."""
    found = project.__dict__.get("_passed_words")
    if found is None:
        found = project.__dict__["_passed_words"] = PassedWords(project.python, project.files, project)
    return found
