"""flowfacts.FlowCollector over Python's `ast` (ast_summary.py): the same FlowFacts, value for
value and in the same order. Lines are taken when a node is marked (`self.s.line`)."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from amplint.analysis.data.call_names import NOT_MODULE_CALLS, TEST_CASE_HELPER
from amplint.analysis.facts.tree import Frame
from amplint.analysis.project.ast_frames import function_key
from amplint.analysis.project.ast_tree import Refused, call_args, dotted, own_statements
from amplint.analysis.project.ast_values import (
    Args, AstValueReader, _half_cast_dtype, _unstar, first_arg, short_text, without_positional,
)
from amplint.analysis.project.flowfacts import PROPERTIES, FlowFacts, FlowFunction
from amplint.analysis.project.arm_locals import AST, ArmLocals
from amplint.analysis.project.loop_targets import ast_bound_names, ast_target_names, bind_parts, comprehended
from amplint.analysis.project.flowvalues import (
    ADDS_ITEMS, CHAIN, PREPARE, STATEMENT_CASTS, STATEMENT_METHODS, UNWRAP, Val, binds,
)


class AstFlowCollector(AstValueReader):
    """flowfacts.FlowCollector over `ast`: the same walk, values and order."""

    def __init__(self, summarizer) -> None:
        self.s = summarizer
        self.tree = summarizer.tree
        self.facts = FlowFacts()
        self._lambda_names: Optional[Dict[str, list]] = None
        self._statements: Dict[int, list] = {}
        self.comprehended = comprehended(self.tree, ast_bound_names)
        self.arms = ArmLocals(AST)

    def key_of(self, frame: Frame) -> str:
        function = frame.function
        return function_key(function) if function is not None else ""

    def _own(self, frame: Frame) -> list:
        found = self._statements.get(id(frame))
        if found is None:
            found = self._statements[id(frame)] = list(own_statements(frame.node.body, self.s.lines))
        return found

    def _own_of(self, frame: Frame, found: list) -> list:
        """Those of `found` (the walk's own statements of one kind) in own_statements' order:
        one or none needs no walk."""
        return found if len(found) < 2 else self._own(frame)

    def function(self, key: str) -> FlowFunction:
        found = self.facts.functions.get(key)
        if found is None:
            found = self.facts.functions[key] = FlowFunction()
        return found

    def collect(self) -> FlowFacts:
        tree = self.tree
        for frame in tree.frames:
            if frame.kind == "function":
                self._signature(frame)
        for site in tree.assigns:
            self._assign(site)
        for frame in tree.frames:
            if frame.kind == "function" and frame.loops:
                for stmt in self._own_of(frame, frame.loops):
                    if type(stmt) in (ast.For, ast.AsyncFor):
                        self._loop(stmt.target, stmt.iter, frame)
        for clause, frame in tree.comprehensions:
            names = self.comprehended.get(id(frame.scope), ())
            if frame.function is not None and all(name in names for name in ast_bound_names(clause.target)):
                self._loop(clause.target, clause.iter, frame)
        for name in tree.module_frame.bindings:
            self.facts.globals.add(name)
        self._registrations()
        return self.facts

    def _signature(self, frame: Frame) -> None:
        node = frame.node
        function = self.function(self.key_of(frame))
        params = node.args
        positional = list(params.posonlyargs) + list(params.args)
        function.params = tuple(p.arg for p in positional + list(params.kwonlyargs))
        function.positional = len(positional)
        defaults = [None] * (len(positional) - len(params.defaults)) + list(params.defaults)
        defaults += list(params.kw_defaults)
        parent = frame.parent
        for param, default in zip(positional + list(params.kwonlyargs), defaults):
            if default is not None and parent is not None:
                value = self.val(default, parent)
                if value is not None:
                    function.defaults[param.arg] = value
        for param in positional + list(params.kwonlyargs):
            if param.annotation is not None and parent is not None:
                value = self._annotation(param.annotation, parent)
                if value is not None:
                    written = self.s.annotation_text(param.annotation)
                    text = f"{param.arg}: {written if len(written) <= 40 else written[:37] + '...'}"
                    function.annotations[param.arg] = ("annot", value, text, self.s.line(param))
        for dec in node.decorator_list:
            name = dotted(dec)
            if name and name[-1] == "classmethod":
                function.is_classmethod = True
            elif name and name[-1] in PROPERTIES:
                function.is_property = True
        for stmt in self._own_of(frame, frame.returns):
            if type(stmt) is ast.Return and stmt.value is not None:
                value = self.val(stmt.value, frame)
                if value is not None:
                    function.returns.append(value)

    def _assign(self, site) -> None:
        frame = site.frame
        function = self.function(self.key_of(frame))
        for target in site.targets:
            if type(target) in (ast.Tuple, ast.List):
                names = [_unstar(e) for e in target.elts]
                items = self._unpack(site.value, frame, len(names))
                for element, item in zip(names, items):
                    self._store(function, element, item, frame)
                continue
            value = self.val(site.value, frame)
            if value is not None and value[0] == "half" and self._matched_arm(site.value, frame):
                value = value[1]
            elif value is None and type(target) is ast.Attribute:
                value = self.stored_self_call(site.value, frame)  # `self._store` keeps `self.x = ...` only
            self._store(function, target, value, frame)

    def _loop(self, target, source, frame: Frame) -> None:
        if type(target) is ast.Tuple and len(target.elts) == 2:
            if type(source) is ast.Call and type(source.func) is ast.Attribute:
                if source.func.attr != "items":
                    return self._unpacked(target, source, frame)
                source = source.func.value
            elif type(source) is ast.Call and dotted(source.func) == ("enumerate",) and call_args(source):
                source = call_args(source)[0][2]
            else:
                return self._unpacked(target, source, frame)
            target = _unstar(target.elts[1])
        elif type(source) is ast.Call and type(source.func) is ast.Attribute and (
            source.func.attr == "values" and not call_args(source)
        ):
            source = source.func.value
        if type(target) in (ast.Tuple, ast.List):
            return self._unpacked(target, source, frame)
        if type(target) is not ast.Name:
            return
        container = self.val(source, frame)
        if container is not None:
            self.function(self.key_of(frame)).assigns.setdefault(target.id, []).append(("sub", container))

    def _unpacked(self, target, source, frame: Frame) -> None:
        names = ast_target_names(target)
        if names is None:
            return
        zipped = type(source) is ast.Call and dotted(source.func) == ("zip",) and (
            self.val(source.func, frame) is None  # the builtin
        )
        if zipped:
            args = [a for a in call_args(source) if a[0] != "strict"]
            if len(args) != len(target.elts) or any(star or keyword for keyword, star, _ in args):
                return
            parts = [self.val(value, frame) for _, _, value in args]
        else:
            whole = self.val(source, frame)
            parts = [("part", ("sub", whole), i) if whole is not None else None for i in range(len(names))]
        assigns = self.function(self.key_of(frame)).assigns
        for name, part in zip(names, parts):
            if part is None:
                continue
            if zipped:
                part = ("sub", part)
            bind_parts(assigns, name, part)

    def _unpack(self, value, frame: Frame, count: int) -> List[Optional[Val]]:
        if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in PREPARE:
            return [self.val(v, frame) if star == "" else None for _, star, v in call_args(value)][:count]
        if type(value) in (ast.Tuple, ast.List):
            return [self.val(_unstar(e), frame) for e in value.elts][:count]
        whole = self.val(value, frame)
        if whole is None:
            return []
        return [("item", whole, index) for index in range(count)]

    def _store(self, function: FlowFunction, target, value: Optional[Val], frame: Frame) -> None:
        if value is None:
            return
        if type(target) is ast.Name:
            values = function.assigns.setdefault(target.id, [])
            values.append(value)
            self.arms.stored(target, values)
            if frame.kind == "class" and frame.parent is self.tree.module_frame:
                self.function(frame.name).stores.append((target.id, value))
        elif (
            type(target) is ast.Attribute and type(target.value) is ast.Name
            and target.value.id == "self" and frame.class_frame is not None
        ):
            function.stores.append((target.attr, value))

    def _registrations(self) -> None:
        module_frame = self.tree.module_frame
        for name, frame in self.tree.classes.items():
            if frame.parent is not module_frame:
                continue
            for dec in frame.node.decorator_list:
                expr = dec.func if type(dec) is ast.Call else dec
                if type(expr) is ast.Attribute and expr.attr in ("register_module", "register"):
                    registry = self.val(expr.value, module_frame)
                    if registry is not None:
                        self.facts.registrations.append((registry, name))
        for name, frame in module_frame.functions.items():
            for dec in frame.node.decorator_list:
                expr = dec.func if type(dec) is ast.Call else dec
                ref = self.val(expr, module_frame)
                if ref is not None and ref[0] == "ref" and ref[1].startswith("timm.") and ref[1].endswith(".register_model"):
                    self.facts.timm_models.append(name)

    # -- calls ----------------------------------------------------------------------------
    def call(self, site, dynamic: bool) -> None:
        node = site.node
        frame = site.frame
        func = node.func
        args = site.args
        key = self.key_of(frame)
        if key == "" and type(func) in (ast.Call, ast.Attribute):
            self._call_registration(node, args, frame)
        name = site.dotted
        if name is not None and name[-1] in ADDS_ITEMS and key and (
            (len(name) == 2 and name[0] != "self") or (len(name) == 3 and name[0] == "self")
        ):
            self._append(name, args, frame, key)
        bind_name, bind_func, bind_args = name, func, args
        if name is not None and len(args) > 1 and name[-1] == "partial" and (
            self.s.names.resolve(name, frame) == "functools.partial" and not args[0][1]
        ):
            bind_name = dotted(args[0][2])
            bind_func, bind_args = args[0][2], without_positional(args, 1)
        elif name is None:
            base = _super_init_base(func, frame)
            if base is not None:
                bind_name, bind_func = dotted(base), base
            elif type(func) is ast.IfExp and dotted(func.body) is not None and dotted(func.orelse) is not None:
                for branch in (func.body, func.orelse):
                    self._bind(dotted(branch), branch, args, frame, key, node)
                bind_name = None
        self._bind(bind_name, bind_func, bind_args, frame, key, node)
        if not dynamic:
            return
        lambdas = self._lambdas(func)
        if lambdas:
            for body in lambdas:
                calls = [n for n in ast.walk(body) if type(n) is ast.Call]
                if len(calls) > 1:
                    raise Refused("a called lambda with several calls (iter_nodes order)")
                for call in calls:
                    self._dynamic(call.func, node, frame, key, f" (in lambda {func.id})")
            return
        self._dynamic(func, node, frame, key, "")

    def _bind(self, bind_name, bind_func, bind_args, frame: Frame, key: str, node: ast.Call) -> None:
        if bind_name is not None and bind_args and (
            bind_name[-1] not in CHAIN or len(bind_name) == 1 or bind_name[-1] == "apply"  # converters.py
        ):
            found = []
            for position, (keyword, star, value) in enumerate(bind_args):
                if star:
                    break
                if type(value) is ast.Constant:  # holds nothing
                    continue
                held = self.val(value, frame)
                if held is not None and binds(held):
                    found.append((keyword if keyword is not None else position, held))
            if found:
                callee = self.val(bind_func, frame)
                if callee is not None:
                    self.function(key).calls.append((bind_name[-1], callee, tuple(found), self.s.line(node)))

    def _dynamic(self, func, node: ast.Call, frame: Frame, key: str, via: str) -> None:
        receiver, attr = self._receiver(func, frame)
        if attr in ("to", "type") and func is node.func:  # `model.to(torch.float16)`: `model.half()`
            args = self.s.sites[id(node)].args if id(node) in self.s.sites else call_args(node)
            attr = STATEMENT_METHODS.get(_half_cast_dtype(attr, args, frame) or "", attr)
        if receiver is None or attr in CHAIN or attr in NOT_MODULE_CALLS:
            return
        if receiver[0] == "self" and not attr and TEST_CASE_HELPER.fullmatch(receiver[1]):
            return
        if attr in STATEMENT_CASTS and self._matched_arm(node, frame):
            return
        if key:
            text = short_text(func, None, 40) + via
            self.function(key).dynamic.append((receiver, attr, text, self.s.line(node)))

    def _matched_arm(self, node: ast.Call, frame: Frame) -> bool:
        """flowfacts.FlowCollector._matched_arm over `ast`."""
        function = frame.function
        for expr in ast.walk(function.node) if function is not None else ():
            if type(expr) is ast.IfExp and (expr.body is node or expr.orelse is node):
                test = expr.test
            elif type(expr) is ast.If and any(
                    type(stmt) in (ast.Expr, ast.Assign) and stmt.value is node
                    for stmt in expr.body + expr.orelse):  # an `elif` is an If of its own
                test = expr.test
            else:
                continue
            cast = self.val(node, frame)
            return cast is not None and self._matched_cast(cast, test, frame, 0) != cast
        return False

    def _lambdas(self, func) -> list:
        if type(func) is not ast.Name:
            return []
        if self._lambda_names is None:
            self._lambda_names = {}
            for site in self.tree.assigns:
                for target in site.targets:
                    if type(target) is ast.Name:
                        self._lambda_names.setdefault(target.id, []).append(site.value)
        values = self._lambda_names.get(func.id, [])
        if not values or not all(type(v) is ast.Lambda for v in values):
            return []
        return [v.body for v in values]

    def _append(self, name, args: Args, frame: Frame, key: str) -> None:
        """`x.append(v)`, `x.insert(i, v)`, `x.add(v)`, `x.appendleft(v)`: v is one more item
        of what x holds; `x.extend(vs)`: vs's items are."""
        position = 1 if name[-1] == "insert" else 0
        if len(args) != position + 1 or any(arg[1] for arg in args):
            return
        item = self.val(args[position][2], frame)
        if item is None:
            return
        held = item if name[-1] == "extend" else ("tuple", (item,))
        if name[0] == "self":
            if frame.class_frame is not None:
                self.function(key).stores.append((name[1], held))
        elif not self._module_level(name[0], frame):
            self.function(key).assigns.setdefault(name[0], []).append(held)

    def _receiver(self, func, frame: Frame):
        kind = type(func)
        if kind is ast.Subscript:
            value = self.val(func, frame)
            if value is not None and value[1][0] in ("local", "self", "attr"):
                return value, ""
            return None, ""
        if kind is ast.Name:
            value = self.val(func, frame)
            return (value, "") if value is not None and value[0] == "local" else (None, "")
        if kind is ast.Attribute:
            if type(func.value) is ast.Name and func.value.id == "self":
                return ("self", func.attr), ""
            name = dotted(func)
            if name is not None and self.s.names.resolve(name, frame):
                return None, ""
            base = self.val(func.value, frame)
            if base is not None and base[0] in ("local", "self", "attr"):
                if func.attr in UNWRAP:
                    return base, ""
                return base, func.attr
        return None, ""

    def _call_registration(self, node: ast.Call, args: Args, frame: Frame) -> None:
        func = node.func
        if type(func) is ast.Call and type(func.func) is ast.Attribute and (
            func.func.attr in ("register", "register_module") and args
        ):
            cls = dotted(args[0][2])
            registry = self.val(func.func.value, frame)
        elif type(func) is ast.Attribute and func.attr == "register_module":
            arg = first_arg(args, "module", "module", keyword_only=True)
            cls = dotted(arg) if arg is not None else None
            registry = self.val(func.value, frame)
        else:
            return
        if cls and len(cls) == 1 and cls[0] in self.tree.classes and registry is not None:
            self.facts.registrations.append((registry, cls[0]))


def _super_init_base(func, frame: Frame):
    """flowfacts._super_init_base for `ast`."""
    if not (type(func) is ast.Attribute and func.attr == "__init__" and type(func.value) is ast.Call
            and type(func.value.func) is ast.Name and func.value.func.id == "super"):
        return None
    cls = frame.class_frame
    bases = cls.node.bases if cls is not None and type(cls.node) is ast.ClassDef else ()
    if not bases or dotted(bases[0]) is None:
        return None
    args = func.value.args
    if args and not (type(args[0]) is ast.Name and args[0].id == cls.name):
        return None
    return bases[0]

