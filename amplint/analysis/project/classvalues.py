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

What a call makes: classcalls.py; what call sites bind a parameter to: classbinding.py (mixins).
"""

from __future__ import annotations

from typing import Dict

from amplint.analysis.project.classbinding import ParameterBinding
from amplint.analysis.project.classcalls import BUILD, CallValues
from amplint.analysis.project.classmemo import MAX_DEPTH, PASS_BUDGET, STEP_BUDGET, ContextMemo, Frame
from amplint.analysis.project.dataclass_fields import field_values, is_dataclass
from amplint.analysis.project.dict_keys import selected_items
from amplint.analysis.project.flowindex import FlowIndex, Hold, Things, merge_things
from amplint.analysis.project.flowindex import SiteTable as _SiteTable
from amplint.analysis.project.namespace_members import dict_items, imported_modules
from amplint.analysis.project.rebinding import merge_bindings
from amplint.analysis.project.reflective import lookup
from amplint.analysis.project.registry_dicts import dict_lookup
from amplint.analysis.project.string_classes import StringConfigs

CTOR_CLASSMETHODS = frozenset({"from_pretrained", "from_config", "load_from_checkpoint", "from_cfg"})
# a dict's own attributes: on a dict literal `d.get` is the method, never the item "get"
_DICT_ATTRS = frozenset(dir(dict))


class ClassValues(ParameterBinding, CallValues, FlowIndex):
    def __init__(self, project) -> None:
        super().__init__(project)
        self._memo: Dict[tuple, Things] = {}
        self._active: set = set()
        self._cuts = 0
        self._steps = 0
        self.asked = 0  # values asked for in the pass (PASS_BUDGET)
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
        self.asked += 1
        if depth > MAX_DEPTH or self._steps > STEP_BUDGET or self.asked > PASS_BUDGET:
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
        entry = context.find(memo_key, depth, self._active, STEP_BUDGET - self._steps, MAX_DEPTH)
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
        settled = self._cuts == cuts and self._steps <= STEP_BUDGET
        if settled:
            self._memo[memo_key] = found
            context.settled(memo_key)
        else:
            if self._steps > STEP_BUDGET:
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
            if not found:  # `self._build_loss()`: a method of the class or a base's, never a store
                method = self.p.method(path, cls, val[1])
                if method is not None and self._is_property(method):
                    # `self.criterion` read through fairseq's Trainer property: what it returns
                    found = self._property(method, depth)
                elif method is not None:  # BasicSR's `self.model_to_device`: BaseModel's
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
        if kind == "sub" and val[1] is not None and val[1][0] in ("local", "ref"):
            found = dict_lookup(self, path, key, val[1])  # `CRITERION_REGISTRY[cfg._name]`
            if found is not None:
                return found
        if kind in ("sub", "item"):
            out: Things = {}
            for thing, hold in self.values(path, key, val[1], depth).items():
                if thing[0] == "tup":
                    items = thing[3] if kind == "sub" else thing[3][val[2]:val[2] + 1]
                    if kind == "sub" and len(val) > 2:  # `REGISTRY["vit_t"]`: that entry only
                        selected = selected_items(self, path, key, val[2], thing)
                        items = items if selected is None else selected
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
            merge_bindings(self, path, ((key, value) for value in function.assigns.get(name, ())),
                           ("local", name), depth, out)
            if name in function.params or name in function.assigns:
                return out
        if key == "":
            module = flow.functions.get("")
            bindings = [("", value) for value in (module.assigns.get(name, ()) if module else ())]
            merge_bindings(self, path, bindings, ("local", name), depth, out,
                           evaluate=lambda value: self._global_binding(path, name, value, depth))
            return out
        if name in flow.globals:
            return self.values(path, "", ("local", name), depth)
        return out

    def _global_binding(self, path: str, name: str, value, depth: int) -> Things:
        """What module-level binding `name = value` holds: the registry `name` names, or the value's."""
        if value[0] == "call" and value[1][0] == "ref" and value[1][1].split(".")[-1].endswith("Registry"):
            return {("reg", (path, name)): Hold("")}
        held = self.values(path, "", value, depth)
        if value[0] in ("local", "ref") and any(thing[0] == "reg" for thing in held):
            # `HEADS = MODELS` (mmdet 2.x): one registry under many names; a class
            # registered as a head is built as a head, so each name is its own
            return {("reg", (path, name)): Hold("")}
        return held

    def _annotated(self, path: str, key: str, annot, depth: int) -> Things:
        """`model: Net` holds a Net (a subclass's override is not guessed)."""
        _, classes, text, line = annot
        cite = f"{text} at {self.p.display(path)}:{line}"
        return {
            ("inst", thing[1], thing[2]): Hold(cite)
            for thing in self.values(path, key, classes, depth) if thing[0] == "class"
        }

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
        inherited: Things = {}
        if is_dataclass(self, path, cls):  # `criterion: nn.Module = field(default_factory=Loss)`
            merge_things(inherited, field_values(self, path, cls, attr, depth))
        for base in summary.classes[cls].bases:
            found = self.p.resolve_ref(path, base)
            if found is not None and len(found[1]) == 1:
                merge_things(inherited, self._stores(found[0], found[1][0], attr, depth, seen + 1))
        # `self.model = wrap(self.model)`: on what the other stores and the bases hold
        merge_bindings(self, path, index.get(attr, ()), ("self", attr), depth, out, inherited)
        merge_things(out, inherited)
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
