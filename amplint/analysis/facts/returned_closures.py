"""A closure a factory of this file returns, then called: `step = make_step(opt, scaler)` then
`step()` runs the `def step()` nested in `make_step` (torchtune builds its optimizer step this
way). The call's free names that are the factory's parameters stand for the factory call's
arguments (`FactoryCall.bound`).

Exact or nothing: the called name is bound once in the caller's scope, by that assignment; the
factory is a module-level def bound once, whose every `return` returns the same nested def
(bound once in the factory); a factory call with `*args`/`**kwargs` binds nothing known."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import libcst as cst

from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.facts.tree import CallSite, Collector, Frame, own_statements


@dataclass(eq=False)
class FactoryCall:
    closure: Frame  # the nested def the call runs
    factory: Frame
    call: cst.Call  # `make_step(opt, scaler, params)`
    caller: Frame  # the scope the factory call is written in


class ReturnedClosures:
    def __init__(self, tree: Collector) -> None:
        self.tree = tree
        self._returned: Dict[int, Optional[Frame]] = {}  # id(factory frame) -> its closure
        self._assigned: Optional[Dict[tuple, cst.BaseExpression]] = None

    def of_call(self, site: CallSite) -> Optional[FactoryCall]:
        """For `name()`: the factory call that bound `name` and the closure it returned."""
        func = site.node.func
        scope = site.frame.scope
        if not isinstance(func, cst.Name) or scope.kind != "function":
            return None
        if func.value not in scope.bindings or not self.tree.bound_once(scope, func.value):
            return None
        value = self.assigned().get((id(scope), func.value))
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        if any(arg.star for arg in value.args):
            return None
        factory = self._module_def(scope, value.func.value)
        closure = self._closure(factory) if factory is not None else None
        if closure is None:
            return None
        return FactoryCall(closure, factory, value, scope)  # type: ignore[arg-type]

    def assigned(self) -> Dict[tuple, cst.BaseExpression]:
        """(id(scope), name) -> the value of its plain `name = value` assignments."""
        if self._assigned is None:
            self._assigned = {}
            for site in self.tree.assigns:
                if len(site.targets) == 1 and isinstance(site.targets[0], cst.Name):
                    self._assigned[(id(site.frame.scope), site.targets[0].value)] = site.value
        return self._assigned

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
