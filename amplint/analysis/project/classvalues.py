"""The project's class flow, its values: for a value a function holds (flowfacts.Val), the
project classes (and functions) it may hold, each with the step that made it:
"build_model(cfg) at train.py:7".

Flow-insensitive and bounded. Sources: constructors, factories' returns (every branch, nested
factories, `ARCHS[name](...)`), registries (a class registered with `@X.register_module()`,
`@X.register()`, `X.register(name)(cls)` is held by `X.build(cfg)` / `build_from_cfg(cfg, X)`
only: a registry nothing builds from reaches nothing; `HEADS = MODELS` is a registry of its
own; `build_loss(loss_bbox)` holds only the registered classes the project's files name in
`loss_bbox=dict(type=...)`, where they name any), classmethod constructors, parameter
annotations (`model: Net`). Carriers: chains,
wrappers (dropped in flowfacts), `functools.partial`, containers (`nn.Sequential`,
`ModuleList`, lists of blocks), parameters bound at every call site of the linted files
(positional, keyword, defaults, methods, constructors, partials), `self.attr` stores of the
class, submodules. Nothing is guessed: what cannot be resolved holds nothing.
"""

from __future__ import annotations

from typing import Dict, Optional

from amplint.analysis.project.callback_sites import callback_sites
from amplint.analysis.project.classmemo import ContextMemo, Frame
from amplint.analysis.project.config_targets import config_target_call
from amplint.analysis.project.dataclass_fields import field_values, is_dataclass
from amplint.analysis.project.flowindex import SET_WORDS, FlowIndex, Hold, Things, keep, merge_things
from amplint.analysis.project.flowindex import SiteTable as _SiteTable, callee_targets as _callee_targets
from amplint.analysis.project.namespace_members import (
    call_shape, cannot_take, dict_items, imported_modules, with_selection,
)
from amplint.analysis.project.reflective import lookup
from amplint.analysis.project.registry_classes import registry_lookup
from amplint.analysis.project.string_classes import StringConfigs, string_call

CTOR_CLASSMETHODS = frozenset({"from_pretrained", "from_config", "load_from_checkpoint", "from_cfg"})
BUILD = frozenset({"build", "build_from_cfg"})
# a dict's own attributes: on a dict literal `d.get` is the method, never the item "get"
_DICT_ATTRS = frozenset(dir(dict))
_MAX_DEPTH = 14
# a registry build that may make more classes than this (after the configs' narrowing) is
# named in --show-regions, not followed: mmdet's HEADS holds ~100 heads, and following all of
# them from one `build_head(cfg)` reaches losses that no config pairs with that head
MAX_REGISTRY_BUILD = 8
_BUDGET = 20000  # evaluation steps per top-level question


