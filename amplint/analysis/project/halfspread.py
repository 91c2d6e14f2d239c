"""Where a half cast spreads (the class flow's `half_instances`): from each cast of a value
(`m = Net().half()`, `return m.to(torch.float16)`, `self.model = ...bfloat16()`, and the
statement `model.half()`, which converts the module in place) to every project module the
value may hold, and from a half module to every module it registers: `self.x = value` where
the value holds the module directly, through a container (`nn.ModuleList([...])`,
`nn.Sequential(*blocks)`, `nn.ModuleDict({...})`, a list filled by `.append`, nested), through a
project helper's returns, or through any other carrier the class flow follows (classvalues.py).

Only what may be a module is taken: a class whose bases are all known not to be modules
(`class Cfg:`, `class Cfg(object)`, a `NamedTuple`) is neither converted by `.half()` (as an
attribute or as an element of a plain list) nor has a `.half()` of its own to convert what it
holds. A plain list of modules is not told from an `nn.ModuleList` (the flow facts collapse
both to their elements): it is taken as converted."""

from __future__ import annotations

from typing import Dict, Iterator, List, Tuple

from amplint.analysis.project.flowindex import thing_order
from amplint.analysis.project.flowvalues import CONTAINERS, STATEMENT_CASTS
_MAX_NESTING = 4  # containers in containers (`nn.Sequential(nn.Sequential(...))`)
# bases that are no nn.Module (a class of torch.utils.data has no `.to`/`.half`: a Dataset is
# never the value a cast turned half, even where a registry build merges it with the models)
_NOT_MODULE_BASES = ("?object", "typing.", "abc.", "enum.", "collections.", "dataclasses.",
                     "torch.utils.data.")

Half = Dict[Tuple[str, str], Tuple[str, str, str]]  # (file, class) -> (dtype, cite, file of the cast)


def casts(facts, statements: bool, undone=None) -> Iterator[Tuple[str, object, str]]:
    """(function key, value cast, dtype) for each half cast of a file's flow facts, in order:
    the casts whose value is kept (`m = Net().half()`), or (`statements`) those written as a
    statement (`model.half()`), which the class flow evaluates after all the others so that
    the files they send to the parser cannot take the budget (flowindex.py) from the first.
    `undone(key, line)` says a statement cast is undone by the next statement
    (half_inplace.undone_at_once): no half model."""
    for key in sorted(facts.functions):
        function = facts.functions[key]
        if statements:
            for receiver, attr, _text, line in function.dynamic:
                if attr in STATEMENT_CASTS and not (undone is not None and undone(key, line)):
                    yield key, receiver, STATEMENT_CASTS[attr]
            continue
        values = [v for vs in function.assigns.values() for v in vs] + list(function.returns)
        values += [v for _, v in function.stores]
        for value in values:
            for half in _halves(value):
                yield key, half[1], half[2]
    for key, receiver, attr, _text, _line, _ in (facts.roots if statements else ()):
        if attr in STATEMENT_CASTS:  # under the file's own region
            yield key, receiver, STATEMENT_CASTS[attr]


def modules_held(flow, held, depth: int = 0) -> List[Tuple[tuple, object, bool]]:
    """(instance, hold, in a container) for each project instance `held` holds, directly or as
    an element of the containers it holds (sorted)."""
    out: List[Tuple[tuple, object, bool]] = []
    for thing, hold in sorted(held.items(), key=thing_order):
        if thing[0] == "inst" and may_be_module(flow, thing[1], thing[2]):
            out.append((thing, hold, depth > 0))
        elif thing[0] == "tup" and depth < _MAX_NESTING:
            for item in thing[3]:
                for inner, inner_hold, _ in modules_held(flow, flow.values(thing[1], thing[2], item), depth + 1):
                    out.append((inner, inner_hold, True))
    return out


