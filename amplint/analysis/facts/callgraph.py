"""Which functions of this file a call reaches: plain functions, methods through `self`, and the
`forward` of module classes whose instances are called (`model(x)`, `self.crit(out, y)`)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.container_modules import ContainerModules
from amplint.analysis.facts.dtype_value import MODULE_KEEPS
from amplint.analysis.facts.param_classes import param_classes
from amplint.analysis.facts.returned_closures import ReturnedClosures
from amplint.analysis.facts.stored_functions import Stored, stored_functions
from amplint.analysis.facts.subclass_overrides import SubclassOverrides, abstract
from amplint.analysis.facts.syntax import children_in_visit_order
from amplint.analysis.facts.tree import (
    CallSite, Collector, Frame, dotted_name, iter_nodes, receiver_root, self_attr,
)


class CallGraph:
    def __init__(self, tree: Collector) -> None:
        self.tree = tree
        # name -> class name, for `x = Net(...)` (file-wide) and `self.x = Net(...)` (per class)
        self.instances: Dict[str, str] = {}
        self.self_instances: Dict[Tuple[str, str], str] = {}
        self._collect_instances()
        self._stored: Optional[Stored] = None
        self._factories: Dict[str, Optional[str]] = {}  # function name -> the class it returns
        self._built: Optional[Dict[Tuple[int, str], Optional[str]]] = None
        self.closures = ReturnedClosures(tree)
        self._containers: Optional[ContainerModules] = None
        self._param_classes: Optional[Dict[Tuple[str, str], str]] = None
        self.overrides = SubclassOverrides(tree, self.method)

    @property
    def stored(self) -> Stored:
        """(class, attr) -> the function `self.attr` holds (stored_functions.py)."""
        if self._stored is None:
            self._stored = stored_functions(self.tree)
        return self._stored

    def class_of_value(self, value: cst.BaseExpression) -> Optional[str]:
        """`Net(...)`, `Net(...).cuda().half()` -> "Net" when Net is a class of this file."""
        root = receiver_root(value)
        if (
            isinstance(root, cst.Call)
            and isinstance(root.func, cst.Name)
            and root.func.value in self.tree.classes
        ):
            return root.func.value
        return None

    # -- instances a factory function of this file builds: `model = build(); model.half()` ------
    def factory_class(self, value: cst.BaseExpression) -> Optional[str]:
        """`build()` -> "Net" when `build` is a module-level function of this file every `return`
        of which gives a new `Net(...)` (maybe moved: `.to(device)`, `.eval()`), directly or
        through a local of the function bound only so. Kept out of `instances`: the project
        summaries' `ast` twin reads no factories, and both must reach the same callees."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        name = value.func.value
        function = self.tree.module_frame.functions.get(name)
        if function is None:
            return None
        if name not in self._factories:
            self._factories[name] = None  # a factory returning its own call is no factory
            self._factories[name] = self._returned_class(function)
        return self._factories[name]

    def built_instance(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """The class of a local `model` its scope binds only to one factory's calls
        (`model = build()`), per `factory_class`; None for any other name."""
        if not isinstance(expr, cst.Name):
            return None
        if self._built is None:
            built: Dict[Tuple[int, str], Optional[str]] = {}
            for site in self.tree.assigns:
                for target in site.targets:
                    if isinstance(target, cst.Name):
                        key = (id(site.frame.scope), target.value)
                        cls = self.factory_class(site.value)
                        built[key] = cls if built.get(key, cls) == cls else None
            self._built = built
        return self._built.get((id(frame.scope), expr.value))

    def _returned_class(self, function: Frame) -> Optional[str]:
        node = function.node
        assert isinstance(node, cst.FunctionDef)
        if node.asynchronous is not None or node.decorators:
            return None
        found: Optional[str] = None
        for ret in own_returns(node.body):
            cls = self._new_instance(ret.value, function) if ret.value is not None else None
            if cls is None or found not in (None, cls):
                return None
            found = cls
        return found

    def _new_instance(self, value: cst.BaseExpression, function: Frame) -> Optional[str]:
        while (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in MODULE_KEEPS | {"to"}
        ):
            value = value.func.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            cls = value.func.value
            if cls in self.tree.classes and not any(
                self.method(cls, move) is not None for move in MODULE_KEEPS | {"to"}
            ):
                return cls
            return None
        if not isinstance(value, cst.Name):
            return None
        found: Optional[str] = None
        for site in self.tree.assigns:
            if site.frame.scope is not function:
                continue
            for target in site.targets:
                if isinstance(target, cst.Name) and target.value == value.value:
                    cls = self._new_instance(site.value, function) if not isinstance(site.value, cst.Name) else None
                    if cls is None or found not in (None, cls):
                        return None
                    found = cls
        if found is None or not _bound_only_by_assignment(function.node, value.value):
            return None
        return found

    def _collect_instances(self) -> None:
        self.record_instances(
            lambda site: self.class_of_value(site.value), self.instances, self.self_instances
        )

    def record_instances(self, class_of, instances: Dict, self_instances: Dict) -> None:
        """Fill `instances` (name -> class) and `self_instances` ((class, attr) -> class) from the
        file's assignments whose value `class_of(site)` names a class (None: no instance)."""
        for site in self.tree.assigns:
            cls = class_of(site)
            if cls is None:
                continue
            for target in site.targets:
                if isinstance(target, cst.Name):
                    instances[target.value] = cls
                owner = self.self_attr_owner(target, site.frame)
                if owner is not None:
                    self_instances[owner] = cls

    @staticmethod
    def self_attr_owner(target: cst.BaseExpression, frame: Frame) -> Optional[Tuple[str, str]]:
        """(class name, attr) for `self.attr` inside a method."""
        attr = self_attr(target)
        cls = frame.class_frame if attr is not None else None
        return (cls.name, attr) if cls is not None else None

    def class_of_instance(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        if isinstance(expr, cst.Name):
            return self.instances.get(expr.value)
        owner = self.self_attr_owner(expr, frame)
        if owner is not None:
            return self.self_instances.get(owner)
        return None

    def method(self, class_name: str, name: str, seen: int = 0) -> Optional[Frame]:
        cls = self.tree.classes.get(class_name)
        if cls is None or seen > 8:
            return None
        if name in cls.functions:
            return cls.functions[name]
        node = cls.node
        assert isinstance(node, cst.ClassDef)
        for base in node.bases:
            base_name = dotted_name(base.value)
            if base_name and len(base_name) == 1:
                found = self.method(base_name[0], name, seen + 1)
                if found is not None:
                    return found
        return None

    def callees(self, site: CallSite, values: bool = True) -> List[Frame]:
        """The functions of this file `site` may call. `values`: also through functions held as
        values (a closure a factory returned, a function stored on `self`); the project
        summaries ask without them, as their `ast` twin (project/ast_summary.py) reads no values."""
        func = site.node.func
        frame = site.frame
        found: List[Frame] = []
        if isinstance(func, cst.Name):
            scope: Optional[Frame] = frame.scope
            while scope is not None:
                if scope.kind != "class" and func.value in scope.functions:
                    found.append(scope.functions[func.value])
                    break
                scope = scope.parent
            cls = self.instances.get(func.value)
            if not found and cls is not None:
                forward = self.method(cls, "forward") or self.method(cls, "__call__")
                if forward is not None:
                    found.append(forward)
            if not found and cls is None and values:
                made = self.closures.of_call(site)
                if made is not None:
                    found.append(made.closure)
                else:  # `for layer in self.layers: layer(h)`
                    found.extend(self._forwards(self.containers.called(func, frame)))
        elif isinstance(func, cst.Attribute):
            owner_cls = frame.class_frame
            if (
                isinstance(func.value, cst.Name)
                and func.value.value == "self"
                and owner_cls is not None
            ):
                method = self.method(owner_cls.name, func.attr.value)
                key = (owner_cls.name, func.attr.value)
                if values and (abstract(method) if method is not None else
                               key not in self.self_instances and key not in self.stored):
                    override = self._override(owner_cls, frame, func.attr.value)  # a template method's hook
                    method = override if override is not None else method
                if method is not None:
                    found.append(method)
                else:
                    cls = self.self_instances.get((owner_cls.name, func.attr.value))
                    if cls is None and values:  # `self.mixer = mixer_cls(dim)`, given the class
                        cls = self.param_classes.get((owner_cls.name, func.attr.value))
                    if cls is not None:
                        forward = self.method(cls, "forward") or self.method(cls, "__call__")
                        if forward is not None:
                            found.append(forward)
                    elif values and (owner_cls.name, func.attr.value) in self.stored:
                        found.append(self.stored[(owner_cls.name, func.attr.value)])
                    elif values:
                        made = self.closures.of_call(site)  # `self.step = make_step(...)`
                        if made is not None:
                            found.append(made.closure)
                        else:  # `self.blocks(h)` of an `nn.Sequential`
                            found.extend(self._forwards(self.containers.called(func, frame)))
            else:
                cls = self.class_of_instance(func.value, frame)
                if cls is not None:
                    method = self.method(cls, func.attr.value)
                    if method is not None:
                        found.append(method)
        elif isinstance(func, cst.Subscript) and values:  # `self.layers[i](h)`
            found.extend(self._forwards(self.containers.called(func, frame)))
        elif isinstance(func, cst.Call):  # `Attn()(q, k, mask)`: a fresh instance called at once
            cls = self.class_of_value(func)
            if cls is not None and not _shadowed(frame, cls):
                forward = self.method(cls, "forward") or self.method(cls, "__call__")
                if forward is not None:
                    found.append(forward)
        return found

    def _override(self, owner: Frame, frame: Frame, name: str) -> Optional[Frame]:
        """`self.name()` in a method of `owner` that has no concrete `name`: the subclasses'."""
        caller = frame.function
        if caller is None or caller.parent is not owner:
            return None
        return self.overrides.resolve(owner.name, caller, name)

    @property
    def param_classes(self) -> Dict[Tuple[str, str], str]:
        """(class, attr) -> the class of this file `self.attr = param(...)` builds (param_classes.py)."""
        if self._param_classes is None:
            self._param_classes = param_classes(self.tree)
        return self._param_classes

    @property
    def containers(self) -> ContainerModules:
        if self._containers is None:
            self._containers = ContainerModules(self)
        return self._containers

    def _forwards(self, classes) -> List[Frame]:
        found = []
        for cls in classes:
            forward = self.method(cls, "forward") or self.method(cls, "__call__")
            if forward is not None:
                found.append(forward)
        return found


def _shadowed(frame: Frame, name: str) -> bool:
    """Is `name` bound in a function scope around `frame` (not the module's class)?"""
    scope: Optional[Frame] = frame.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "function" and (name in scope.bindings or name in scope.imports):
            return True
        scope = scope.parent
    return False


def own_returns(body: cst.CSTNode) -> List[cst.Return]:
    """The `return` statements of a function body, not those of functions or classes in it."""
    found: List[cst.Return] = []
    pending: List[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Return):
            found.append(node)
            continue
        for child in children_in_visit_order(node):
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
                pending.append(child)
    return found


def _bound_only_by_assignment(function: cst.FunctionDef, name: str) -> bool:
    """No parameter, loop, `with ... as`, augmented assignment, walrus or global binds `name`."""
    params = function.params
    every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    if any(p.name.value == name for p in every):
        return False
    pending: List[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.For, cst.CompFor)) and _names_in(node.target, name):
            return False
        if isinstance(node, cst.AsName) and _names_in(node.name, name):
            return False
        if isinstance(node, cst.AugAssign) and _names_in(node.target, name):
            return False
        if isinstance(node, cst.NamedExpr) and _names_in(node.target, name):
            return False
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == name for n in node.names):
                return False
        pending.extend(children_in_visit_order(node))
    return True


def _names_in(target: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(target))
