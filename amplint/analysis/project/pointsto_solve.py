"""The points-to solver: the constraints of every module (pointsto_extract.py), solved together by a
worklist to a fixpoint.

Each constraint, when evaluated, reads nodes through `get` (which records that the constraint
depends on them) and writes through `add`; a node that grows puts its readers back on the
worklist. Calls bind arguments to parameters and returns to the call's node as they are
discovered, so the call graph and the values are computed together (as in PyCG, but by
constraints rather than by re-walking the code). Sets are bounded: a node holds at most
MAX_VALUES functions, classes and instances and MAX_DATA containers, literals and outside values;
beyond that it keeps the first ones (a documented loss of recall).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Dict, Iterable, List, Optional, Set, Tuple

from amplint.analysis.project import pointsto_builtins as lib
from amplint.analysis.project.pointsto_atoms import FULL_DTYPES, HALF_DTYPES, OPEN
from amplint.analysis.project.pointsto_classes import Classes
from amplint.analysis.project.pointsto_containers import Containers
from amplint.analysis.project.pointsto_copies import Copies, Imports

MAX_VALUES = 64  # functions, classes, instances, modules a node may hold (beyond: the first ones)
MAX_DATA = 16  # containers, literals, outside values: they matter less and multiply faster
_DATA = frozenset("LDWSNERXO")
_EMPTY: frozenset = frozenset()
_CLONE = re.compile(r"@[dsg]\d+")
_MAX_STRINGS, _MAX_STRING = 16, 64  # the strings one format may make, and their length
_INSTANCE_CALL = ("__call__", "forward")


class Solver(Classes, Containers, Copies, Imports):
    def __init__(self, modules: Iterable[dict], atoms: bool = False) -> None:
        self.atoms = atoms  # calls to outside code may return atoms (pointsto_atoms.py)
        self.modules: Dict[str, dict] = {m["module"]: m for m in modules}
        self.funcs: Dict[str, dict] = {}
        self.classes: Dict[str, dict] = {}
        self.cons: List[tuple] = []
        for info in self.modules.values():
            offset = len(self.cons)
            for name, func in info["funcs"].items():
                self.funcs[name] = dict(func, span=(func["span"][0] + offset, func["span"][1] + offset),
                                        guards=[(p, w, a + offset, b + offset) for p, w, a, b in func.get("guards", ())])
            self.classes.update(info["classes"])
            self.cons.extend(info["cons"])
        self.vals: Dict[str, Set[str]] = {}
        self._ndata: Dict[str, int] = {}  # how many data values (_DATA) each node holds
        self.readers: Dict[str, Set[int]] = {}
        self.edges: Set[Tuple[str, str]] = set()
        self.site_callees: Dict[str, Set[str]] = {}
        # per call site *and copy* of its caller (for the project pass, pointsto_reach.py): the
        # callees, and the callee's and the arguments' nodes (read once solved: is one of them
        # full or does it hold the unknown outside value?)
        self.site_calls: Dict[Tuple[str, str], Set[str]] = {}
        self.site_nodes: Dict[Tuple[str, str], Tuple[str, Tuple[str, ...]]] = {}
        self.full: Set[str] = set()  # nodes that dropped a value at their bound
        self.partials: Dict[str, tuple] = {}
        self.dict_defaults: Dict[str, str] = {}  # a defaultdict's box -> "L:"/"D:", its factory's kind
        self._partials_open: Set[str] = set()
        self._copies: Dict[str, int] = {}
        self.invoked: Set[str] = set()  # the functions (and copies) some call ran
        self._known_tags: Dict[tuple, int] = {}  # parameters known None -> the copies' tag
        self._nested: Dict[str, List[str]] = {}
        for func in self.funcs:
            parts = func.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent in self.funcs:
                    self._nested.setdefault(parent, []).append(func)
        self._mro: Dict[str, Tuple[List[str], List[str]]] = {}
        self._base_nodes = {n for info in self.classes.values() for n in info["bases"]}
        self._cur = -1
        self._queue: deque = deque()
        self._queued: Set[int] = set()
        for name in self.modules:
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.vals.setdefault("M:%s#%s" % (".".join(parts[:i]), parts[i]), set()).add("M:" + ".".join(parts[: i + 1]))
        self._star_exports()

    # -- the worklist --------------------------------------------------------------------------
    def get(self, node: str) -> Set[str]:
        if self._cur >= 0:
            readers = self.readers.get(node)
            if readers is None:
                self.readers[node] = {self._cur}
            else:
                readers.add(self._cur)
        return self.vals.get(node, _EMPTY)

    def add(self, node: str, values: Iterable[str]) -> None:
        have = self.vals.get(node)
        if have is None:
            have = self.vals[node] = set()
        elif have.issuperset(values):
            return
        before = len(have)
        data = self._ndata.get(node, 0)
        if before + len(values) > min(MAX_VALUES, MAX_DATA):
            values = sorted(values)  # which values a full node keeps must not follow string hashing
        for value in values:
            if value in have:
                continue
            if value[0] in _DATA:
                if data >= MAX_DATA:
                    self.full.add(node)
                    continue
                data += 1
            elif len(have) >= MAX_VALUES:
                self.full.add(node)
                continue
            have.add(value)
        if len(have) != before:
            self._ndata[node] = data
            if node in self._base_nodes:
                self._mro.clear()
            if node.startswith("D:") and "#[" in node and not node.endswith("#[**]"):
                box, key = node.rsplit("#[", 1)
                self.add(box + "#keys", ("K:" + key[:-1],))
            for reader in self.readers.get(node, ()):
                if reader not in self._queued:
                    self._queued.add(reader)
                    self._queue.append(reader)

    def solve(self) -> "Solver":
        """Two rounds: in the first, an index whose key node is still empty waits (its key may yet
        arrive as a literal); in the second, the ones still waiting read every element."""
        self.waiting: Set[int] = set()
        self.final = False
        self._queue.extend(range(len(self.cons)))
        self._queued = set(range(len(self.cons)))
        while True:
            while self._queue:
                index = self._queue.popleft()
                self._queued.discard(index)
                self._cur = index
                con = self.cons[index]
                getattr(self, "_" + con[0])(*con[1:])
            if self.final or not self.waiting:
                break
            self.final = True
            self._queue.extend(sorted(self.waiting))
            self._queued = set(self.waiting)
        self._cur = -1
        return self

    def bind(self, value: str, receiver: str) -> Optional[str]:
        """A class attribute read through an instance ("I:c") or the class ("C:c")."""
        if not value.startswith("F:"):
            return value
        kind = self.funcs.get(value[2:], {}).get("kind", "function")
        if kind == "static":
            return value
        if kind == "class":
            return "K:%s|%s" % (value[2:], receiver[2:])
        if receiver.startswith("I:"):
            return "B:%s|%s" % (value[2:], receiver[2:])
        return value

    # -- attribute access ----------------------------------------------------------------------
    def attribute(self, value: str, attr: str, caller: Optional[str]) -> Set[str]:
        kind = value[:2]
        out: Set[str] = set()
        if kind in ("I:", "C:") and value[2:] in self.classes:
            out |= self.get(value + "#" + attr) if kind == "I:" else set()
            pairs = self.class_attr(value[2:], attr)
            if self.atoms and pairs and self.outside_before(value[2:], pairs[0][1]):
                out.add(OPEN)  # an outside base before the owner may bind it first
            for found, _owner in pairs:
                if found.startswith("F:") and self.funcs.get(found[2:], {}).get("kind") == "property":
                    if kind == "I:":
                        out |= self.invoke("B:%s|%s" % (found[2:], value[2:]), [], {}, caller, None)
                    continue
                bound = self.bind(found, value)
                if bound:
                    out.add(bound)
            return out
        if kind == "U:":
            inst, after = value[2:].split("|", 1)
            for found, _owner in self.class_attr(inst, attr, after=after):
                bound = self.bind(found, "I:" + inst)
                if bound:
                    out.add(bound)
            return out
        if kind == "E:":
            return {lib.outside(value, "." + attr)}
        if kind == "X:":  # an atom's attribute (`device.type`): not the atom
            return {"E:?"}
        if kind == "O:":  # anything read from what outside code passed
            return {value}
        if kind == "R:":  # a number's or None's (`cfg or Config()`): no value of the path that runs
            return set()
        if kind == "D:" and value.endswith("~modules") and not attr.startswith("_"):
            found = self.get("%s#[%r]" % (value, attr)) | self.get(value + "#[*]")
            return found | {"W:%s|%s" % (value, attr)}
        if kind in ("L:", "D:"):
            return {"W:%s|%s" % (value, attr)}
        if kind in ("M:", "F:", "I:", "C:"):
            return set(self.get(value + "#" + attr))
        return out

    def _load(self, dst: str, base: str, attr: str, caller: str) -> None:
        for value in sorted(self.get(base)):
            self.add(dst, self.attribute(value, attr, caller))

    def _store(self, base: str, attr: str, src: str) -> None:
        values = self.get(src)
        for value in sorted(self.get(base)):
            if value[:2] in ("I:", "C:", "M:", "F:"):
                self.add(value + "#" + attr, values)

    # -- calls ---------------------------------------------------------------------------------
    def _call(self, dst, fn, args, kwargs, star, kwstar, caller, site) -> None:
        arg_sets = [self.get(a) if a else set() for a in args]
        kw_sets = {k: self.get(v) for k, v in kwargs.items()}
        extra = (self.get(star) if star else set(), self.get(kwstar) if kwstar else set())
        if site and caller and (caller, site) not in self.site_nodes:
            nodes = tuple(a for a in args if a) + tuple(kwargs.values()) + tuple(n for n in (star, kwstar) if n)
            self.site_nodes[(caller, site)] = (fn, nodes)
        dead_key = bool(args and args[0] and not arg_sets[0] and self.uncalled_key(args[0]))
        for value in sorted(self.get(fn)):
            if dead_key and value.startswith("W:D:"):
                continue  # `d.get(key)` in a body that runs only as its copies (keys())
            if value.startswith("E:") and site:
                self.add(dst, lib.call_outside(self, value, args, kwargs, caller, site, star))
                continue
            self.add(dst, self.invoke(value, arg_sets, kw_sets, caller, site, extra))

    def edge(self, caller: Optional[str], func: str, site: Optional[str]) -> None:
        if "@" in func:
            func = _CLONE.sub("", func)
        if site and caller:
            self.site_calls.setdefault((caller, site), set()).add(func)
        if caller and "@" in caller:
            caller = _CLONE.sub("", caller)
        if caller:
            self.edges.add((caller, func))
        if site:
            self.site_callees.setdefault(site, set()).add(func)

    def invoke(self, value: str, args: List[Set[str]], kwargs: Dict[str, Set[str]], caller: Optional[str],
               site: Optional[str], extra: Tuple[Set[str], Set[str]] = (set(), set())) -> Set[str]:
        """Calls `value` with these argument values; returns the call's values."""
        kind, name = value[:2], value[2:]
        if kind == "F:" and name in self.funcs:
            info = self.funcs[name]
            known = self.known_none(info, args, kwargs) if site else None
            receiver = self.self_only(info, args) if site else None
            if receiver:
                # a method that returns (part of) `self` alone: one copy per receiver class is as
                # precise as one per call site
                known = dict(known or {}, **{"<self>": receiver})
                name = self.copy_function(name, self.known_tag(known), known) or name
            elif ((info.get("through") or self.keyed_literal(info, args, kwargs)) and site and caller
                  and "@" not in caller and info["span"][1] - info["span"][0] <= 120):
                # a function that returns (part of) an argument, or that files its arguments under
                # a key the call names: a copy per call site, so that it does not hand every
                # caller's argument (or key) to every other caller
                name = self.copy_function(name, "@s%d" % self._cur, known) or name
            elif known:
                # it tests `if p is None` on a parameter this call leaves to None: the copy
                # without the branch that cannot run (one per set of such parameters)
                name = self.copy_function(name, self.known_tag(known), known) or name
            self.edge(caller, name, site)
            self.invoked.add(name)
            self.bind_params(name, args, kwargs, extra)
            if self.funcs[name]["gen"]:
                return {"G:" + name}
            return set(self.get("V:%s#<return>" % name))
        if kind in ("B:", "K:"):
            func, cls = name.split("|", 1)
            receiver = ("I:" if kind == "B:" else "C:") + cls
            return self.invoke("F:" + func, [{receiver}] + list(args), kwargs, caller, site, extra)
        if kind == "C:" and name in self.classes:
            inst = "I:" + name
            inits = self.class_attr(name, "__init__")
            for init, _owner in inits:
                bound = self.bind(init, inst)
                if bound and bound[:2] in ("B:", "F:"):
                    self.invoke(bound, args, kwargs, caller, site, extra)
            fields = self.classes[name].get("fields")
            if not inits and fields:
                for field, values in list(zip(fields, args)) + [(k, v) for k, v in kwargs.items() if k in fields]:
                    self.add("%s#%s" % (inst, field), values)
            return {inst}
        if kind == "I:" and name in self.classes:
            out: Set[str] = set()
            for attr in _INSTANCE_CALL:
                if attr == "forward" and (out or not self.has_outside_base(name)):
                    break
                for found, _owner in self.class_attr(name, attr):
                    bound = self.bind(found, value)
                    if bound:
                        out |= self.invoke(bound, args, kwargs, caller, site, extra)
            return out
        if kind == "Q:" and name in self.partials and value not in self._partials_open:
            fn, p_args, p_kwargs = self.partials[name]
            merged = dict(p_kwargs)
            merged.update(kwargs)
            out = set()
            self._partials_open.add(value)  # partial(partial(...)) cycles through a loop's rebinding
            for target in sorted(fn - {value}):
                out |= self.invoke(target, list(p_args) + list(args), merged, caller, site, extra)
            self._partials_open.discard(value)
            return out
        if kind == "L:" and name.endswith("~sequential") and value not in self._partials_open:
            out = set()
            self._partials_open.add(value)  # a Sequential among its own elements (merged boxes)
            for module in sorted(self.elements(value)):
                out |= self.invoke(module, args, kwargs, caller, site, extra)
            self._partials_open.discard(value)
            return out
        if kind == "W:":
            return lib.container_method(self, name, args, kwargs)
        if kind == "O:":
            return {value}
        return set()

    def bind_params(self, func: str, args: List[Set[str]], kwargs: Dict[str, Set[str]],
                    extra: Tuple[Set[str], Set[str]]) -> None:
        info = self.funcs[func]
        params, vararg, kwarg = info["params"], info["vararg"], info["kwarg"]
        var = lambda p: "V:%s#%s" % (func, p)  # noqa: E731
        for i, values in enumerate(args):
            if i < len(params):
                self.add(var(params[i]), values)
            elif vararg:
                self.add(var(vararg), {"L:%s*" % func})
                self.add("L:%s*#*" % func, values)
        for key, values in kwargs.items():
            if key in params or key in info["kwonly"]:
                self.add(var(key), values)
            elif kwarg:
                self.add(var(kwarg), {"D:%s**" % func})
                self.add("D:%s**#[%r]" % (func, key), values)
                self.add("D:%s**#[**]" % func, values)
        star, kwstar = extra
        for param, node in info.get("defaults", {}).items():  # numbers (pointsto_atoms.py)
            if param not in kwargs and not (param in params and params.index(param) < len(args)):
                self.add(var(param), self.get(node))
        if star:
            items = set().union(*(self.elements(v) for v in star))
            for p in params[len(args):]:
                self.add(var(p), items)
            if vararg:
                self.add(var(vararg), star)
        for box in kwstar:
            if box.startswith("D:"):
                for p in params[len(args):] + info["kwonly"]:
                    self.add(var(p), self.get("%s#[%r]" % (box, p)) | self.get(box + "#[*]"))
                if kwarg:
                    self.add(var(kwarg), {box})

    # -- other bindings ------------------------------------------------------------------------
    def _nop(self) -> None:  # a constraint a copy left out (a branch that cannot run there)
        pass

    def _const(self, dst: str, value: str) -> None:
        self.add(dst, (value,))

    def _format(self, dst: str, parts: List[str]) -> None:
        """`"build_%s" % name`: the strings the parts' literal values make (pointsto_exprs.text),
        when every part holds strings or small ints only, and not too many."""
        made = [""]
        for part in parts:
            choices = [part[2:]] if part.startswith("S:") else None  # literal text; else a node
            if choices is None:
                values = self.get(part)
                if not values or any(v[:2] not in ("S:", "N:") for v in values):
                    return
                choices = sorted(v[2:] for v in values)
            made = [a + b for a in made for b in choices]
            if len(made) > _MAX_STRINGS:
                return
        self.add(dst, {"S:" + m for m in made if len(m) <= _MAX_STRING})

    def _copy(self, dst: str, src: str) -> None:
        self.add(dst, self.get(src))

    def _recast(self, dst: str, src: str, mode: str, atom: str, args: List[str]) -> None:
        """`src.half()` / `.float()` / `.to(...)` / `.cuda()` (pointsto_atoms.cast_kind): the
        receiver's instances and atoms come back; a half cast adds its atom, a cast back to
        float drops every half atom."""
        if mode == "to":
            passed = set().union(*(self.get(a) for a in args)) if args else set()
            mode = "half" if passed & HALF_DTYPES else "full" if passed & FULL_DTYPES else "keep"
        out = {v for v in self.get(src) if v[:2] in ("I:", "X:", "O:") and not (mode == "full" and v.startswith("X:half@"))}
        if mode == "half":
            out.add(atom)
        self.add(dst, out)

    def _decorate(self, dst: str, dec: str, src: str, caller: str) -> None:
        func = self.get(src)
        for value in sorted(self.get(dec)):
            if value.startswith("E:"):
                self.add(dst, func)  # a decorator from outside the project: assumed to keep the function
                if self.atoms:
                    self.add(dst, {"E:?"})  # ... but what the wrapper returns is not known
            else:
                # a decorator that returns itself (detectron2's `configurable` does when called
                # without a function) does not when it is given one: that value is dropped
                info = self.funcs.get(value[2:]) if value.startswith("F:") else None
                if info and info.get("identity"):
                    # every return gives back the function unchanged (timm's `register_model`):
                    # the decorated name keeps its own function, not every function decorated
                    self.invoke(value, [func], {}, caller, None)
                    self.add(dst, func)
                    continue
                copy = self.decorator_copy(value)
                self.add(dst, self.invoke(copy, [func], {}, caller, None) - {copy, value})

    def _super(self, dst: str, self_node: str, cls_node: str) -> None:
        for inst in sorted(self.get(self_node)):
            for cls in sorted(self.get(cls_node)):
                if inst[:2] in ("I:", "C:") and cls.startswith("C:"):
                    self.add(dst, {"U:%s|%s" % (inst[2:], cls[2:])})

    def _inst(self, dst: str, src: str) -> None:
        self.add(dst, {"I:" + v[2:] for v in self.get(src) if v.startswith("C:")})

    def _enter(self, dst: str, src: str, caller: str) -> None:
        for value in sorted(self.get(src)):
            if value.startswith("I:"):
                self.add(dst, self.protocol(value, "__enter__", caller))
                self.protocol(value, "__exit__", caller, [set(), set(), set()])
            elif value.startswith("E:"):
                self.add(dst, {lib.outside(value, ".__enter__()")})
