"""Per-file facts for the project's class flow (classflow.py): what each function's names may
hold, written as small portable values (plain tuples) computed from the same parse as the
rest of the summary.

A value (`Val`) is one of:
    ("ref", "losses.BCEDice" | "@Net")   a name bound by an import or defined at module level
    ("local", "model")                    a parameter or a name assigned in the function (or,
                                          at module level, a global)
    ("self", "model")                     `self.model` in a method
    ("call", callee, text, line)          a call: a constructor, a factory, a registry build
    ("attr", base, "build")               an attribute of a value (`MODELS.build`, `.module`)
    ("sub", base)                         `ARCHS[name]`
    ("tuple", (vals...))                  a tuple, list or dict literal (dict: its values)
    ("item", base, i)                     element i of a tuple unpacking
    ("half", inner, "float16")            `inner.half()`, `inner.to(torch.float16)`
    ("any", (vals...))                    `a if c else b`, `a or b`
    ("partial", inner)                    `functools.partial(Net, dim=8)`: calling it calls inner
Containers (`nn.Sequential(A(), B())`, `nn.ModuleList([...])`, a list filled by `.append`) are
tuples; `for blk in self.blocks` binds `blk` to ("sub", container).
Carriers that keep the module (`.cuda()`, `.eval()`, `DDP(m)`, `torch.compile(m)`,
`copy.deepcopy(m)`, `accelerator.prepare(m)`, `.module`) are dropped: the value is `m`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.facts.fp16 import half_cast_dtype
from amplint.facts.tree import Frame, dotted_name

Val = tuple

CHAIN = frozenset({
    "to", "cuda", "cpu", "float", "train", "eval", "requires_grad_", "share_memory",
    "to_empty", "zero_grad", "apply", "xpu", "mps",
})
WRAPPERS = frozenset({
    "torch.compile", "copy.deepcopy", "copy.copy",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.DistributedDataParallel",
    "torch.nn.parallel.DataParallel", "torch.nn.DataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
    "torch.jit.script",
    "apex.parallel.DistributedDataParallel", "mmcv.parallel.MMDataParallel",
    "mmcv.parallel.MMDistributedDataParallel",
})
CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
# methods of framework objects that hand back what they are given: (a, b) in, (a, b) out
PREPARE = frozenset({"prepare", "setup", "prepare_model"})
# attributes that keep the wrapped module
UNWRAP = frozenset({"module", "_orig_mod"})


@dataclass
class FlowFunction:
    params: Tuple[str, ...] = ()  # positional (self included), then keyword-only
    positional: int = 0
    defaults: Dict[str, Val] = field(default_factory=dict)
    annotations: Dict[str, Val] = field(default_factory=dict)  # ("annot", classes, text, line)
    assigns: Dict[str, List[Val]] = field(default_factory=dict)
    returns: List[Val] = field(default_factory=list)
    stores: List[Tuple[str, Val]] = field(default_factory=list)  # self.attr = value
    # calls that may bind parameters elsewhere: (callee's last name, callee, args, line);
    # args: (position or keyword, value)
    calls: List[Tuple[str, Val, Tuple[Tuple[object, Val], ...], int]] = field(default_factory=list)
    # calls the same-file analysis cannot resolve: (receiver, attr or "", text, line);
    # attr "": the receiver itself is called (its forward)
    dynamic: List[Tuple[Val, str, str, int]] = field(default_factory=list)
    is_classmethod: bool = False


@dataclass
class FlowFacts:
    functions: Dict[str, FlowFunction] = field(default_factory=dict)  # "" = module level
    registrations: List[Tuple[Val, str]] = field(default_factory=list)  # (registry, class)
    # calls under this file's own active regions that the same-file analysis cannot resolve:
    # (function key or "", receiver, attr, text, line, index into ModuleSummary.region_infos)
    roots: List[Tuple[str, Val, str, str, int, int]] = field(default_factory=list)
    globals: Set[str] = field(default_factory=set)


def _short(module: cst.Module, node: cst.CSTNode, limit: int = 48) -> str:
    """A call or a name as a message cites it, built without code generation:
    `build_model(cfg.model)`, `Net.from_pretrained(path, ...)`, `self.model`."""
    if isinstance(node, cst.Call):
        func = node.func
        name = dotted_name(func.value if isinstance(func, cst.Subscript) else func)
        head = (".".join(name) if name else "...") + ("[...]" if isinstance(func, cst.Subscript) else "")
        args = []
        for arg in node.args:
            value = dotted_name(arg.value)
            if value is None or len(args) == 3:
                args.append("...")
                break
            text = ".".join(value)
            args.append(f"{arg.keyword.value}={text}" if arg.keyword is not None else text)
        text = f"{head}({', '.join(args)})"
    elif isinstance(node, cst.Subscript):
        name = dotted_name(node.value)
        text = (".".join(name) if name else "...") + "[...]"
    else:
        name = dotted_name(node)
        text = ".".join(name) if name else "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


def frame_key(frame: Frame) -> Optional[str]:
    """A function's key in its module's summary: `Class.method`, `outer.inner`, `train`."""
    parts: List[str] = []
    current: Optional[Frame] = frame
    while current is not None and current.kind != "module":
        if current.kind in ("function", "class"):
            parts.append(current.name)
        current = current.parent
    return ".".join(reversed(parts)) if parts else None


class FlowCollector:
    """Fills FlowFacts for one file; `lines` markers are node ids until `finish(lines)`."""

    def __init__(self, summarizer) -> None:
        self.s = summarizer
        self.module = summarizer.module
        self.tree = summarizer.tree
        self.facts = FlowFacts()
        self._keys: Dict[int, str] = {}

    # -- values ---------------------------------------------------------------------------
    def key_of(self, frame: Frame) -> str:
        function = frame.function
        if function is None:
            return ""
        found = self._keys.get(id(function))
        if found is None:
            found = self._keys[id(function)] = frame_key(function) or ""
        return found

    def val(self, expr: cst.BaseExpression, frame: Frame, depth: int = 0) -> Optional[Val]:
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            if expr.value in ("self", "None", "True", "False"):
                return None
            ref = self.s.names.resolve((expr.value,), frame)
            if ref is not None:
                return ("ref", ref)
            if self._module_level(expr.value, frame):
                module_frame = self.tree.module_frame
                if expr.value in self.tree.classes or expr.value in module_frame.functions:
                    return ("ref", "@" + expr.value)
                if expr.value not in module_frame.bindings:
                    return None  # a builtin, or a name this file does not bind
            return ("local", expr.value)
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return ("self", expr.attr.value)
            name = dotted_name(expr)
            if name is not None:
                ref = self.s.names.resolve(name, frame)
                if ref is not None:
                    return ("ref", ref)
            base = self.val(expr.value, frame, depth + 1)
            if base is None:
                return None
            if expr.attr.value in UNWRAP:
                return base
            return ("attr", base, expr.attr.value)
        if isinstance(expr, cst.Call):
            return self._call(expr, frame, depth)
        if isinstance(expr, cst.Subscript):
            base = self.val(expr.value, frame, depth + 1)
            return ("sub", base) if base is not None else None
        if isinstance(expr, (cst.Tuple, cst.List)):
            items = tuple(self.val(e.value, frame, depth + 1) for e in expr.elements)
            return ("tuple", items)
        if isinstance(expr, cst.Dict):
            items = tuple(
                self.val(e.value, frame, depth + 1) for e in expr.elements
                if isinstance(e, cst.DictElement)
            )
            return ("tuple", items)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return ("tuple", (self.val(expr.elt, frame, depth + 1),))
        if isinstance(expr, cst.DictComp):
            return ("tuple", (self.val(expr.value, frame, depth + 1),))
        if isinstance(expr, cst.IfExp):
            return _any(self.val(expr.body, frame, depth + 1), self.val(expr.orelse, frame, depth + 1))
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            return _any(self.val(expr.left, frame, depth + 1), self.val(expr.right, frame, depth + 1))
        return None

    def _module_level(self, name: str, frame: Frame) -> bool:
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind != "class" and name in scope.bindings:
                return False
            scope = scope.parent
        return True

    def _call(self, call: cst.Call, frame: Frame, depth: int) -> Optional[Val]:
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            dtype = half_cast_dtype(call, frame)
            if dtype is not None:
                inner = self.val(func.value, frame, depth + 1)
                return ("half", inner, dtype) if inner is not None else None
            if method in CHAIN and not self._is_ref(func, frame):
                return self.val(func.value, frame, depth + 1)
            if method in PREPARE and len(call.args) == 1 and call.args[0].star == "":
                return self.val(call.args[0].value, frame, depth + 1)
        ref = self.s.names.resolve(dotted_name(func), frame) if dotted_name(func) else None
        if ref in CONTAINERS:
            return self._container(call, frame, depth)
        if ref == "functools.partial" and call.args and call.args[0].star == "":
            inner = self.val(call.args[0].value, frame, depth + 1)
            return ("partial", inner) if inner is not None else None
        name = dotted_name(func)
        if name and name[-1] == "build_from_cfg":
            registry = _first(_skip(call, 1), "registry", "registry")
            base = self.val(registry, frame, depth + 1) if registry is not None else None
            if base is None:
                return None
            return ("call", ("attr", base, "build"), _short(self.module, call), self._mark(call))
        if ref in WRAPPERS or (ref or "").endswith(".DistributedDataParallel"):
            arg = _first(call, "module", "model")
            return self.val(arg, frame, depth + 1) if arg is not None else None
        if ref is not None and ref.endswith("deepspeed.initialize"):
            arg = _first(call, "model", "model", keyword_only=True)
            return ("tuple", (self.val(arg, frame, depth + 1),)) if arg is not None else None
        callee = self.val(func, frame, depth + 1)
        if callee is None or callee[0] == "self":
            return None
        return ("call", callee, _short(self.module, call), self._mark(call))

    def _container(self, call: cst.Call, frame: Frame, depth: int) -> Optional[Val]:
        """`nn.Sequential(A(), B())`, `nn.Sequential(*layers)`, `nn.ModuleList([...])`,
        `nn.ModuleDict({...})`: a tuple of what it holds (calling it calls each)."""
        args = [a for a in call.args if a.keyword is None]
        if len(args) == 1 and (args[0].star == "*" or not isinstance(args[0].value, cst.Call)):
            return self.val(args[0].value, frame, depth + 1)
        if any(a.star for a in args):
            return None
        return ("tuple", tuple(self.val(a.value, frame, depth + 1) for a in args))

    def _is_ref(self, func: cst.Attribute, frame: Frame) -> bool:
        name = dotted_name(func)
        return bool(name) and self.s.names.resolve(name, frame) is not None

    def _mark(self, node: cst.CSTNode) -> int:
        self.s.want_line(node)
        return id(node)

    # -- the walk -------------------------------------------------------------------------
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
                for loop in _loops(frame.node.body):
                    self._loop(loop, frame)
        for name in tree.module_frame.bindings:
            self.facts.globals.add(name)
        self._registrations()
        return self.facts

    def _signature(self, frame: Frame) -> None:
        node = frame.node
        assert isinstance(node, cst.FunctionDef)
        function = self.function(self.key_of(frame))
        params = node.params
        positional = list(params.posonly_params) + list(params.params)
        function.params = tuple(p.name.value for p in positional + list(params.kwonly_params))
        function.positional = len(positional)
        parent = frame.parent
        for param in positional + list(params.kwonly_params):
            if param.default is not None and parent is not None:
                value = self.val(param.default, parent)
                if value is not None:
                    function.defaults[param.name.value] = value
        for param in positional + list(params.kwonly_params):
            if param.annotation is not None and parent is not None:
                value = self._annotation(param.annotation.annotation, parent)
                if value is not None:
                    written = self.module.code_for_node(param.annotation.annotation)
                    text = f"{param.name.value}: {written if len(written) <= 40 else written[:37] + '...'}"
                    function.annotations[param.name.value] = ("annot", value, text, self._mark(param))
        for dec in node.decorators:
            name = dotted_name(dec.decorator)
            if name and name[-1] == "classmethod":
                function.is_classmethod = True
        for stmt in _returns(node.body):
            if stmt.value is not None:
                value = self.val(stmt.value, frame)
                if value is not None:
                    function.returns.append(value)

    def _assign(self, site) -> None:
        frame = site.frame
        function = self.function(self.key_of(frame))
        value_node = site.value
        for target in site.targets:
            if isinstance(target, (cst.Tuple, cst.List)):
                names = [e.value for e in target.elements]
                items = self._unpack(value_node, frame, len(names))
                for index, (element, item) in enumerate(zip(names, items)):
                    self._store(function, element, item, frame)
                continue
            self._store(function, target, self.val(value_node, frame), frame)

    def _loop(self, loop: cst.For, frame: Frame) -> None:
        """`for blk in self.blocks:` (also `enumerate(...)`, `.items()`, `.values()`): the
        name holds the container's items."""
        target, source = loop.target, loop.iter
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            target = target.elements[1].value
            if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute):
                if source.func.attr.value != "items":
                    return
                source = source.func.value
            elif isinstance(source, cst.Call) and dotted_name(source.func) == ("enumerate",) and source.args:
                source = source.args[0].value
            else:
                return
        elif isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and (
            source.func.attr.value == "values" and not source.args
        ):
            source = source.func.value
        if not isinstance(target, cst.Name):
            return
        container = self.val(source, frame)
        if container is not None:
            self.function(self.key_of(frame)).assigns.setdefault(target.value, []).append(("sub", container))

    def _annotation(self, expr: cst.BaseExpression, frame: Frame, depth: int = 0) -> Optional[Val]:
        """The classes a parameter's annotation names: `Net`, `models.Net`, `"Net"`,
        `Optional[Net]`, `Union[A, B]`, `A | None`."""
        if depth > 4:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            value = self.val(expr, frame)
            if value is None or value[0] != "ref" or value[1].startswith(_NOT_PROJECT):
                return None
            return value
        if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
            try:
                parsed = cst.parse_expression(expr.evaluated_value)
            except cst.ParserSyntaxError:
                return None
            return self._annotation(parsed, frame, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
            return _any(self._annotation(expr.left, frame, depth + 1), self._annotation(expr.right, frame, depth + 1))
        if isinstance(expr, cst.Subscript) and (dotted_name(expr.value) or ("",))[-1] in ("Optional", "Union"):
            found = None
            for element in expr.slice:
                if isinstance(element.slice, cst.Index):
                    found = _any(found, self._annotation(element.slice.value, frame, depth + 1))
            return found
        return None

    def _unpack(self, value: cst.BaseExpression, frame: Frame, count: int) -> List[Optional[Val]]:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and (
            value.func.attr.value in PREPARE
        ):
            return [self.val(a.value, frame) if a.star == "" else None for a in value.args][:count]
        if isinstance(value, (cst.Tuple, cst.List)):
            return [self.val(e.value, frame) for e in value.elements][:count]
        whole = self.val(value, frame)
        if whole is None:
            return []
        return [("item", whole, index) for index in range(count)]

    def _store(self, function: FlowFunction, target, value: Optional[Val], frame: Frame) -> None:
        if value is None:
            return
        if isinstance(target, cst.Name):
            function.assigns.setdefault(target.value, []).append(value)
        elif (
            isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
            and target.value.value == "self" and frame.class_frame is not None
        ):
            function.stores.append((target.attr.value, value))

    def _registrations(self) -> None:
        module_frame = self.tree.module_frame
        for name, frame in self.tree.classes.items():
            if frame.parent is not module_frame:
                continue
            node = frame.node
            assert isinstance(node, cst.ClassDef)
            for dec in node.decorators:
                expr = dec.decorator
                if isinstance(expr, cst.Call):
                    expr = expr.func
                if isinstance(expr, cst.Attribute) and expr.attr.value in ("register_module", "register"):
                    registry = self.val(expr.value, module_frame)
                    if registry is not None:
                        self.facts.registrations.append((registry, name))

    # -- calls ----------------------------------------------------------------------------
    def call(self, site, dynamic: bool, root: Optional[int]) -> None:
        """Record a call: the arguments it binds, and (`dynamic`) what it calls when the
        same-file analysis cannot tell; `root`: the region index when under this file's region."""
        node = site.node
        frame = site.frame
        func = node.func
        key = self.key_of(frame)
        # `X.register(name)(cls)`, `X.register_module(module=cls)` at module level
        if key == "" and isinstance(func, (cst.Call, cst.Attribute)):
            self._call_registration(node, frame)
        name = dotted_name(func)
        if name is not None and len(name) == 2 and name[0] != "self" and name[-1] in ("append", "extend") and key:
            self._append(name, node, frame, key)
        bind_name, bind = name, node
        if name is not None and len(node.args) > 1 and name[-1] == "partial" and (
            self.s.names.resolve(name, frame) == "functools.partial" and not node.args[0].star
        ):  # `partial(train, model=net)` binds like a call of `train`
            bind_name = dotted_name(node.args[0].value)
            bind = _skip(node, 1).with_changes(func=node.args[0].value)
        if bind_name is not None and bind.args and bind_name[-1] not in CHAIN:
            args = []
            for position, arg in enumerate(bind.args):
                if arg.star:
                    break
                value = self.val(arg.value, frame)
                if value is not None and value[0] in ("local", "self", "call", "attr", "half", "sub"):
                    args.append((arg.keyword.value if arg.keyword else position, value))
            if args:
                callee = self.val(bind.func, frame)
                if callee is not None:
                    self.function(key).calls.append((bind_name[-1], callee, tuple(args), self._mark(node)))
        if not dynamic:
            return
        receiver, attr = self._receiver(func, frame)
        if receiver is None or attr in CHAIN or attr in _NOT_MODULE_CALLS:
            return
        text = _short(self.module, func, 40)
        if root is not None:
            self.facts.roots.append((key, receiver, attr, text, self._mark(node), root))
        elif key:
            self.function(key).dynamic.append((receiver, attr, text, self._mark(node)))

    def _append(self, name, node: cst.Call, frame: Frame, key: str) -> None:
        """`layers.append(Block(d))`, `layers.extend(more)`: the list holds them."""
        if len(node.args) != 1 or node.args[0].star or self._module_level(name[0], frame):
            return
        item = self.val(node.args[0].value, frame)
        if item is not None:
            held = ("tuple", (item,)) if name[-1] == "append" else item
            self.function(key).assigns.setdefault(name[0], []).append(held)

    def _receiver(self, func, frame: Frame) -> Tuple[Optional[Val], str]:
        if isinstance(func, cst.Subscript):  # `self.heads[0](x)`, `self.heads[name](x)`
            value = self.val(func, frame)
            if value is not None and value[1][0] in ("local", "self", "attr"):
                return value, ""
            return None, ""
        if isinstance(func, cst.Name):
            value = self.val(func, frame)
            return (value, "") if value is not None and value[0] == "local" else (None, "")
        if isinstance(func, cst.Attribute):
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                return ("self", func.attr.value), ""
            if dotted_name(func) is not None and self.s.names.resolve(dotted_name(func), frame):
                return None, ""
            base = self.val(func.value, frame)
            if base is not None and base[0] in ("local", "self", "attr"):
                if func.attr.value in UNWRAP:
                    return base, ""
                return base, func.attr.value
        return None, ""

    def _call_registration(self, node: cst.Call, frame: Frame) -> None:
        func = node.func
        if isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) and (
            func.func.attr.value in ("register", "register_module") and node.args
        ):
            cls = dotted_name(node.args[0].value)
            registry = self.val(func.func.value, frame)
        elif isinstance(func, cst.Attribute) and func.attr.value == "register_module":
            arg = _first(node, "module", "module", keyword_only=True)
            cls = dotted_name(arg) if arg is not None else None
            registry = self.val(func.value, frame)
        else:
            return
        if cls and len(cls) == 1 and cls[0] in self.tree.classes and registry is not None:
            self.facts.registrations.append((registry, cls[0]))

    def finish(self, lines: Dict[int, int]) -> None:
        def fix(value):
            if type(value) is not tuple or not value:
                return value
            if value[0] in ("call", "annot"):
                return (value[0], fix(value[1]), value[2], lines.get(value[3], 0))
            return tuple(fix(v) if type(v) is tuple else v for v in value)

        for function in self.facts.functions.values():
            function.defaults = {k: fix(v) for k, v in function.defaults.items()}
            function.annotations = {k: fix(v) for k, v in function.annotations.items()}
            function.assigns = {k: [fix(v) for v in vs] for k, vs in function.assigns.items()}
            function.returns = [fix(v) for v in function.returns]
            function.stores = [(a, fix(v)) for a, v in function.stores]
            function.calls = [
                (n, fix(c), tuple((k, fix(v)) for k, v in args), lines.get(line, 0))
                for n, c, args, line in function.calls
            ]
            function.dynamic = [(fix(r), a, t, lines.get(line, 0)) for r, a, t, line in function.dynamic]
        self.facts.registrations = [(fix(r), c) for r, c in self.facts.registrations]
        self.facts.roots = [
            (k, fix(r), a, t, lines.get(line, 0), i) for k, r, a, t, line, i in self.facts.roots
        ]


