"""A closure a factory returns, then called: `step = make_step(opt, scaler)` then `step()` runs
the `def step()` nested in `make_step` (torchtune builds its optimizer step this way, and keeps
it as `self._optimizer_step`). The call's free names that are the factory's parameters stand for
the factory call's arguments (`FactoryCall.bound`). The factory may be a def of this file
(`of_call`) or of another one (`factory_call` names the call; the project pass resolves it).

Exact or nothing: the called name is bound once in the caller's scope (or, bound in no calling
function, once at module level: a script's `train_step = make_step(...)` called in its
`train()`), by that assignment, or the called `self.attr` is written once in the file, by
`self.attr = factory(...)` in a method of the same class, and named nowhere else than there and
at its calls `self.attr(...)`; the factory is a module-level def bound once, whose every
`return` returns the same nested def (bound once in the factory); a factory call with
`*args`/`**kwargs` binds nothing known."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import iter_nodes, self_attr
from amplint.analysis.facts.tree import CallSite, Collector, Frame, own_statements


@dataclass(eq=False)
class FactoryCall:
    closure: Frame  # the nested def the call runs
    factory: Frame
    call: cst.Call  # `make_step(opt, scaler, params)`
    caller: Frame  # the scope the factory call is written in


# imports that never lead to a project factory
_LIBRARIES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy"}
FactorySite = Tuple[cst.Call, Frame]  # the factory call, the scope it is written in


class ReturnedClosures:
    def __init__(self, tree: Collector) -> None:
        self.tree = tree
        self._returned: Dict[int, Optional[Frame]] = {}  # id(factory frame) -> its closure
        self._assigned: Optional[Dict[tuple, cst.BaseExpression]] = None
        self._held: Optional[Dict[Tuple[int, str], FactorySite]] = None

    def of_call(self, site: CallSite) -> Optional[FactoryCall]:
        """For `name()` / `self.attr()`: the factory call of this file that bound the called
        value and the closure it returned."""
        made = self.factory_call(site)
        if made is None or not isinstance(made[0].func, cst.Name):
            return None
        value, scope = made
        factory = self._module_def(scope, value.func.value)  # type: ignore[attr-defined]
        closure = self._closure(factory) if factory is not None else None
        if closure is None:
            return None
        return FactoryCall(closure, factory, value, scope)  # type: ignore[arg-type]

    def factory_call(self, site: CallSite) -> Optional[FactorySite]:
        """The one call whose value `site` calls: `name = f(...)` bound once in the calling
        function's scope, or `self.attr = f(...)` held by the class (`held`); no `*args` or
        `**kwargs` in it. Where `f` leads is the caller's business."""
        func = site.node.func
        scope = site.frame.scope
        if isinstance(func, cst.Name):
            if scope.kind != "function":
                return None
            if func.value not in scope.bindings:
                scope = self._global_scope(scope, func.value)  # `train_step = make_step(...)` at module level
                if scope is None:
                    return None
            if not self.tree.bound_once(scope, func.value):
                return None
            value = self.assigned().get((id(scope), func.value))
            made: Optional[FactorySite] = (value, scope) if isinstance(value, cst.Call) else None
        else:
            attr = self_attr(func)
            cls = site.frame.class_frame
            if attr is None or cls is None or site.frame.function is None:
                return None
            made = self.held().get((id(cls), attr))
        if made is None or any(arg.star for arg in made[0].args):
            return None
        return made

    def _global_scope(self, scope: Frame, name: str) -> Optional[Frame]:
        """The module frame, when `name` of a function names its module-level binding (no
        enclosing function binds it; `bound_once` rules out a `global` rebinding)."""
        frame = scope.parent
        while frame is not None and frame.kind != "module":
            if frame.kind == "function" and (name in frame.bindings or name in frame.imports):
                return None
            frame = frame.parent
        return frame if frame is not None and name in frame.bindings else None

    def held(self) -> Dict[Tuple[int, str], FactorySite]:
        """(id(class frame), attr) -> the call `self.attr = f(...)` of one of its methods, for
        the attributes written there once, called as `self.attr(...)` in the class's methods and
        named elsewhere in the file only as called (`x.attr(...)`: no other write or alias)."""
        if self._held is None:
            self._held = self._find_held()
        return self._held

    def _find_held(self) -> Dict[Tuple[int, str], FactorySite]:
        stores: Dict[str, List[Tuple[Frame, cst.Call, Frame]]] = {}
        for site in self.tree.assigns:
            if len(site.targets) != 1 or not isinstance(site.value, cst.Call):
                continue
            attr = self_attr(site.targets[0])
            function = site.frame.function
            cls = function.class_frame if function is not None else None
            if attr is not None and cls is not None and function is site.frame.scope:
                stores.setdefault(attr, []).append((cls, site.value, site.frame.scope))
        stores = {a: s for a, s in stores.items() if len(s) == 1 and self._factory_like(s[0][1])
                  and a not in s[0][0].functions and a not in s[0][0].bindings}
        if not stores:
            return {}
        calls: Dict[str, int] = {}
        for site in self.tree.calls:
            attr = self_attr(site.node.func)
            if attr in stores and site.frame.class_frame is stores[attr][0][0]:
                calls[attr] = calls.get(attr, 0) + 1
        stores = {a: s for a, s in stores.items() if calls.get(a)}
        if not stores or any(isinstance(s.node.func, cst.Name) and s.node.func.value == "setattr"
                             for s in self.tree.calls):
            return {}
        # a called `x.attr(...)` neither writes nor hands on the value; any other mention may
        called = {id(site.node.func) for site in self.tree.calls}
        mentions: Dict[str, int] = {}
        for node in iter_nodes(self.tree.module_frame.node):
            if isinstance(node, cst.Attribute) and node.attr.value in stores and id(node) not in called:
                mentions[node.attr.value] = mentions.get(node.attr.value, 0) + 1
        return {(id(s[0][0]), a): (s[0][1], s[0][2]) for a, s in stores.items() if mentions.get(a) == 1}

    def assigned(self) -> Dict[tuple, cst.BaseExpression]:
        """(id(scope), name) -> the value of its plain `name = value` assignments."""
        if self._assigned is None:
            self._assigned = {}
            for site in self.tree.assigns:
                if len(site.targets) == 1 and isinstance(site.targets[0], cst.Name):
                    self._assigned[(id(site.frame.scope), site.targets[0].value)] = site.value
        return self._assigned

    def module_def(self, scope: Frame, name: str) -> Optional[Frame]:
        """The module-level def `name` means in `scope` (bound once, not shadowed), or None."""
        return self._module_def(scope, name)

    def _module_def(self, scope: Frame, name: str) -> Optional[Frame]:
        frame: Optional[Frame] = scope
        while frame is not None and frame.kind != "module":
            if frame.kind == "function" and (name in frame.bindings or name in frame.imports):
                return None
            frame = frame.parent
        module = self.tree.module_frame
        if not self.tree.bound_once(module, name):
            return None
        return module.functions.get(name)

    def _factory_like(self, call: cst.Call) -> bool:
        """A call that may be a factory's: of a module-level def of this file, or of a name
        the module imports from outside torch and the standard library (`self.proj =
        nn.Linear(...)`, a module that `self.proj(x)` calls, is no closure and walks nothing)."""
        func = call.func
        while isinstance(func, cst.Attribute):
            func = func.value
        if not isinstance(func, cst.Name):
            return False
        module = self.tree.module_frame
        if func is call.func and func.value in module.functions:
            return True
        if module.relative and func.value in module.relative:
            return True
        ref = module.imports.get(func.value)
        return ref is not None and ref.split(".", 1)[0] not in _LIBRARIES

    def closure_of(self, factory: Frame) -> Optional[Frame]:
        """The nested def a module-level factory of this file returns, or None."""
        module = self.tree.module_frame
        if factory.parent is not module or not self.tree.bound_once(module, factory.name):
            return None
        return self._closure(factory)

    def _closure(self, factory: Frame) -> Optional[Frame]:
        key = id(factory)
        if key not in self._returned:
            self._returned[key] = self._find_closure(factory)
        return self._returned[key]

    def _find_closure(self, factory: Frame) -> Optional[Frame]:
        node = factory.node
        assert isinstance(node, cst.FunctionDef)
        names = set()
        for statement in own_statements(node.body):
            if isinstance(statement, cst.Return):
                value = statement.value
                names.add(value.value if isinstance(value, cst.Name) else None)
            elif isinstance(statement, cst.BaseSmallStatement) and any(
                isinstance(n, (cst.Yield, cst.Await)) for n in iter_nodes(statement)
            ):
                return None  # a generator or a coroutine: calling it runs nothing yet
        if len(names) != 1:
            return None
        name = names.pop()
        if name is None or not self.tree.bound_once(factory, name):
            return None
        return factory.functions.get(name)
