"""The functions whose returns the escape walk (amplint.analysis.facts.escape) gives to a call:
a method of a class of the file (`inst.method(...)`, `self.method(...)`), a module-level
function of the file (`f(...)`), and a function of another file that the project pass names
(facts/returned_escapes.py). Every `return` of the callee must agree: all escaped half values,
or all float32 ones."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.escape_entry import Entry
from amplint.analysis.facts.names import visible_scopes
from amplint.analysis.facts.returned_escapes import returned_escape
from amplint.analysis.facts.syntax import self_attr, unparen as _unparen
from amplint.analysis.facts.tree import Frame, iter_nodes


class EscapeCallees:
    """Mixed into EscapeAnalysis, which supplies `facts`, `returns` (id(function node) -> the
    entries of its returns read so far) and the memo fields `_definer_counts`, `_sites`,
    `_generators`."""

    def _method_return(self, value: cst.BaseExpression, frame: Frame) -> Optional[Entry]:
        """`inst.method(...)` / `self.method(...)` of a class of this file, or `f(...)` of a
        module-level function of it, read before this call, every `return` of which gives an
        escaped half value (or every one a float32 value): the call's value is that, wherever
        the callee's region ended."""
        value = _unparen(value)
        if not isinstance(value, cst.Call):
            return None
        if isinstance(value.func, cst.Name):
            method = self._module_function(value.func.value, frame)
        elif isinstance(value.func, cst.Attribute):
            method = self._method_callee(value.func, frame)
        else:
            return None
        entries = self.returns.get(id(method.node)) if method is not None else None
        if not entries or self._generator(method):
            return None
        if all(e.kind == "half" and e.escaped is not None for e in entries):
            return entries[0]
        if all(e.kind == "f32" for e in entries):
            return entries[0]
        return None

    def _remote_return(self, value: cst.BaseExpression, frame: Frame) -> Optional[Entry]:
        """A call of a function of another file that returns an escaped half (or a float32)
        value on every path (amplint.analysis.facts.returned_escapes)."""
        found = returned_escape(self.facts, value, frame) if self.facts.entries else None
        if found is None:
            return None
        if found.kind == "f32":
            return Entry("f32", value=value)
        return Entry("half", False, value, None, escaped=value, value=value, cite=found.cite)

    def _module_function(self, name: str, frame: Frame) -> Optional[Frame]:
        """The module-level function `name` of this file, when that is what the call's name
        sees (no inner scope binds it, the module binds it once) and it has no decorator."""
        scope = next((s for s in visible_scopes(frame) if name in s.imports or name in s.bindings), None)
        module = self.facts.tree.module_frame
        function = module.functions.get(name)
        if scope is not module or function is None or not self.facts.dtypes.bound_once(name):
            return None
        node = function.node
        if not isinstance(node, cst.FunctionDef) or node.decorators or node.asynchronous is not None:
            return None
        return function

    def _method_callee(self, func: cst.Attribute, frame: Frame) -> Optional[Frame]:
        """The method `inst.name` / `self.name` runs: `inst` a local bound once in this scope
        to an instance of a class of this file (`M()`, `M().cuda()`), or `self` where no other
        class of the file defines `name` (a subclass could override it); no decorator."""
        graph = self.facts.callgraph
        name, receiver = func.attr.value, func.value
        if self_attr(receiver) is not None:
            cls = self._held_class(receiver, frame)
            method = graph.method(cls, name) if cls is not None else None
            if method is None or method.node.decorators or method.node.asynchronous is not None:
                return None
            return method
        if not isinstance(receiver, cst.Name):
            return None
        cls: Optional[str] = None
        if receiver.value == "self":
            owner = frame.class_frame
            if owner is not None and self._definers().get(name) == 1:
                cls = owner.name
        elif frame.scope.kind == "function" and self.facts.tree.bound_once(frame.scope, receiver.value):
            sites = self._local_sites().get((id(frame.scope), receiver.value), [])
            if len(sites) == 1:
                cls = graph.class_of_value(sites[0].value)
        method = graph.method(cls, name) if cls is not None else None
        if method is None or method.node.decorators or method.node.asynchronous is not None:
            return None
        return method

    def _held_class(self, receiver: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """The class of this file `self.attr` holds: every store of `self.attr` in the file is
        one plain assignment in a method of the reading class, of a new instance of that class
        (`self.pretransform = Pretransform()`); a subclass storing another value, a tuple
        target, any other value, or a store of `.attr` on another receiver of the file
        (`classifier.feature_model = FloatFeatures()`) or a `setattr`: None."""
        attr = self_attr(receiver)
        owner = frame.class_frame
        if attr is None or owner is None:
            return None
        classes = set()
        stores = 0
        for site in self.facts.tree.assigns:
            for target in site.targets:
                stored = [t for t in iter_nodes(target) if self_attr(t) == attr]
                if not stored:
                    continue
                if stored[0] is not target or site.frame.class_frame is not owner:
                    return None
                stores += 1
                classes.add(self.facts.callgraph.class_of_value(site.value))
        if self.facts.param_defaults.attribute_stores(attr) != stores:
            return None  # `.attr` stored on another receiver too (or augmented, or by setattr)
        return classes.pop() if len(classes) == 1 and None not in classes else None

    def _definers(self) -> Dict[str, int]:
        """Method name -> how many classes of the file define it."""
        if self._definer_counts is None:
            self._definer_counts = {}
            for cls in self.facts.tree.classes.values():
                for name in cls.functions:
                    self._definer_counts[name] = self._definer_counts.get(name, 0) + 1
        return self._definer_counts

    def _local_sites(self) -> Dict[Tuple[int, str], list]:
        """(id(scope), name) -> the plain `name = value` assignments of that scope."""
        if self._sites is None:
            self._sites = {}
            for site in self.facts.tree.assigns:
                if len(site.targets) == 1 and isinstance(site.targets[0], cst.Name):
                    key = (id(site.frame.scope), site.targets[0].value)
                    self._sites.setdefault(key, []).append(site)
        return self._sites

    def _generator(self, method: Frame) -> bool:
        found = self._generators.get(id(method.node))
        if found is None:
            found = self._generators[id(method.node)] = any(
                isinstance(n, (cst.Yield, cst.Await)) for n in iter_nodes(method.node))
        return found
