"""The class flow's parameter binding (a mixin of classvalues.ClassValues): what the call sites
of a function pass for one of its parameters (positional, keyword, defaults, methods,
constructors, partials, callbacks), each site's callee resolved by the class flow itself.
"""

from __future__ import annotations

from typing import Optional

from amplint.analysis.project.callback_sites import callback_sites
from amplint.analysis.project.classmemo import MAX_DEPTH, STEP_BUDGET
from amplint.analysis.project.flowindex import SiteTable as _SiteTable, Things, merge_things
from amplint.analysis.project.flowindex import callee_targets as _callee_targets
from amplint.analysis.project.rebinding import argument_before


class ParameterBinding:
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
            for where, caller, args, offset, line in self._binding_sites_at(callee_name, (path, key), init, depth,
                                                                            slots):
                for slot, value in args:
                    if slot == name or (positional is not None and slot == positional - offset):
                        # `model = FullModel(model, criterion)`: the model before this line
                        before = argument_before(self, where, caller, value, line, depth)
                        merge_things(out, self.values(where, caller, value, depth) if before is None else before)
        if init:  # a config mapping that names the class and gives this argument (Hydra, jsonargparse)
            merge_things(out, self.strings.init_binding(path, parts[0], name))
        for where, caller, args in callback_sites(self, path, key, depth):  # `step_func(x, model)`
            for slot, value in args:
                if slot == name or slot == positional:
                    merge_things(out, self.values(where, caller, value, depth))
        return out

    def _binding_sites(self, name: str, target: tuple, init: bool, depth: int,
                       slots: Optional[frozenset] = None):
        """`_binding_sites_at` without the sites' lines."""
        for where, caller, args, offset, _line in self._binding_sites_at(name, target, init, depth, slots):
            yield where, caller, args, offset

    def _binding_sites_at(self, name: str, target: tuple, init: bool, depth: int,
                          slots: Optional[frozenset] = None):
        """The call sites of `name` that call `target` (file, function key), in the order of
        `_call_sites`, each as (file, caller, args, parameters the call leaves out, line). What a
        site's callee holds is evaluated once it is final (memoised); until then (a cycle cut
        it short) it is evaluated again at each question, as any value is. `init`: the
        target is a constructor, which a call of the class runs. `slots`: only the sites that
        fill one of these (an argument's position or keyword) are wanted; the others are not
        evaluated, and a file whose text shows no such site is not summarised (site_files.py)."""
        self._context.asked(depth)
        if depth > MAX_DEPTH:
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
            if self._steps > STEP_BUDGET:
                self._context.taint()
                return  # every value is {} from here on: no site binds
            where, caller, callee, args, line = sites[number]
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
                yield where, caller, args, offset, line

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
