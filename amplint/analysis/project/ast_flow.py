"""flowvalues.ValueReader and flowfacts.FlowCollector over Python's `ast` (ast_summary.py): the
same FlowFacts, value for value. Lines are taken when a node is marked (`self.s.line`)."""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Dict, List, Optional, Tuple

from amplint.analysis.data.call_names import NOT_MODULE_CALLS, TEST_CASE_HELPER
from amplint.analysis.facts.fp16 import HALF
from amplint.analysis.facts.names import resolve
from amplint.analysis.facts.regions import DTYPES
from amplint.analysis.facts.tree import Frame
from amplint.analysis.project.ast_tree import Refused, call_args, dotted, own_statements
from amplint.analysis.project.flowfacts import FlowFacts, FlowFunction, frame_key
from amplint.analysis.project.flowvalues import (
    CHAIN, CONTAINERS, HUB_MODEL, PREPARE, UNWRAP, WRAPPERS, Val, _NOT_PROJECT, _any,
)

Args = List[Tuple[Optional[str], str, ast.expr]]  # (keyword, star, value), as call_args gives


def first_arg(args: Args, keyword: str, other: str, keyword_only: bool = False):
    for name, _, value in args:
        if name is not None and name in (keyword, other):
            return value
    if not keyword_only and args and args[0][0] is None and args[0][1] == "":
        return args[0][2]
    return None


def without_positional(args: Args, count: int) -> Args:
    return [a for i, a in enumerate(args) if a[0] is not None or i >= count]


def short_text(func, args: Optional[Args], limit: int = 48) -> str:
    """flowvalues.short_text: `func(args)` for a call (args not None), else the name."""
    if args is not None:
        name = dotted(func.value if type(func) is ast.Subscript else func)
        head = (".".join(name) if name else "...") + ("[...]" if type(func) is ast.Subscript else "")
        parts = []
        for keyword, _, value in args:
            value_name = dotted(value)
            if value_name is None or len(parts) == 3:
                parts.append("...")
                break
            text = ".".join(value_name)
            parts.append(f"{keyword}={text}" if keyword is not None else text)
        text = f"{head}({', '.join(parts)})"
    elif type(func) is ast.Subscript:
        name = dotted(func.value)
        text = (".".join(name) if name else "...") + "[...]"
    else:
        name = dotted(func)
        text = ".".join(name) if name else "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


