"""Function copies and imports for the points-to solver (mixins of pointsto_solve.Solver).

Copies: the resolver is context-insensitive, except that a decorator which defines a wrapper is
copied per function it decorates, and a small function that returns (part of) an argument is
copied per call site; a copy's nodes carry a tag ("@d<n>", "@s<n>") that the call graph drops.
Imports: `import`, `from ... import` (a package's own binding wins over a same-named submodule)
and star imports (`__all__`, else public names, through chains of star imports)."""

from __future__ import annotations

from typing import Dict, Optional, Set

MAX_CLONES = 64  # copies of one function per call site
MAX_DECORATED = 1024  # copies of one decorator (one per function it decorates: all, in practice)


class Copies:
    def decorator_copy(self, value: str) -> str:
        """A decorator that defines a wrapper gets a copy of its constraints per decorated function
        (as if inlined), so one wrapper's closure does not merge every function it wraps."""
        name = value[2:]
        info = self.funcs.get(name)
        if not value.startswith("F:") or not info or info["kind"] != "function" or not self._nested.get(name):
            return value
        copy = self.copy_function(name, "@d%d" % self._cur)
        return "F:" + copy if copy else value

    def copy_function(self, name: str, tag: str) -> Optional[str]:
        """The name of a copy of function `name` (and its nested functions) with fresh nodes."""
        copy = name + tag
        if copy in self.funcs:
            return copy
        self._copies[name] = self._copies.get(name, 0) + 1
        if self._copies[name] > (MAX_DECORATED if tag.startswith("@d") else MAX_CLONES) or "@" in name:
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
        for func in [name] + nested:
            low, high = self.funcs[func]["span"]
            self.funcs[copy + func[len(name):]] = dict(self.funcs[func], span=(first + low - start, first + high - start))
        self.cons.extend(rename(con) for con in self.cons[start:end])
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
