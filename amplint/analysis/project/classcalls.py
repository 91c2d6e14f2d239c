"""What a call makes, for the class flow (a mixin of classvalues.ClassValues): instances of the
classes it constructs, what a factory returns (every branch, a classmethod's `cls(...)`), the
classes a registry build makes (`X.build(cfg)`, bounded by MAX_REGISTRY_BUILD), the functions
`timm.create_model(name)` runs, and the strings, registries and configs that name classes.
"""

from __future__ import annotations

from amplint.analysis.project.config_targets import config_target_call
from amplint.analysis.project.flowindex import SET_WORDS, Hold, Things, keep, merge_things
from amplint.analysis.project.namespace_members import call_shape, cannot_take, with_selection
from amplint.analysis.project.passed_returns import per_call
from amplint.analysis.project.registry_classes import registry_lookup
from amplint.analysis.project.string_classes import string_call

BUILD = frozenset({"build", "build_from_cfg"})
# a registry build that may make more classes than this (after the configs' narrowing) is
# named in --show-regions, not followed: mmdet's HEADS holds ~100 heads, and following all of
# them from one `build_head(cfg)` reaches losses that no config pairs with that head
MAX_REGISTRY_BUILD = 8


class CallValues:
    def _call(self, path: str, key: str, val, depth: int, given=None) -> Things:
        """What call `val` makes; `given`: values its arguments hold here, in place of
        evaluating them (rebinding.py: `model = parallelize(model)`, the model before it)."""
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
                passed = per_call(self, path, key, val, kind, fpath, fkey, function, depth, given) \
                    if kind in ("func", "bound") else None  # `de_parallel(model)`: this call's model
                returns = [] if passed is None else [passed]
                for value in (function.returns if function is not None and passed is None else ()):
                    if kind == "cfunc" and _makes_cls(function, value):
                        out.setdefault(("inst", thing[3], thing[4]), Hold(cite))
                        continue
                    returns.append(self.values(fpath, fkey, value, depth))
                for returned in returns:
                    for held, inner in returned.items():
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


def _makes_cls(function, value) -> bool:
    """A classmethod's return that is an instance of the class it is called through: `return
    cls(...)`, or a local only ever bound to `cls(...)` (fast-transformers' `from_kwargs`:
    `builder = cls()`, attributes set, `return builder`)."""
    if value[0] == "local" and value[1] != "cls" and value[1] not in function.params:
        bound = function.assigns.get(value[1], ())
        return bool(bound) and all(item[0] == "call" and item[1] == ("local", "cls") for item in bound)
    return value[0] == "call" and value[1] == ("local", "cls")
