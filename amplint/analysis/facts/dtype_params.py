"""Parameters bound at call sites, for amplint.analysis.facts.dtypes: with
`def _head(x): return x.float().softmax(-1)` called only as `_head(h.half())` and `_head(y)`,
`x` holds the join of what every call passes. Context-insensitive, and only where every call
site is visible in the file:

- a module-level function whose name is private (`_head`), bound once;
- a module-level public function (`march`), bound once, every call of which in the file runs
  under the one region the function inherits from them: other files may call it too, unseen, so
  the value is what it holds on every path through THIS file's region (each a path that exists,
  and the one a finding cites: "a float16 value of the autocast region at line 11"), not on
  every path. Hence it is never `certain` (below): another file may run it outside the region.
  Outside any region (a `.half()` value passed) it is not bound: nothing there to cite;
- a function defined inside another function, bound once there;
- a private method (`_head`) of a class of the file whose bases are `nn.Module`, `object` or
  such classes of the file, called only as `self._head(...)` in that class's own methods, not one
  of `nn.Module`'s own private methods (torch calls those) nor defined by another class here.

- a module's `forward`, called through the file's instances of its class
  (amplint.analysis.facts.dtype_forwards).

A function every call of which surely runs under the region it inherits (each inside a literal
enabled `with`, or in such a function) surely runs under it too: `self.conv(x)` there is the
region's dtype, not that or float32 (DtypeFacts.region_state).

No decorator, no `*args`/`**kwargs`, not async. Every other mention of the name (a value passed
on, a string such as `__all__` or `getattr(m, "_head")`, a local of the same name anywhere in the
file) leaves the parameters unknown. A function run under a region only some of its callers
open, or one `autocast-modules` declares (its callers are elsewhere), is not bound either.
Another file that imports a private name, or subclasses the class and calls the method, is not
seen: the convention that `_name` is the file's own is trusted.

The walk records, at each call site it reads, the values bound to the parameters; the fact then
reads the file again with those values, until they stop changing (at most MAX_ROUNDS readings).
Each reading is sound given the previous one's values, so the last one is."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data.dtype_rules import MODULE_PRIVATE_METHODS
from amplint.analysis.data.module_attrs import MODULE_ATTRS
from amplint.analysis.facts.dtype_value import Dtype, InstanceValue, assigned_names, join, join_values
from amplint.analysis.facts.local_callers import called_here
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.tree import Frame, iter_nodes

MAX_ROUNDS = 3
_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module")


class Bindings:
    """The file's bindable functions and, per reading, what their call sites pass."""

    def __init__(self, dtypes) -> None:
        self.dtypes = dtypes
        self.by_name: Dict[str, Frame] = {}  # bare name -> function (module-level or nested)
        self.methods: Dict[Tuple[int, str], Frame] = {}  # (id(class frame), name) -> method
        self.expected: Dict[int, int] = {}  # id(function frame) -> its call sites in the file
        self.sites: Dict[int, Dict[int, Tuple[Optional[dict], object]]] = {}
        self.seeds: Dict[int, Dict[str, Dtype]] = {}
        # id(function frame) -> id(call) -> whether that call surely runs under its region
        self.sure: Dict[int, Dict[int, bool]] = {}
        # functions every call of which surely runs under the region they inherit: code there
        # surely runs under it too (DtypeFacts.region_state), as of the last reading
        self.certain: Set[int] = set()
        self.next_certain: Set[int] = set()
        self.public: Set[int] = set()  # public module-level functions: other files may call them
        # id(function frame) -> id(call) -> (the call, whether it is `self.<name>(...)`): the
        # calls the readings recorded, for the facts that ask what each passes
        # (amplint.analysis.facts.escape_params)
        self.calls: Dict[int, Dict[int, Tuple[cst.Call, bool]]] = {}
        self._classes: Optional[Dict[str, List[Frame]]] = None  # class name -> its frames
        self._find()
        from amplint.analysis.facts.dtype_forwards import find_forwards

        # module instances' `forward` (amplint.analysis.facts.dtype_forwards)
        self.by_attr, self.by_class, self.by_instance, expected = find_forwards(self)
        self.expected.update(expected)

    # -- which functions ------------------------------------------------------------------
    def _find(self) -> None:
        facts = self.dtypes.facts
        frames = facts.tree.frames
        defined: Dict[str, int] = {}
        for frame in frames:
            if frame.kind == "function":
                defined[frame.node.name.value] = defined.get(frame.node.name.value, 0) + 1
        # the functions the rules below could accept, from the frames alone: the file's nodes
        # are read only when there is one, and then once, for their names only (issue 34)
        candidates: List[Tuple[Frame, Frame]] = []
        # public names no other project file mentions (facts/local_callers.py): bound as private
        here = called_here(facts.entries)
        for frame in frames:
            if frame.kind != "function" or not _plain(frame.node):
                continue
            name = frame.node.name.value
            owner = frame.parent.scope if frame.parent is not None else None
            if owner is None or defined.get(name) != 1:
                continue
            if owner.kind == "class":
                if name in MODULE_PRIVATE_METHODS or not _private(name) and (
                        name not in here or name in MODULE_ATTRS or name == "forward"):
                    continue
            elif owner.kind == "module":
                if name.startswith("__"):
                    continue
            elif owner.kind != "function":
                continue
            candidates.append((frame, owner))
        if not candidates:
            return
        wanted = {frame.node.name.value for frame, _ in candidates}
        strings, funcs, names, attrs = _mentions(facts.module, wanted)
        body_counts: Dict[int, Dict[str, int]] = {}  # id(function frame) -> its names' bindings
        for frame, owner in candidates:
            name = frame.node.name.value
            if name in strings:
                continue
            refs = [n for n in names.get(name, ()) if n is not frame.node.name]
            if owner.kind == "class":
                if refs or not self._module_class(owner, set()):
                    continue
                sites = attrs.get(name, ())
                if any(id(a) not in funcs or not _is_self(a.value) for a in sites):
                    continue
                self.methods[(id(owner), name)] = frame
                self.expected[id(frame)] = len(sites)
                continue
            if attrs.get(name):
                continue
            if owner.kind == "module":
                if self.dtypes.module_counts().get(name) != 1:
                    continue
            else:
                counts = body_counts.get(id(owner))
                if counts is None:
                    counts = body_counts[id(owner)] = _counts(assigned_names(owner.node.body))
                if counts.get(name) != 1:
                    continue
            if any(id(n) not in funcs for n in refs):
                continue  # passed on as a value: callers unseen
            if owner.kind == "module" and not _private(name) and not refs:
                continue  # a public function this file never calls: only other files' calls
            self.by_name[name] = frame
            self.expected[id(frame)] = len(refs)
            if owner.kind == "module" and not _private(name) and name not in here:
                self.public.add(id(frame))

    def _module_class(self, cls: Frame, seen: set) -> bool:
        if id(cls) in seen:
            return False
        seen.add(id(cls))
        node = cls.node
        if node.keywords:
            return False
        for base in node.bases:
            qualified = resolve_expr(base.value, cls.parent or cls)
            if qualified in _BASES or (isinstance(base.value, cst.Name) and base.value.value == "object"):
                continue
            target = self._local_class(base.value, cls)
            if target is None or not self._module_class(target, seen):
                return False
        return True

    def _local_class(self, expr: cst.BaseExpression, cls: Frame) -> Optional[Frame]:
        if not isinstance(expr, cst.Name):
            return None
        if self._classes is None:
            self._classes = {}
            for frame in self.dtypes.facts.tree.frames:
                if frame.kind == "class":
                    self._classes.setdefault(frame.node.name.value, []).append(frame)
        found = self._classes.get(expr.value, ())
        return found[0] if len(found) == 1 else None

    # -- during a reading -----------------------------------------------------------------
    def callee(self, call: cst.Call, frame: Frame) -> Optional[Frame]:
        """The bindable function `call` calls, if any."""
        func = call.func
        if isinstance(func, cst.Name):
            target = self.by_name.get(func.value)
            if target is not None and _visible(target, frame):
                return target
            return None
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            cls = frame.class_frame
            if cls is not None:
                return self.methods.get((id(cls), func.attr.value))
        return None

    def forward(self, call: cst.Call, frame: Frame) -> Optional[Frame]:
        """The `forward` a call of a module instance of the file reaches: `self.<attr>(...)`,
        `Cls(...)(...)`."""
        func = call.func
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            cls = frame.class_frame
            if cls is not None:
                return self.by_attr.get((id(cls), func.attr.value))
        elif isinstance(func, (cst.Call, cst.Name)):
            inner = func.func if isinstance(func, cst.Call) else func
            table = self.by_class if isinstance(func, cst.Call) else self.by_instance
            if isinstance(inner, cst.Name):
                target = table.get(inner.value)
                if target is not None and self._unshadowed(inner.value, frame):
                    return target
        return None

    @staticmethod
    def _unshadowed(name: str, frame: Frame) -> bool:
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind == "function" and name in scope.bindings:
                return False
            scope = scope.parent.scope if scope.parent is not None else None
        return True

    def record(self, call: cst.Call, frame: Frame, args: List[object]) -> None:
        if self.dtypes.calling:
            return  # a scratch reading of a callee's body for one call's return
        target = self.callee(call, frame)
        method = isinstance(call.func, cst.Attribute)
        if target is None:
            target, method = self.forward(call, frame), True
        if target is None:
            return
        from amplint.analysis.facts.dtype_calls import bind

        bound = bind(target.node, call, args, skip_first=method)
        region = self.dtypes.facts.active_region(frame)
        key = None if region is None else (region.device, region.dtype)
        sites = self.sites.setdefault(id(target), {})
        earlier = sites.get(id(call))
        if earlier is not None:  # the same call read twice in one reading: keep both
            if earlier[0] is None or bound is None or earlier[1] != key:
                bound, key = None, earlier[1]
            else:
                before = earlier[0]
                bound = {name: join(value, before.get(name))
                         if isinstance(value, Dtype) and isinstance(before.get(name), Dtype)
                         else None for name, value in bound.items()}
        sites[id(call)] = (bound, key)
        self.calls.setdefault(id(target), {})[id(call)] = (call, method)
        sure = self.sure.setdefault(id(target), {})
        certain = region is not None and self.dtypes.region_state(frame)[1]
        sure[id(call)] = certain and sure.get(id(call), True)

    def given(self, dtype: str) -> Set[int]:
        """ids of the functions outside any region a parameter of which every call binds to
        exactly `dtype` (as of the last reading): code where such values occur."""
        facts = self.dtypes.facts
        found: Set[int] = set()
        for frames in (self.by_name, self.methods):
            for frame in frames.values():
                seeds = self.seeds.get(id(frame))
                if seeds and facts.active_region(frame) is None and any(
                        isinstance(v, Dtype) and not v.conditional and v.exact == dtype
                        for v in seeds.values()):
                    found.add(id(frame))
        return found

    # -- after a reading ------------------------------------------------------------------
    def next_seeds(self) -> Dict[int, Dict[str, Dtype]]:
        facts = self.dtypes.facts
        seeds: Dict[int, Dict[str, Dtype]] = {}
        self.next_certain = set()
        frames = list(self.by_name.values()) + list(self.methods.values())
        frames += list(self.by_attr.values()) + list(self.by_class.values()) + list(
            self.by_instance.values())
        for frame in frames:
            sites = self.sites.get(id(frame), {})
            if not sites or len(sites) != self.expected.get(id(frame)):
                continue  # a call the reading never reached (a lambda, a comprehension)
            if self.dtypes.declared_region(frame) is not None:
                continue
            region = facts.active_region(frame)
            keys = {key for _, key in sites.values()}
            if region is None and keys != {None}:
                continue  # called under a region it is not known to run under
            if region is not None and (region.kind != "call" or not keys <= {
                    None, (region.device, region.dtype)}):
                continue
            if id(frame) in self.public and (region is None or keys != {(region.device, region.dtype)}):
                continue  # a public function: only the paths through this file's region
            if id(frame) not in self.public and region is not None and (
                    region.enabled is Enabled.TRUE) and keys == {(region.device, region.dtype)} and all(
                    self.sure.get(id(frame), {}).values()):
                self.next_certain.add(id(frame))
            values: Dict[str, Optional[Dtype]] = {}
            for bound, _ in sites.values():
                if bound is None:
                    values = {}
                    break
                for name, value in bound.items():
                    value = value if isinstance(value, (Dtype, InstanceValue)) else None
                    values[name] = join_values(values[name], value) if name in values else value
            known = {name: value for name, value in values.items() if value is not None}
            if known:
                seeds[id(frame)] = known
        return seeds