class AstValueReader:
    """Needs `self.s` (the summarizer: names, tree, line(node), text(node)) and `self.tree`."""

    def val(self, expr, frame: Frame, depth: int = 0) -> Optional[Val]:
        if depth > 8:
            return None
        kind = type(expr)
        if kind is ast.Name:
            if expr.id == "self":
                return None
            ref = self.s.names.resolve((expr.id,), frame)
            if ref is not None:
                return ("ref", ref)
            if self._module_level(expr.id, frame):
                module_frame = self.tree.module_frame
                if expr.id in self.tree.classes or expr.id in module_frame.functions:
                    return ("ref", "@" + expr.id)
                if expr.id not in module_frame.bindings:
                    return None
            return ("local", expr.id)
        if kind is ast.Attribute:
            if type(expr.value) is ast.Name and expr.value.id == "self":
                return ("self", expr.attr)
            name = dotted(expr)
            if name is not None:
                ref = self.s.names.resolve(name, frame)
                if ref is not None:
                    return ("ref", ref)
            base = self.val(expr.value, frame, depth + 1)
            if base is None:
                return None
            if expr.attr in UNWRAP:
                return base
            return ("attr", base, expr.attr)
        if kind is ast.Call:
            return self._call(expr, frame, depth)
        if kind is ast.Subscript:
            base = self.val(expr.value, frame, depth + 1)
            return ("sub", base) if base is not None else None
        if kind in (ast.Tuple, ast.List):
            return ("tuple", tuple(self.val(_unstar(e), frame, depth + 1) for e in expr.elts))
        if kind is ast.Dict:
            return ("tuple", tuple(
                self.val(v, frame, depth + 1) for k, v in zip(expr.keys, expr.values) if k is not None
            ))
        if kind in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return ("tuple", (self.val(expr.elt, frame, depth + 1),))
        if kind is ast.DictComp:
            return ("tuple", (self.val(expr.value, frame, depth + 1),))
        if kind is ast.IfExp:
            return _any(self.val(expr.body, frame, depth + 1), self.val(expr.orelse, frame, depth + 1))
        if kind is ast.BoolOp and type(expr.op) is ast.Or:
            # LibCST nests `a or b or c` to the left: ((a or b) or c)
            found = self.val(expr.values[0], frame, depth + 1)
            for value in expr.values[1:]:
                found = _any(found, self.val(value, frame, depth + 1))
            return found
        return None

    def _module_level(self, name: str, frame: Frame) -> bool:
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind != "class" and name in scope.bindings:
                return False
            scope = scope.parent
        return True

    def _call(self, call: ast.Call, frame: Frame, depth: int) -> Optional[Val]:
        func = call.func
        args = call_args(call)
        if type(func) is ast.Attribute:
            method = func.attr
            dtype = _half_cast_dtype(method, args, frame)
            if dtype is not None:
                inner = self.val(func.value, frame, depth + 1)
                return ("half", inner, dtype) if inner is not None else None
            if method in CHAIN and not self._is_ref(func, frame):
                return self.val(func.value, frame, depth + 1)
            if method in PREPARE and len(args) == 1 and args[0][1] == "":
                return self.val(args[0][2], frame, depth + 1)
        name = dotted(func)
        ref = self.s.names.resolve(name, frame) if name else None
        if ref in CONTAINERS:
            return self._container(args, frame, depth)
        if ref == "functools.partial" and args and args[0][1] == "":
            inner = self.val(args[0][2], frame, depth + 1)
            return ("partial", inner) if inner is not None else None
        if name and name[-1] == "build_from_cfg":
            registry = first_arg(without_positional(args, 1), "registry", "registry")
            base = self.val(registry, frame, depth + 1) if registry is not None else None
            if base is None:
                return None
            return ("call", ("attr", base, "build"), short_text(func, args), self.s.line(call))
        if ref in WRAPPERS or (ref or "").endswith(".DistributedDataParallel"):
            arg = first_arg(args, "module", "model")
            return self.val(arg, frame, depth + 1) if arg is not None else None
        if ref is not None and ref.endswith("deepspeed.initialize"):
            arg = first_arg(args, "model", "model", keyword_only=True)
            return ("tuple", (self.val(arg, frame, depth + 1),)) if arg is not None else None
        callee = self.val(func, frame, depth + 1)
        if callee is None or callee[0] == "self":
            return None
        if name and name[-1] == "create_model":
            callee = ("model_name", callee, self._model_name(first_arg(args, "model_name", "model_name")))
        return ("call", callee, short_text(func, args), self.s.line(call))

    def _container(self, args: Args, frame: Frame, depth: int) -> Optional[Val]:
        args = [a for a in args if a[0] is None]
        if len(args) == 1 and (args[0][1] == "*" or type(args[0][2]) is not ast.Call):
            return self.val(args[0][2], frame, depth + 1)
        if any(a[1] for a in args):
            return None
        return ("tuple", tuple(self.val(a[2], frame, depth + 1) for a in args))

    def _annotation(self, expr, frame: Frame, depth: int = 0) -> Optional[Val]:
        if depth > 4:
            return None
        kind = type(expr)
        if kind in (ast.Name, ast.Attribute):
            value = self.val(expr, frame)
            if value is None or value[0] != "ref" or value[1].startswith(_NOT_PROJECT):
                return None
            return value
        if kind is ast.Constant and type(expr.value) is str and self.s.one_string(expr):
            text = expr.value
            if text != text.strip() or not _ANNOTATION_TEXT.fullmatch(text):
                raise Refused("string annotation")
            try:
                parsed = ast.parse(text, mode="eval").body
            except SyntaxError:
                return None
            return self._annotation(parsed, frame, depth + 1)
        if kind is ast.BinOp and type(expr.op) is ast.BitOr:
            return _any(self._annotation(expr.left, frame, depth + 1), self._annotation(expr.right, frame, depth + 1))
        if kind is ast.Subscript and (dotted(expr.value) or ("",))[-1] in ("Optional", "Union"):
            found = None
            for element in self.s.subscript_elements(expr):
                if type(element) is not ast.Slice:
                    found = _any(found, self._annotation(element, frame, depth + 1))
            return found
        return None

    def _is_ref(self, func, frame: Frame) -> bool:
        name = dotted(func)
        return bool(name) and self.s.names.resolve(name, frame) is not None

    def _model_name(self, arg) -> str:
        if type(arg) is ast.Constant and type(arg.value) is str and self.s.one_string(arg):
            value = arg.value
            if ":" in value or "/" in value:
                return HUB_MODEL
            return value.split(".", 1)[0]
        return ""


import re  # noqa: E402

_ANNOTATION_TEXT = re.compile(r"[\w.\[\], |]*")


def _unstar(expr):
    return expr.value if type(expr) is ast.Starred else expr


def _half_cast_dtype(method: str, args: Args, frame: Frame) -> Optional[str]:
    if method == "half" and not args:
        return "float16"
    if method == "bfloat16" and not args:
        return "bfloat16"
    if method in ("to", "type"):
        for keyword, _, value in args:
            if keyword is not None and keyword != "dtype":
                continue
            qualified = resolve(dotted(value), frame)
            dtype = DTYPES.get(qualified) if qualified is not None else None
            if dtype in HALF:
                return dtype
    return None


