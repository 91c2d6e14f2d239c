"""The modules a container on `self` holds, within one file: `self.layers =
nn.ModuleList([Block(cfg) for _ in range(n)])`, `self.blocks = nn.Sequential(*[Block() ...])`,
`self.layers = nn.ModuleList()` then `self.layers.append(make_block(i))`, and the calls that run
them: `for layer in self.layers: h = layer(h)` (also `enumerate(self.layers)` and a slice of
it), `self.layers[i](h)`, `self.blocks(h)` of an `nn.Sequential`. The project pass's points-to
reads the same across files (project/pointsto_containers.py); this is the file's callgraph's
share (facts/callgraph.py), so a region of the same file reaches those forwards.

Exact or nothing: every value the file stores in `self.attr` of the class is such a container
(or a plain list/tuple of the same) whose every element is a new instance of a module class of
this file, directly or through a factory function of the file returning one
(CallGraph.factory_class); the container is changed only by `append`/`extend`/`insert` of such
elements; no other store of an attribute of that name (`model.layers = ...`, `self.layers[0] =
...`, `setattr`); the loop variable is bound once in its function."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import self_attr
from amplint.analysis.facts.tree import Frame

_LISTS = {"torch.nn.ModuleList", "torch.nn.modules.container.ModuleList"}
_SEQUENTIAL = {"torch.nn.Sequential", "torch.nn.modules.container.Sequential"}
_GROWS = ("append", "extend", "insert")


class ContainerModules:
    """(class, attr) -> the classes of this file whose instances `self.attr` holds."""

    def __init__(self, graph) -> None:
        self.graph = graph
        self.tree = graph.tree
        self._held: Optional[Dict[Tuple[str, str], Tuple[str, ...]]] = None
        self._sequential: Dict[Tuple[str, str], bool] = {}
        self._loops: Optional[Dict[Tuple[int, str], cst.BaseExpression]] = None

    def elements(self, cls: str, attr: str) -> Tuple[str, ...]:
        """The classes of the modules `self.attr` of class `cls` holds (() when not known)."""
        if self._held is None:
            self._held = self._collect()
        return self._held.get((cls, attr), ())

    def sequential(self, cls: str, attr: str) -> bool:
        """`self.attr` is an `nn.Sequential` (calling it runs each element)."""
        return bool(self.elements(cls, attr)) and self._sequential.get((cls, attr), False)

    def called(self, func: cst.BaseExpression, frame: Frame) -> Tuple[str, ...]:
        """The classes whose forward `func(...)` runs when `func` is an element of a container
        on `self`: a loop variable over it, an item of it, or the container itself when it is
        an `nn.Sequential`."""
        cls = frame.class_frame
        if isinstance(func, cst.Name):
            if self._held is None:
                self._held = self._collect()
            if not self._held:
                return ()
            container = self._loop_iterable(func.value, frame)
            if container is None:
                return ()
            return self._of(container, frame)
        if isinstance(func, cst.Subscript) and cls is not None:
            attr = self_attr(func.value)
            return self.elements(cls.name, attr) if attr is not None else ()
        if cls is not None:
            attr = self_attr(func)
            if attr is not None and self.sequential(cls.name, attr):
                return self.elements(cls.name, attr)
        return ()

    # -- which container a loop variable takes its values from --------------------------
    def _loop_iterable(self, name: str, frame: Frame) -> Optional[cst.BaseExpression]:
        scope = frame.scope
        if scope.kind != "function" or not self.tree.bound_once(scope, name):
            return None
        if self._loops is None:
            loops: Dict[Tuple[int, str], cst.BaseExpression] = {}
            for node, where in self.tree.loops:
                target, iterable = node.target, node.iter
                if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
                        and iterable.func.value == "enumerate" and len(iterable.args) == 1
                        and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
                    target, iterable = target.elements[1].value, iterable.args[0].value
                if isinstance(target, cst.Name):
                    loops[(id(where.scope), target.value)] = iterable
            self._loops = loops
        return self._loops.get((id(scope), name))

    def _of(self, container: cst.BaseExpression, frame: Frame) -> Tuple[str, ...]:
        cls = frame.class_frame
        if isinstance(container, cst.Subscript) and len(container.slice) == 1 \
                and isinstance(container.slice[0].slice, cst.Slice):
            container = container.value  # `self.layers[:k]`, `self.layers[::-1]`
        attr = self_attr(container)
        if attr is None or cls is None:
            return ()
        return self.elements(cls.name, attr)

    # -- what the file stores --------------------------------------------------------------
    def _collect(self) -> Dict[Tuple[str, str], Tuple[str, ...]]:
        if not any(isinstance(target, cst.Attribute) for site in self.tree.assigns for target in site.targets):
            return {}
        if any(site.dotted == ("setattr",) for site in self.tree.calls):
            return {}
        held: Dict[Tuple[str, str], Tuple[str, ...]] = {}
        poisoned = set()  # attribute names stored in any way not known
        for site in self.tree.assigns:
            for target in site.targets:
                if isinstance(target, cst.Subscript) and self_attr(target.value) is not None:
                    poisoned.add(self_attr(target.value))
                if not isinstance(target, cst.Attribute):
                    continue
                owner = self.graph.self_attr_owner(target, site.frame)
                if owner is None:
                    poisoned.add(target.attr.value)
                    continue
                found = self._container(site.value, site.frame, owner)
                if found is None:
                    poisoned.add(owner[1])
                else:
                    held[owner] = held.get(owner, ()) + tuple(c for c in found if c not in held.get(owner, ()))
        for site in self.tree.calls:  # `self.layers.append(Block())`
            func = site.node.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in _GROWS):
                continue
            owner = self.graph.self_attr_owner(func.value, site.frame)
            if owner is None or owner not in held:
                continue
            args = [a for a in site.node.args if a.keyword is None and not a.star]
            value = args[-1].value if args and len(args) == len(site.node.args) else None
            found = None
            if value is not None and func.attr.value == "extend":
                found = self._items(value, site.frame)
            elif value is not None:
                one = self._element(value, site.frame)
                found = (one,) if one is not None else None
            if found is None:
                poisoned.add(owner[1])
            else:
                held[owner] = held[owner] + tuple(c for c in found if c not in held[owner])
        return {key: classes for key, classes in held.items() if key[1] not in poisoned and classes}

    def _container(self, value, frame: Frame, owner) -> Optional[Tuple[str, ...]]:
        if isinstance(value, cst.Call):
            qualified = resolve_expr(value.func, frame)
            if qualified in _LISTS:
                if not value.args:
                    return ()
                if len(value.args) != 1 or value.args[0].keyword is not None or value.args[0].star:
                    return None
                self._sequential[owner] = False
                return self._items(value.args[0].value, frame)
            if qualified in _SEQUENTIAL:
                if any(a.keyword is not None for a in value.args):
                    return None
                self._sequential[owner] = self._sequential.get(owner, True)
                if len(value.args) == 1 and value.args[0].star == "*":
                    return self._items(value.args[0].value, frame)
                if any(a.star for a in value.args):
                    return None
                return self._each([a.value for a in value.args], frame)
            return None
        self._sequential[owner] = False
        return self._items(value, frame)

    def _items(self, value, frame: Frame) -> Optional[Tuple[str, ...]]:
        """A list/tuple literal or a list comprehension (generator) of known elements."""
        if isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            return self._each([e.value for e in value.elements], frame)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            one = self._element(value.elt, frame)
            return (one,) if one is not None else None
        return None

    def _each(self, values: List[cst.BaseExpression], frame: Frame) -> Optional[Tuple[str, ...]]:
        found: List[str] = []
        for value in values:
            one = self._element(value, frame)
            if one is None:
                return None
            if one not in found:
                found.append(one)
        return tuple(found)

    def _element(self, value, frame: Frame) -> Optional[str]:
        return self.graph.class_of_value(value) or self.graph.factory_class(value)
