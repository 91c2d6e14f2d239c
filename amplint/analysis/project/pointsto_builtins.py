"""What calls to code outside the project do to project values: builtins that call or carry their
arguments (map, filter, sorted, functools.partial/reduce, getattr, setattr, iter, next, list,
zip, enumerate, type, importlib.import_module), and the methods of the containers the resolver
models (list.append, dict.update, dict.items, ...). Every other outside call returns an opaque
outside value ("E:<dotted>()"), so an outside decorator keeps the function it decorates."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from amplint.analysis.project.pointsto_atoms import DEVICE_FACTORIES

_MAX_NAME = 120
_CALLS_ITS_ARGUMENT = {"map", "filter", "functools.reduce", "reduce", "itertools.starmap"}
_CARRIES = {"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "enumerate", "zip",
            "itertools.chain", "copy.copy", "copy.deepcopy", "collections.deque", "itertools.product"}
# torch's module containers hold the modules they are given; a Sequential calls each in turn
_MODULE_CONTAINERS = (".ModuleList", ".Sequential")
_PAIRS = {"enumerate", "zip", "itertools.product"}  # their elements are tuples: a box per call
# the factories of a defaultdict whose missing keys get an empty container the resolver models
_DEFAULT_FACTORIES = {"list": "L:", "set": "L:", "collections.deque": "L:", "deque": "L:", "dict": "D:",
                      "collections.OrderedDict": "D:", "OrderedDict": "D:"}


def outside(value: str, suffix: str) -> str:
    """An outside value's attribute ("E:torch.nn" + ".Module"); what an outside call returns, and
    anything read from it, is the one opaque outside value "E:?"."""
    if value == "E:?" or suffix.endswith("()"):
        return "E:?"
    name = value + suffix
    return name if len(name) <= _MAX_NAME else "E:?"


def _name(value: str) -> str:
    name = value[2:]
    return name[9:] if name.startswith("builtins.") else name


def call_outside(solver, value: str, args: List[Optional[str]], kwargs: Dict[str, str], caller: str,
                 site: str, star: Optional[str] = None) -> Set[str]:
    name = _name(value)
    if solver.atoms and name in DEVICE_FACTORIES:
        return {"X:device@" + site}  # "X:device@<module>:<line>:<column>"
    arg_sets = [solver.get(a) if a else set() for a in args]
    kw_sets = {k: solver.get(v) for k, v in kwargs.items()}
    if name in ("functools.partial", "partial") and arg_sets:
        solver.partials[site] = (arg_sets[0], arg_sets[1:], kw_sets)
        return {"Q:" + site}
    if name in _CALLS_ITS_ARGUMENT or name.endswith(".map"):
        box = "L:%s~map" % site
        for i, callees in enumerate(arg_sets):
            items = [set().union(*(solver.elements(v) for v in others))
                     for j, others in enumerate(arg_sets) if j != i]
            for callee in sorted(callees):
                if callee[:2] in ("F:", "B:", "K:", "C:", "Q:", "I:"):
                    solver.add(box + "#*", solver.invoke(callee, items, {}, caller, site))
            if name == "filter":
                solver.add(box + "#*", set().union(*(solver.elements(v) for v in callees)))
        return {box}
    if name.endswith(".ModuleDict"):  # a dict whose keys are also attributes
        box = "D:%s~modules" % site
        for values in arg_sets:
            for v in values:
                if v.startswith("D:"):
                    for key in solver.get(v + "#keys"):
                        solver.add("%s#[%s]" % (box, key[2:]), solver.get("%s#[%s]" % (v, key[2:])))
                    for field in ("[*]", "[**]"):
                        solver.add("%s#%s" % (box, field), solver.get("%s#%s" % (v, field)))
        return {box}
    if name.endswith(_MODULE_CONTAINERS):
        box = "L:%s~%s" % (site, "sequential" if name.endswith(".Sequential") else "modules")
        for values in arg_sets + ([set().union(*(solver.elements(v) for v in solver.get(star)))] if star else []):
            for v in values:
                if v[:2] in ("L:", "D:"):
                    solver.add(box + "#*", solver.elements(v) | solver.get(v + "#[**]"))
                else:
                    solver.add(box + "#*", {v})
        return {box}
    if name in _CARRIES:
        box = "L:%s~%s" % (site, name)
        items = set()
        for values in arg_sets:
            for v in values:
                items |= solver.elements(v) | (solver.get(v + "#[**]") if v.startswith("D:") else set())
        if name in _PAIRS:
            solver.add(box + "#*", {box + "~pair"})
            solver.add(box + "~pair#*", items)
        else:
            solver.add(box + "#*", items)
        for key in kw_sets.get("key", ()):
            solver.invoke(key, [items], {}, caller, site)
        return {box}
    if name == "next" and arg_sets:
        out: Set[str] = set()
        for v in arg_sets[0]:
            out |= solver.elements(v)
            if v.startswith("I:"):
                out |= solver.protocol(v, "__next__", caller)
        return out
    if name in ("getattr", "setattr", "hasattr") and len(arg_sets) >= 2:
        out = set()
        for attr in sorted(arg_sets[1]):
            if attr.startswith("S:"):
                for obj in sorted(arg_sets[0]):
                    if name == "getattr":
                        out |= solver.attribute(obj, attr[2:], caller)
                    elif name == "setattr" and len(arg_sets) > 2 and obj[:2] in ("I:", "C:", "M:", "F:"):
                        solver.add("%s#%s" % (obj, attr[2:]), arg_sets[2])
        if name == "getattr" and len(arg_sets) > 2:
            out |= arg_sets[2]
        return out
    if name == "type" and len(arg_sets) == 1:
        return {"C:" + v[2:] for v in arg_sets[0] if v.startswith("I:")}
    if name == "property":
        # a property object: reading it through an instance runs the getter, it is not the
        # getter (`setattr(Trainer, name, property(lambda self: ...))` in detectron2); a
        # `@property` def is read as one (`kind` "property"), a call of `property(...)` as nothing
        return set()
    if name in ("staticmethod", "classmethod", "functools.wraps", "functools.lru_cache") and arg_sets:
        return set(arg_sets[0]) if name != "functools.wraps" else {outside(value, "()")}
    if name in ("collections.defaultdict", "defaultdict"):
        # a dict whose subscript of a missing key files an empty container under it
        # (Containers.default_box); kept only when the factory is one container type
        box = "D:%s~defaultdict" % site
        kinds = {_DEFAULT_FACTORIES.get(_name(v)) if v.startswith("E:") else None for v in arg_sets[0]} \
            if arg_sets and arg_sets[0] else {None}
        if len(kinds) == 1 and None not in kinds:
            solver.dict_defaults[box] = kinds.pop()
        return {box}
    if name == "dict":
        box = "D:%s~dict" % site
        for k, values in kw_sets.items():
            solver.add("%s#[%r]" % (box, k), values)
            solver.add(box + "#[**]", values)
        for values in arg_sets:
            for v in values:
                if v.startswith("D:"):
                    solver.add(box + "#[*]", solver.get(v + "#[**]"))
                    solver.add(box + "#[**]", solver.get(v + "#[**]"))
        return {box}
    if name == "importlib.import_module" and arg_sets:
        return {"M:" + v[2:] for v in arg_sets[0] if v.startswith("S:") and v[2:] in solver.modules}
    return {outside(value, "()")}


def _per_key(solver, value: str, key: str) -> str:
    if value[:2] not in ("L:", "D:") or "~[" in value:
        return value
    box = "%s~[%r]" % (value, key)
    for field in ("*", "+", "[*]", "[**]"):
        solver.add("%s#%s" % (box, field), solver.get("%s#%s" % (value, field)))
    return box


def container_method(solver, name: str, args: List[Set[str]], kwargs: Dict[str, Set[str]]) -> Set[str]:
    box, method = name.rsplit("|", 1)
    if box.startswith("L:"):
        if method in ("append", "add", "insert", "appendleft"):
            if args:
                solver.add(box + "#*", args[-1])
                solver.add(box + "#+", args[-1])
        elif method in ("extend", "update"):
            for values in args:
                items = set().union(*(solver.elements(v) for v in values))
                solver.add(box + "#*", items)
                solver.add(box + "#+", items)
        elif method in ("pop", "popleft", "__getitem__"):
            return solver.elements(box)
        elif method == "copy":
            return {box}
        return set()
    if method in ("update", "setdefault", "get", "pop", "items", "values", "copy"):
        if method == "update":
            for values in args:
                for v in values:
                    if v.startswith("D:"):
                        solver.add(box + "#[*]", solver.get(v + "#[**]"))
                        solver.add(box + "#[**]", solver.get(v + "#[**]"))
            for k, values in kwargs.items():
                solver.add("%s#[%r]" % (box, k), values)
                solver.add(box + "#[**]", values)
            return set()
        if method == "setdefault" and len(args) > 1:
            # filed under its key when the key is known (literals only), else under any key
            # (no key value yet, or none ever: a body no call runs as itself, files nothing)
            known = [v[2:] for v in args[0]] if all(v[:2] == "S:" for v in args[0]) else ["*"]
            for key in known:
                field = "%s#[%s]" % (box, key if key == "*" else repr(key))
                # the default's container is one per key (`setdefault(event, []).append(fn)` in a
                # method: its `[]` is one box for every key the method is given)
                defaults = {_per_key(solver, v, key) for v in args[1]} if key != "*" else args[1]
                solver.add(field, defaults)
                solver.add(box + "#[**]", defaults)
        if method in ("items", "values"):
            out = "L:%s~%s" % (box, method)
            if method == "items":
                solver.add(out + "#*", {out + "~pair"})
                out += "~pair"
            solver.add(out + "#*", solver.get(box + "#[**]"))
            return {"L:%s~%s" % (box, method)}
        if method == "copy":
            return {box}
        keys = [v[2:] for v in (args[0] if args else ()) if v.startswith("S:")]
        found = set(solver.get(box + "#[*]"))
        if keys:
            for key in keys:
                found |= solver.get("%s#[%r]" % (box, key))
        else:
            found |= solver.get(box + "#[**]")
        if method in ("get", "pop") and len(args) > 1:
            found |= args[1]
        return found
    return set()
