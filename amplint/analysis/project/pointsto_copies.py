"""Function copies and imports for the points-to solver (mixins of pointsto_solve.Solver).

Copies: the resolver is context-insensitive, except that a decorator which defines a wrapper is
copied per function it decorates, and a small function that returns (part of) an argument, or
that uses a parameter as a dict key and is given a literal for it, is copied per call site; a
copy's nodes carry a tag ("@d<n>", "@s<n>") that the call graph drops.
Imports: `import`, `from ... import` (a package's own binding wins over a same-named submodule)
and star imports (`__all__`, else public names, through chains of star imports)."""

from __future__ import annotations

import re
from typing import Dict, Optional, Set

MAX_CLONES = 64  # copies of one function per call site
_PER_USE = re.compile(r"@[sd]\d")
MAX_DECORATED = 1024  # copies of one decorator (one per function it decorates: all, in practice)


class Copies:
    def decorator_copy(self, value: str) -> str:
        """A decorator that defines a wrapper gets a copy of its constraints per decorated function
        (as if inlined), so one wrapper's closure does not merge every function it wraps."""
        name = value[2:]
        info = self.funcs.get(name)
        if not value.startswith("F:") or not info or info["kind"] != "function":
            return value
        # its first parameter holds the function it decorates: not None
        known = {info["params"][0]: False} if info["params"] else {}
        if not self._nested.get(name) and not any(g[0] in known for g in info.get("guards", ())):
            return value
        copy = self.copy_function(name, "@d%d" % self._cur, known)
        return "F:" + copy if copy else value

    def known_none(self, info: dict, args: list, kwargs: dict) -> Optional[Dict[str, bool]]:
        """Parameters that a None test guards and that this call leaves to their default None (only
        for a call without *args/**kwargs, whose arguments are all known)."""
        guarded = {g[0] for g in info.get("guards", ())}
        if not guarded or not info.get("none"):
            return None
        con = self.cons[self._cur] if self._cur >= 0 else None
        if con is None or con[0] != "call" or con[5] or con[6]:
            return None
        params = info["params"]
        known = {p: True for p in info["none"] if p in guarded and p not in kwargs
                 and not (p in params and params.index(p) < len(args))}
        return known or None

    def self_only(self, info: dict, args: list) -> Optional[str]:
        """The receiver of a method call whose method returns only (part of) `self`, when it is one
        instance or class."""
        through = info.get("through")
        if (not through or not info["cls"] or info["kind"] == "static" or through != info["params"][:1]
                or not args or len(args[0]) != 1):
            return None
        (receiver,) = args[0]
        return receiver if receiver[:2] in ("I:", "C:") else None

    @staticmethod
    def keyed_literal(info: dict, args: list, kwargs: dict) -> bool:
        """A call that gives a parameter the function uses as a key (`self.callbacks[event]`)
        literal strings or small ints only: a copy per call site keeps each key's values apart."""
        params = info["params"]
        for param in info.get("keyed", ()):
            i = params.index(param) if param in params else -1
            values = args[i] if 0 <= i < len(args) else kwargs.get(param)
            if values and all(v[:2] in ("S:", "N:") for v in values):
                return True
        return False

    def known_tag(self, known: Dict[str, object]) -> str:
        key = tuple(sorted(known.items()))
        return "@g%d" % self._known_tags.setdefault(key, len(self._known_tags))

    def copy_function(self, name: str, tag: str, known: Optional[Dict[str, bool]] = None) -> Optional[str]:
        """The name of a copy of function `name` (and its nested functions) with fresh nodes.
        `known`: parameter -> whether it is None here; the branches of `name`'s None tests that
        cannot run then are left out of the copy."""
        copy = name + tag
        if copy in self.funcs:
            return copy
        self._copies[name] = self._copies.get(name, 0) + 1
        # no copy of a per-site or per-decoration copy; the shared copies without a dead branch
        # ("@g") are copied as their originals are
        if self._copies[name] > (MAX_DECORATED if tag.startswith("@d") else MAX_CLONES) or _PER_USE.search(name):
            return None
        nested = self._nested.get(name, [])

        def rename(item):
            if isinstance(item, str):
                if item.startswith("T:"):
                    return item + tag
                for prefix in ("V:", "F:", ""):
                    cut = len(prefix) + len(name)
                    if item.startswith(prefix + name) and item[cut:cut + 1] in ("#", ".", ""):
                        return prefix + copy + item[cut:]
                return item
            if isinstance(item, (list, tuple)):
                return type(item)(rename(x) for x in item)
            if isinstance(item, dict):
                return {k: rename(v) for k, v in item.items()}
            return item

        start, end = self.funcs[name]["span"]
        first = len(self.cons)
        shift = first - start
        for func in [name] + nested:
            self._nested[copy + func[len(name):]] = [copy + n[len(name):] for n in self._nested.get(func, ())]
            low, high = self.funcs[func]["span"]
            guards = [(p, w, a + shift, b + shift) for p, w, a, b in self.funcs[func].get("guards", ())]
            self.funcs[copy + func[len(name):]] = dict(self.funcs[func], span=(low + shift, high + shift), guards=guards)
        known = known or {}
        dead = [(a, b) for p, w, a, b in self.funcs[name].get("guards", ()) if p in known and known[p] != w]
        info = self.funcs[name]
        # a copy for one receiver: `self` holds that receiver only (not also its own class's instance)
        own_self = ("V:%s#%s" % (name, info["params"][0]), "I:" + info["cls"]) if "<self>" in known else None
        self.cons.extend(("nop",) if any(a <= i < b for a, b in dead) or (own_self and self.cons[i][1:] == own_self
                                                                          and self.cons[i][0] == "const")
                         else rename(self.cons[i]) for i in range(start, end))
        for index in range(first, len(self.cons)):
            self._queued.add(index)
            self._queue.append(index)
        return copy


class Imports:
    def _import(self, dst: str, module: str, top: bool) -> None:
        name = module.split(".")[0] if top else module
        known = name in self.modules or any(m.startswith(name + ".") for m in self.modules)
        self.add(dst, {("M:" if known else "E:") + name})

    def _importfrom(self, dst: str, module: str, name: str) -> None:
        full = "%s.%s" % (module, name) if module else name
        bound = module in self.modules and name in self.modules[module]["globals"]
        if full in self.modules and not bound:  # a package's own binding wins over its submodule
            self.add(dst, {"M:" + full})
        elif module in self.modules:
            self.add(dst, self.get("M:%s#%s" % (module, name)))
        else:
            self.add(dst, {"E:" + full})

    def _star(self, module: str, source: str) -> None:
        for name in self.exports.get(source, ()):
            self.add("M:%s#%s" % (module, name), self.get("M:%s#%s" % (source, name)))

    def _star_exports(self) -> None:
        self.exports: Dict[str, Set[str]] = {}
        for name, info in self.modules.items():
            names = info["all"] if info["all"] is not None else [g for g in info["globals"] if not g.startswith("_")]
            self.exports[name] = set(names)
        stars = [(c[1], c[2]) for c in self.cons if c[0] == "star"]
        changed = True
        while changed:
            changed = False
            for module, source in stars:
                if self.modules[module]["all"] is None and source in self.exports:
                    new = self.exports[source] - self.exports[module]
                    if new:
                        self.exports[module] |= new
                        changed = True