def may_be_module(flow, path: str, cls: str, seen: int = 0) -> bool:
    """False only when every base of the class is known not to be a module."""
    summary = flow.p.summary(path)
    if summary is None or cls not in summary.classes or seen > 8:
        return True
    for base in summary.classes[cls].bases:
        if base.startswith(_NOT_MODULE_BASES):
            continue
        found = flow.p.resolve_ref(path, base)
        if found is None or len(found[1]) != 1:
            return True  # torch's, or a library's: may be a module
        if may_be_module(flow, found[0], found[1][0], seen + 1):
            return True
    return False


def submodules(flow, path: str, cls: str) -> List[Tuple[Tuple[str, str], str]]:
    """((file, class), how) for the project modules class `cls` registers in its methods'
    `self.x = ...` stores: how is "" for a module stored directly, else "in `self.x`"."""
    summary = flow.p.summary(path)
    facts = flow._flow(path)
    if summary is None or facts is None or cls not in summary.classes:
        return []
    found: Dict[Tuple[str, str], str] = {}
    for method in summary.classes[cls].methods:
        key = f"{cls}.{method}"
        function = facts.functions.get(key)
        for attr, value in (function.stores if function is not None else ()):
            for thing, _, contained in modules_held(flow, flow.values(path, key, value)):
                how = f"in `self.{attr}`" if contained else ""
                sub = (thing[1], thing[2])
                if sub not in found or (found[sub] and not how):
                    found[sub] = how
    if _torch_container(flow, path, cls):
        for sub in _constructed_with(flow, path, cls):
            found.setdefault(sub, "")
    return sorted(found.items())


def _torch_container(flow, path: str, cls: str, seen: int = 0) -> bool:
    """A project subclass of `nn.Sequential`/`ModuleList`/`ModuleDict` that keeps torch's
    constructor (guided-diffusion's `TimestepEmbedSequential(nn.Sequential, TimestepBlock)`)."""
    summary = flow.p.summary(path)
    if summary is None or cls not in summary.classes or seen > 8:
        return False
    if seen == 0 and flow.p.method(path, cls, "__init__") is not None:
        return False
    for base in summary.classes[cls].bases:
        if base in CONTAINERS or base.startswith("torch.nn.modules.container."):
            return True
        found = flow.p.resolve_ref(path, base)
        if found is not None and len(found[1]) == 1 and _torch_container(flow, found[0], found[1][0], seen + 1):
            return True
    return False


def _constructed_with(flow, path: str, cls: str) -> List[Tuple[str, str]]:
    """The project modules passed to the constructor of container class `cls` at its call
    sites in the linted files (`TimestepEmbedSequential(ResBlock(...), AttentionBlock(...))`;
    a starred argument is not recorded, so `TimestepEmbedSequential(*layers)` gives none)."""
    found: List[Tuple[str, str]] = []
    for where, caller, callee, args, _line in flow._call_sites(cls, ("class", path, cls)):
        if ("class", path, cls) not in flow.values(where, caller, callee):
            continue
        for slot, value in args:
            if not isinstance(slot, int):
                continue
            for thing, _, _ in modules_held(flow, flow.values(where, caller, value)):
                if (thing[1], thing[2]) not in found:
                    found.append((thing[1], thing[2]))
    return found


def spread(flow, out: Half) -> Half:
    """`.half()` converts the submodules too, wherever they are defined."""
    pending = sorted(out)
    while pending:
        cpath, cls = pending.pop()
        dtype, cite, where = out[(cpath, cls)]
        for sub, how in submodules(flow, cpath, cls):
            if sub not in out:
                held = f", {how} of {cls}" if how else f", as a submodule of {cls}"
                out[sub] = (dtype, f"{cite}{held}", where)
                pending.append(sub)
    return out


def _halves(value):
    if type(value) is not tuple or not value:
        return
    if value[0] == "half":
        yield value
    for item in value[1:]:
        if type(item) is tuple:
            yield from _halves(item)