class ClassValues(FlowIndex):
    def __init__(self, project) -> None:
        super().__init__(project)
        self._memo: Dict[tuple, Things] = {}
        self._active: set = set()
        self._cuts = 0
        self._steps = 0
        self._site_tables: Dict[tuple, "_SiteTable"] = {}
        self.evaluations = 0  # values evaluated, not taken from the memo (a reuse counts its own)
        self.computed = 0  # values actually evaluated
        self._store_index: Dict[tuple, Dict[str, list]] = {}  # (file, class) -> attribute -> stores
        self._context = ContextMemo()  # values a cycle cut short, by context (classmemo.py)
        self.strings = StringConfigs(project)

    def values(self, path: str, key: str, val, depth: int = 0) -> Things:
        """What `val`, written in function `key` of `path`, may hold."""
        context = self._context
        if depth == 0:
            self._steps = 0
            context.taint()  # a question asked inside another restarts the step budget
        if val is None:
            return {}
        context.asked(depth)
        if depth > _MAX_DEPTH or self._steps > _BUDGET:
            context.taint()
            return {}
        memo_key = (path, key, val)
        found = self._memo.get(memo_key)
        if found is not None:
            return found
        if memo_key in self._active:
            self._cuts += 1
            context.cut_against(memo_key)
            return {}
        entry = context.find(memo_key, depth, self._active, _BUDGET - self._steps, _MAX_DEPTH)
        if entry is not None:  # what evaluating it again here would give, counts included
            self._steps += entry.steps
            self.evaluations += entry.steps
            self._cuts += entry.cuts
            return entry.found
        self._steps += 1
        self.evaluations += 1
        self._active.add(memo_key)
        self.computed += 1
        cuts = self._cuts
        frame = Frame(depth)
        context.frames.append(frame)
        try:
            found = self._eval(path, key, val, depth + 1)
        finally:
            self._active.discard(memo_key)
            context.frames.pop()
        settled = self._cuts == cuts and self._steps <= _BUDGET
        if settled:
            self._memo[memo_key] = found
            context.settled(memo_key)
        else:
            if self._steps > _BUDGET:
                frame.tainted = True
            context.keep(memo_key, frame, found, self._cuts - cuts)
        if context.frames:
            context.frames[-1].absorb(frame, settled)
        return found

    def _flow(self, path: str, optional: bool = False):
        flow = super()._flow(path, optional)
        if flow is None and optional and path not in self.p.summaries:
            self._context.taint()  # the parse budget left it unread: read later, it may answer
        return flow

    def _eval(self, path: str, key: str, val, depth: int) -> Things:
        kind = val[0]
        if kind == "ref":
            return self._ref(path, val[1], depth)
        if kind == "local":
            return self._local(path, key, val[1], depth)
        if kind == "self":
            cls = key.split(".")[0] if "." in key else None
            summary = self.p.summary(path)
            if cls is None or summary is None or cls not in summary.classes:
                return {}
            found = self._stores(path, cls, val[1], depth)
            if not found:  # `self._build_loss()`: a method of the class, never a store
                method = self.p.method(path, cls, val[1])
                if method is not None and method[0] == path and method[1] == f"{cls}.{val[1]}":
                    found = self._class_attr(path, cls, val[1])
            return found
        if kind == "call":
            return self._call(path, key, val, depth)
        if kind == "model_name":
            return self._timm_build(path, key, val, depth)
        if kind == "lookup":  # `getattr(models, args.arch)`: the names the configs give
            return lookup(self.strings, self, path, key, val, depth)
        if kind == "attr":
            return self._attr(path, key, val, depth)
        if kind == "import":  # `importlib.import_module("models." + name + "_model")`
            return imported_modules(self, path, key, val[1], depth)
        if kind == "sub" and val[1] is not None and val[1][0] == "attr" and val[1][2] == "__dict__":
            return dict_items(self, path, key, val[1][1], depth)  # a loop over a module's names
        if kind in ("sub", "item"):
            out: Things = {}
            for thing, hold in self.values(path, key, val[1], depth).items():
                if thing[0] == "tup":
                    items = thing[3] if kind == "sub" else thing[3][val[2]:val[2] + 1]
                    for item in items:
                        held = self.values(thing[1], thing[2], item, depth)
                        if "(when " in hold.cite:  # a factory's tuple a namespace lookup selected
                            held = {t: Hold(hold.cite, h.half, h.wrap) for t, h in held.items()}
                        merge_things(out, held)
                elif kind == "item":
                    out.setdefault(thing, hold)
            return out
        if kind == "part":  # a loop target's element i: only a tuple's item, never a guess
            out = {}
            for thing in self.values(path, key, val[1], depth):
                if thing[0] == "tup":
                    for item in thing[3][val[2]:val[2] + 1]:
                        merge_things(out, self.values(thing[1], thing[2], item, depth))
            return out
        if kind == "tuple":  # ("tup", path, key, items[, ("keys", name, ...)])
            return {("tup", path, key) + val[1:]: Hold("")}
        if kind == "half":
            return {
                thing: Hold(hold.cite, val[2], hold.wrap)
                for thing, hold in self.values(path, key, val[1], depth).items()
            }
        if kind == "unwrap":  # `model.module`: what the model holds, never its DataParallel
            return {
                thing: Hold(hold.cite, hold.half) if hold.wrap else hold
                for thing, hold in self.values(path, key, val[1], depth).items()
            }
        if kind == "wrap":  # `nn.DataParallel(m)`: m's instances, marked wrapped
            wrap = f"{val[2]} at {self.p.display(path)}:{val[3]}"
            return {
                thing: Hold(hold.cite, hold.half, wrap) if thing[0] == "inst" else hold
                for thing, hold in self.values(path, key, val[1], depth).items()
            }
        if kind == "partial":  # called, it makes what its callee makes; it binds nothing
            out = {}
            for thing, hold in self.values(path, key, val[1], depth).items():
                if thing[0] in ("class", "func"):
                    out.setdefault(("p" + thing[0],) + thing[1:], hold)
                elif thing[0] == "bound":  # `partial(self.diffusion.training_losses, model)`
                    out.setdefault(thing, hold)
            return out
        if kind == "any":
            out = {}
            for item in val[1]:
                merge_things(out, self.values(path, key, item, depth))
            return out
        return {}

    def _ref(self, path: str, ref: str, depth: int) -> Things:
        found = self.p.resolve_ref(path, ref)
        if found is None:
            if ref.startswith("torch."):  # a torch class or function: known, never project code
                return {("torch", ref): Hold("")}
            return {} if ref.startswith(("?", "@")) else {("ext", ref): Hold("")}
        where, attrs = found
        summary = self.p.summary(where)
        if summary is None or not attrs:
            return {("module", ref, path): Hold("")} if summary is not None else {}
        head = attrs[0]
        if head in summary.classes:
            if len(attrs) == 1:
                return {("class", where, head): Hold("")}
            if len(attrs) == 2:
                return self._class_attr(where, head, attrs[1])
            return {}
        if len(attrs) == 1 and head in summary.functions:
            return {("func", where, head): Hold("")}
        if summary.flow is not None and head in summary.flow.globals:
            held = self._local(where, "", head, depth)
            if len(attrs) == 1:
                return held
            if len(attrs) == 2:
                return self._attr_of(held, attrs[1], depth)
        return {}

    def _class_attr(self, path: str, cls: str, name: str) -> Things:
        method = self.p.method(path, cls, name)
        if name in CTOR_CLASSMETHODS:
            return {("ctor", path, cls): Hold("")}
        if method is not None:
            flow = self._flow(method[0])
            function = flow.functions.get(method[1]) if flow is not None else None
            if function is not None and function.is_classmethod:
                return {("cfunc", method[0], method[1], path, cls): Hold("")}
            return {("func", method[0], method[1]): Hold("")}
        return {}

    def _local(self, path: str, key: str, name: str, depth: int) -> Things:
        flow = self._flow(path)
        if flow is None:
            return {}
        function = flow.functions.get(key)
        out: Things = {}
        if function is not None and key:
            if function.is_classmethod and function.params[:1] == (name,) and key.count(".") == 1:
                # `cls` of a classmethod: its class (`cls.train_one_epoch(model, ...)`), and
                # whatever a keyword binds (below)
                out[("class", path, key.split(".")[0])] = Hold("")
            if name in function.params:
                if name in function.annotations:
                    merge_things(out, self._annotated(path, key, function.annotations[name], depth))
                merge_things(out, self._bound(path, key, function, name, depth))
            for value in function.assigns.get(name, ()):
                merge_things(out, self.values(path, key, value, depth))
            if name in function.params or name in function.assigns:
                return out
        if key == "":
            module = flow.functions.get("")
            for value in (module.assigns.get(name, ()) if module else ()):
                if value[0] == "call" and value[1][0] == "ref" and value[1][1].split(".")[-1].endswith("Registry"):
                    out[("reg", (path, name))] = Hold("")
                    continue
                held = self.values(path, "", value, depth)
                if value[0] in ("local", "ref") and any(thing[0] == "reg" for thing in held):
                    # `HEADS = MODELS` (mmdet 2.x): one registry under many names; a class
                    # registered as a head is built as a head, so each name is its own
                    out[("reg", (path, name))] = Hold("")
                    continue
                merge_things(out, held)
            return out
        if name in flow.globals:
            return self.values(path, "", ("local", name), depth)
        return out

    def _annotated(self, path: str, key: str, annot, depth: int) -> Things:
        """`model: Net` holds a Net (a subclass's override is not guessed)."""
        _, classes, text, line = annot
        cite = f"{text} at {self.p.display(path)}:{line}"
        return {
            ("inst", thing[1], thing[2]): Hold(cite)
            for thing in self.values(path, key, classes, depth) if thing[0] == "class"
        }

    def _bound(self, path: str, key: str, function, name: str, depth: int) -> Things:
        """What the call sites of function `key` pass for parameter `name` (and its default)."""
        out: Things = {}
        index = function.params.index(name)
        positional = index if index < function.positional else None
        if name in function.defaults:
            merge_things(out, self.values(path, key, function.defaults[name], depth))
        parts = key.split(".")
        summary = self.p.summary(path)
        is_method = len(parts) == 2 and summary is not None and parts[0] in summary.classes
        names = [parts[-1]]
        if is_method and parts[1] == "__init__":
            names = [parts[0]]
        init = is_method and key.endswith(".__init__")
        # the slots a site must fill to bind `name`: its keyword, or its position less the
        # parameters the call leaves out (`_offset`: 0, or 1 for `self` / a constructor). A
        # classmethod is held only as `cfunc` (a class's attribute) or `bound` (an instance's),
        # both leaving `cls` out: never 0 (`func` is held for module-level functions and for
        # methods that are not classmethods), so `cls` itself is bound by keyword only
        if positional is None:
            slots = frozenset({name})
        elif is_method and function.is_classmethod:
            slots = frozenset({name, positional - 1})
        else:
            slots = frozenset({name, positional, positional - 1})
        for callee_name in names:
            for where, caller, args, offset in self._binding_sites(callee_name, (path, key), init, depth, slots):
                for slot, value in args:
                    if slot == name or (positional is not None and slot == positional - offset):
                        merge_things(out, self.values(where, caller, value, depth))
        if init:  # a config mapping that names the class and gives this argument (Hydra, jsonargparse)
            merge_things(out, self.strings.init_binding(path, parts[0], name))
        for where, caller, args in callback_sites(self, path, key, depth):  # `step_func(x, model)`
            for slot, value in args:
                if slot == name or slot == positional:
                    merge_things(out, self.values(where, caller, value, depth))
        return out

    def _binding_sites(self, name: str, target: tuple, init: bool, depth: int,
                       slots: Optional[frozenset] = None):
        """The call sites of `name` that call `target` (file, function key), in the order of
        `_call_sites`, each as (file, caller, args, parameters the call leaves out). What a
        site's callee holds is evaluated once it is final (memoised); until then (a cycle cut
        it short) it is evaluated again at each question, as any value is. `init`: the
        target is a constructor, which a call of the class runs. `slots`: only the sites that
        fill one of these (an argument's position or keyword) are wanted; the others are not
        evaluated, and a file whose text shows no such site is not summarised (site_files.py)."""
        self._context.asked(depth)
        if depth > _MAX_DEPTH:
            self._context.taint()
            return
        if not init and not self.site_files.class_named(*target):
            # a method of a class no text names: no value holds the class, an instance of it or
            # of a subclass, so no site calls the method (site_files.class_named)
            self.account(name)
            return
        question = ("bind", target, init) if slots is None else ("bind", target, init, slots)
        sites = self._call_sites(name, question)
        table = self._site_tables.get((name, question))
        if table is None:
            table = self._site_tables[(name, question)] = _SiteTable(len(sites))
        visit = set(table.by_target.get(target, ())) | table.unsettled
        if init:
            visit |= table.with_classes
        for number in sorted(visit):
            if self._steps > _BUDGET:
                self._context.taint()
                return  # every value is {} from here on: no site binds
            where, caller, callee, args, _line = sites[number]
            if slots is not None and not any(slot in slots for slot, _ in args):
                continue  # it binds none of the parameters asked about: its callee does not matter
            found = table.settled.get(number)
            if found is None:
                held = self.values(where, caller, callee, depth)
                found = _callee_targets(held)
                if self._memo.get((where, caller, callee)) is held:
                    table.settle(number, found)
            offset = self._offset(found, target, init)
            if offset is not None:
                yield where, caller, args, offset

    def _offset(self, found, target: tuple, init: bool) -> Optional[int]:
        """What `_callee_targets` found, for `target`: how many leading parameters the call
        leaves out (self), or None when it does not call it."""
        direct, classes = found
        position, offset = direct.get(target, (1 << 62, None))
        if init:
            for at, cpath, cls in classes:
                if at > position:
                    break
                if self.p.method(cpath, cls, "__init__") == target:
                    return 1
        return offset

    def _stores(self, path: str, cls: str, attr: str, depth: int, seen: int = 0) -> Things:
        summary = self.p.summary(path)
        flow = self._flow(path)
        if summary is None or flow is None or cls not in summary.classes or seen > 6:
            return {}
        out: Things = {}
        for name, value in (flow.functions[cls].stores if cls in flow.functions else ()):
            if name == attr:  # a class attribute (`StepRunner = StepRunner` in the class body)
                merge_things(out, self.values(path, "", value, depth))
        index = self._store_index.get((path, cls))
        if index is None:  # attribute -> its stores (method, value), in the methods' order
            index = self._store_index[(path, cls)] = {}
            for method in summary.classes[cls].methods:
                function = flow.functions.get(f"{cls}.{method}")
                for name, value in (function.stores if function is not None else ()):
                    index.setdefault(name, []).append((f"{cls}.{method}", value))
        for method, value in index.get(attr, ()):
            merge_things(out, self.values(path, method, value, depth))
        if is_dataclass(self, path, cls):  # `criterion: nn.Module = field(default_factory=Loss)`
            merge_things(out, field_values(self, path, cls, attr, depth))
        for base in summary.classes[cls].bases:
            found = self.p.resolve_ref(path, base)
            if found is not None and len(found[1]) == 1:
                merge_things(out, self._stores(found[0], found[1][0], attr, depth, seen + 1))
        return out

    def _call(self, path: str, key: str, val, depth: int) -> Things:
        _, callee, text, line = val
        cite = f"{text} at {self.p.display(path)}:{line}"
        out: Things = {}
        built: set = set()
        registries: list = []
        shape: object = False
        for thing, hold in self.values(path, key, callee, depth).items():
            kind = thing[0]
            if hold.cite.startswith("when ") and kind in ("class", "func"):
                shape = call_shape(self, path, line) if shape is False else shape
                if shape is not None and cannot_take(self, thing, shape):
                    continue  # a namespace member this call's arguments cannot call
            named = string_call(self, path, key, thing, text, cite)  # Hydra, `REGISTRY.get(name)`
            if named is None and kind in ("cfunc", "func"):
                named = registry_lookup(self, path, key, thing, cite)  # `Model.by_name(name)`, `get_model(name)`
            if named is None and kind == "func":  # `instantiate_from_config(lossconfig)`
                named = config_target_call(self, path, key, thing, text, cite)
            if named is not None:
                merge_things(out, named)
            elif kind == "torch":
                out.setdefault(("torch_inst", thing[1]), Hold(cite))
            elif kind == "ext" and thing[1].rsplit(".", 1)[-1] not in BUILD:
                out.setdefault(("ext_inst", thing[1]), Hold(cite))  # for unresolved_reason only
            elif kind in ("class", "ctor", "pclass"):
                out.setdefault(("inst", thing[1], thing[2]), Hold(f"{cite} ({hold.cite})" if hold.cite else cite))
            elif kind == "unnamed":
                out.setdefault(thing, hold)
            elif kind in ("func", "bound", "cfunc", "pfunc"):
                fpath, fkey = (thing[1], thing[2]) if kind != "bound" else (thing[3], thing[4])
                flow = self._flow(fpath)
                function = flow.functions.get(fkey) if flow is not None else None
                # a factory one namespace member of several is: the key value that selects it
                made = f"{cite} ({hold.cite})" if hold.cite.startswith("when ") else cite
                for value in (function.returns if function is not None else ()):
                    if kind == "cfunc" and _makes_cls(function, value):
                        out.setdefault(("inst", thing[3], thing[4]), Hold(cite))
                        continue
                    for held, inner in self.values(fpath, fkey, value, depth).items():
                        if held[0] == "inst":
                            if SET_WORDS in inner.cite:  # one of a registry's set, by which key
                                shown = f"{cite} ({inner.cite})"
                            else:  # a namespace member's key, or the factory's own cite
                                shown = with_selection(made, inner.cite)
                            keep(out, held, Hold(shown, inner.half, inner.wrap))
                        elif held[0] in ("class", "func") and inner.cite.startswith("when "):
                            out.setdefault(held, inner)  # a class a namespace lookup selected, returned
                        elif held[0] == "tup" and made is not cite:  # its items: selected by the key too
                            out.setdefault(held, Hold(made, inner.half, inner.wrap))
                        elif held[0] in ("tup", "unnamed"):
                            out.setdefault(held, inner)
            elif kind == "tget":  # what the dict holds under any key (a `default` gives nothing here)
                for item in thing[3]:
                    for held, inner in self.values(thing[1], thing[2], item, depth).items():
                        if held[0] in ("class", "func", "pclass", "pfunc"):
                            out.setdefault(held, inner)
            elif kind == "wide_build":
                out.setdefault(thing, Hold(cite))
            elif kind == "build":
                for cpath, cls in self.registries.made_by(thing[1]):
                    out.setdefault(("inst", cpath, cls), Hold(cite))
                    built.add(("inst", cpath, cls))
                registries.append(thing[1])
        out = self.narrow_by_config(path, key, text, out)
        wide = [thing for thing in out if thing in built]
        if len(wide) > MAX_REGISTRY_BUILD:
            # which of these the build makes is decided by configs no call ties to it: named
            # in --show-regions, not followed (every one of them would reach far too much)
            for thing in wide:
                del out[thing]
            registry = registries[0][-1]
            name = registry[1] if isinstance(registry, tuple) else str(registry).rsplit(".", 1)[-1]
            out.setdefault(("wide_build", name, len(wide)), Hold(cite))
        return out

    def _timm_build(self, path: str, key: str, val, depth: int) -> Things:
        """`timm.create_model(name)`: the project's functions registered with timm's
        `@register_model` under that name (all of them, up to the registry bound, when the name
        is not a literal); a name the project does not register stays timm's own."""
        out: Things = {}
        for thing, hold in self.values(path, key, val[1], depth).items():
            if not (thing[0] == "ext" and thing[1].startswith("timm.") and thing[1].endswith(".create_model")):
                out.setdefault(thing, hold)
                continue
            registered = self.timm_models()
            made = registered.get(val[2], []) if val[2] else [f for fs in registered.values() for f in fs]
            if not made:
                out.setdefault(thing, hold)
            elif len(made) > MAX_REGISTRY_BUILD:
                out.setdefault(("wide_build", "timm.create_model", len(made)), hold)
            else:
                for fpath, name in made:
                    out.setdefault(("func", fpath, name), hold)
        return out

    def _is_property(self, method) -> bool:
        flow = self._flow(method[0])
        function = flow.functions.get(method[1]) if flow is not None else None
        return function is not None and function.is_property

    def _property(self, method, depth: int) -> Things:
        fpath, fkey = method
        out: Things = {}
        for value in self._flow(fpath).functions[fkey].returns:
            merge_things(out, self.values(fpath, fkey, value, depth + 1))
        return out

    def _attr(self, path: str, key: str, val, depth: int) -> Things:
        return self._attr_of(self.values(path, key, val[1], depth), val[2], depth)

    def _attr_of(self, held: Things, name: str, depth: int) -> Things:
        out: Things = {}
        for thing, hold in held.items():
            kind = thing[0]
            if kind in ("reg",) and name in BUILD:
                out.setdefault(("build", thing), hold)
            elif name == "get" and (kind == "reg" or kind == "ext" and thing[1].endswith("_REGISTRY")):
                out.setdefault(("regget", thing if kind == "reg" else ("reg", thing[1])), hold)
            elif kind == "ext" and name in BUILD:
                out.setdefault(("build", ("reg", thing[1])), hold)
            elif kind == "tup" and name == "get":  # `MODELS.get(name)` on a dict display
                out.setdefault(("tget",) + thing[1:], hold)
            elif kind == "tup" and len(thing) == 5 and name not in _DICT_ATTRS:
                # `self.transformer.h` of `nn.ModuleDict(dict(wte=..., h=...))`: that key's item
                for item, item_key in zip(thing[3], thing[4][1:]):
                    if item_key == name:
                        merge_things(out, self.values(thing[1], thing[2], item, depth))
            elif kind == "module":  # `mod = importlib.import_module("pkg.models")`; `mod.Net`
                merge_things(out, self._ref(thing[2], f"{thing[1]}.{name}", depth))
            elif kind == "class":
                merge_things(out, self._class_attr(thing[1], thing[2], name))
            elif kind == "inst":
                method = self.p.method(thing[1], thing[2], name)
                if method is not None and self._is_property(method):
                    # `config.norm_class` reads what the property returns (litgpt's
                    # `partial(RMSNorm, ...)`), every return it has
                    merge_things(out, self._property(method, depth))
                elif method is not None:
                    out.setdefault(("bound", thing[1], thing[2], method[0], method[1]), hold)
                else:
                    merge_things(out, self._stores(thing[1], thing[2], name, depth))
        return out


def _makes_cls(function, value) -> bool:
    """A classmethod's return that is an instance of the class it is called through: `return
    cls(...)`, or a local only ever bound to `cls(...)` (fast-transformers' `from_kwargs`:
    `builder = cls()`, attributes set, `return builder`)."""
    if value[0] == "local" and value[1] != "cls" and value[1] not in function.params:
        bound = function.assigns.get(value[1], ())
        return bool(bound) and all(item[0] == "call" and item[1] == ("local", "cls") for item in bound)
    return value[0] == "call" and value[1] == ("local", "cls")