def _mentions(module: cst.Module, wanted: set):
    """One pass over the file's nodes: the string texts that are one of the `wanted` names,
    the ids of every call's callee, and the names and attributes `.name` among `wanted` (a
    name that is an attribute's own `.attr` is not a name)."""
    strings: set = set()
    funcs: set = set()
    names: Dict[str, List[cst.Name]] = {}
    attrs: Dict[str, List[cst.Attribute]] = {}
    attr_names: set = set()
    string_class, call_class, name_class, attribute_class = (
        cst.SimpleString, cst.Call, cst.Name, cst.Attribute)
    for node in iter_nodes(module):
        kind = type(node)
        if kind is name_class:
            if node.value in wanted and id(node) not in attr_names:
                names.setdefault(node.value, []).append(node)
        elif kind is call_class:
            funcs.add(id(node.func))
        elif kind is attribute_class:
            attr = node.attr.value
            if attr in wanted:
                attrs.setdefault(attr, []).append(node)
                attr_names.add(id(node.attr))
        elif kind is string_class:
            text = node.value[1:-1] if len(node.value) >= 2 else node.value
            if text in wanted:
                strings.add(text)
    return strings, funcs, names, attrs


def _counts(names: List[str]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def _plain(node: cst.FunctionDef) -> bool:
    params = node.params
    return not node.decorators and node.asynchronous is None and not isinstance(
        params.star_arg, cst.Param) and params.star_kwarg is None


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _visible(target: Frame, frame: Frame) -> bool:
    """`target` (module-level, or nested in a function) is what its bare name means in `frame`."""
    owner = target.parent.scope if target.parent is not None else None
    if owner is None or owner.kind == "module":
        return True
    scope: Optional[Frame] = frame.scope
    while scope is not None:
        if scope is owner:
            return True
        scope = scope.parent.scope if scope.parent is not None else None
    return False


def read_with_bindings(dtypes, walk) -> None:
    """Read the file (`walk`), then again with the parameters its call sites bind, until the
    bound values stop changing."""
    bindings = Bindings(dtypes)
    dtypes.bindings = bindings if bindings.expected else None
    walk(dtypes)
    for _ in range(MAX_ROUNDS - 1 if dtypes.bindings is not None else 0):
        seeds = bindings.next_seeds()
        if seeds == bindings.seeds and bindings.next_certain == bindings.certain:
            break
        bindings.seeds, bindings.certain = seeds, bindings.next_certain
        bindings.sites, bindings.sure = {}, {}
        dtypes.values, dtypes.region_nodes = {}, []
        walk(dtypes)
    from amplint.analysis.facts.dtype_paths import read_along_region_calls

    read_along_region_calls(dtypes, bindings, walk)