def string_count(segment: str) -> int:
    """How many string literals a literal's source text holds (implicit concatenation: > 1)."""
    try:
        return sum(1 for tok in tokenize.generate_tokens(io.StringIO(segment).readline) if tok.type == tokenize.STRING)
    except (tokenize.TokenError, SyntaxError):
        return 0


class AstFlowCollector(AstValueReader):
    """flowfacts.FlowCollector over `ast`: the same walk, values and order."""

    def __init__(self, summarizer) -> None:
        self.s = summarizer
        self.tree = summarizer.tree
        self.facts = FlowFacts()
        self._keys: Dict[int, str] = {}
        self._lambda_names: Optional[Dict[str, list]] = None
        self._statements: Dict[int, list] = {}

    def key_of(self, frame: Frame) -> str:
        function = frame.function
        if function is None:
            return ""
        found = self._keys.get(id(function))
        if found is None:
            found = self._keys[id(function)] = frame_key(function) or ""
        return found

    def _own(self, frame: Frame) -> list:
        found = self._statements.get(id(frame))
        if found is None:
            found = self._statements[id(frame)] = list(own_statements(frame.node.body, self.s.lines))
        return found

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
            if frame.kind == "function":
                for stmt in self._own(frame):
                    if type(stmt) in (ast.For, ast.AsyncFor):
                        self._loop(stmt, frame)
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
        for stmt in self._own(frame):
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
            self._store(function, target, self.val(site.value, frame), frame)

    def _loop(self, loop, frame: Frame) -> None:
        target, source = loop.target, loop.iter
        if type(target) is ast.Tuple and len(target.elts) == 2:
            target = _unstar(target.elts[1])
            if type(source) is ast.Call and type(source.func) is ast.Attribute:
                if source.func.attr != "items":
                    return
                source = source.func.value
            elif type(source) is ast.Call and dotted(source.func) == ("enumerate",) and call_args(source):
                source = call_args(source)[0][2]
            else:
                return
        elif type(source) is ast.Call and type(source.func) is ast.Attribute and (
            source.func.attr == "values" and not call_args(source)
        ):
            source = source.func.value
        if type(target) is not ast.Name:
            return
        container = self.val(source, frame)
        if container is not None:
            self.function(self.key_of(frame)).assigns.setdefault(target.id, []).append(("sub", container))

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
            function.assigns.setdefault(target.id, []).append(value)
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
        args = call_args(node)
        key = self.key_of(frame)
        if key == "" and type(func) in (ast.Call, ast.Attribute):
            self._call_registration(node, args, frame)
        name = dotted(func)
        if name is not None and name[-1] in ("append", "extend") and key and (
            (len(name) == 2 and name[0] != "self") or (len(name) == 3 and name[0] == "self")
        ):
            self._append(name, args, frame, key)
        bind_name, bind_func, bind_args = name, func, args
        if name is not None and len(args) > 1 and name[-1] == "partial" and (
            self.s.names.resolve(name, frame) == "functools.partial" and not args[0][1]
        ):
            bind_name = dotted(args[0][2])
            bind_func, bind_args = args[0][2], without_positional(args, 1)
        if bind_name is not None and bind_args and (bind_name[-1] not in CHAIN or len(bind_name) == 1):
            found = []
            for position, (keyword, star, value) in enumerate(bind_args):
                if star:
                    break
                held = self.val(value, frame)
                if held is not None and held[0] in ("local", "self", "call", "attr", "half", "sub"):
                    found.append((keyword if keyword is not None else position, held))
            if found:
                callee = self.val(bind_func, frame)
                if callee is not None:
                    self.function(key).calls.append((bind_name[-1], callee, tuple(found), self.s.line(node)))
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

    def _dynamic(self, func, node: ast.Call, frame: Frame, key: str, via: str) -> None:
        receiver, attr = self._receiver(func, frame)
        if receiver is None or attr in CHAIN or attr in NOT_MODULE_CALLS:
            return
        if receiver[0] == "self" and not attr and TEST_CASE_HELPER.fullmatch(receiver[1]):
            return
        if key:
            text = short_text(func, None, 40) + via
            self.function(key).dynamic.append((receiver, attr, text, self.s.line(node)))

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
        if len(args) != 1 or args[0][1]:
            return
        item = self.val(args[0][2], frame)
        if item is None:
            return
        held = ("tuple", (item,)) if name[-1] == "append" else item
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
            if dotted(func) is not None and self.s.names.resolve(dotted(func), frame):
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