_NOT_PROJECT = ("torch.", "typing.", "numpy.", "collections.", "?")
_NOT_MODULE_CALLS = frozenset({
    "parameters", "named_parameters", "state_dict", "load_state_dict", "step", "backward",
    "item", "update", "scale", "unscale_", "zero_grad", "append", "extend", "get", "items",
    "keys", "values", "format", "join", "split", "modules", "children", "named_modules",
    "buffers", "register_buffer", "register_forward_hook", "add_module", "size", "dim",
})


def _any(a: Optional[Val], b: Optional[Val]) -> Optional[Val]:
    if a is None:
        return b
    if b is None:
        return a
    return ("any", (a, b))


def _first(call: cst.Call, keyword: str, other: str, keyword_only: bool = False):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in (keyword, other):
            return arg.value
    if not keyword_only and call.args and call.args[0].keyword is None and call.args[0].star == "":
        return call.args[0].value
    return None


def _skip(call: cst.Call, count: int) -> cst.Call:
    """`call` without its first `count` positional arguments."""
    return call.with_changes(args=[a for i, a in enumerate(call.args) if a.keyword is not None or i >= count])


def _loops(body) -> List[cst.For]:
    """The `for` statements of a function body (not of nested functions or classes)."""
    found: List[cst.For] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
            continue
        if isinstance(node, cst.For):
            found.append(node)
        if isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(node.body)
        elif isinstance(node, cst.BaseCompoundStatement):
            for name in ("body", "orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if isinstance(child, (list, tuple)):
                    stack.extend(child)
                elif child is not None:
                    stack.append(child)
        elif isinstance(node, (cst.Else, cst.ExceptHandler, cst.Finally)):
            stack.append(node.body)
    return found


def _returns(body) -> List[cst.Return]:
    """The return statements of a function body (not of nested functions or classes)."""
    found: List[cst.Return] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            found.extend(s for s in node.body if isinstance(s, cst.Return))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            stack.extend(node.body)
        elif isinstance(node, cst.BaseCompoundStatement):
            for name in ("body", "orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if child is None:
                    continue
                if isinstance(child, (list, tuple)):
                    stack.extend(child)
                else:
                    stack.append(child)
        elif isinstance(node, (cst.Else, cst.ExceptHandler, cst.Finally)):
            stack.append(node.body)
    return found
