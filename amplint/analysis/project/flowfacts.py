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
    ("part", base, i)                     element i of a loop target's unpacking (`for a, b in
                                          self.pairs`): a tuple's item i, nothing else
    ("half", inner, "float16")            `inner.half()`, `inner.to(torch.float16)`
    ("any", (vals...))                    `a if c else b`, `a or b`
    ("partial", inner)                    `functools.partial(Net, dim=8)`: calling it calls inner
    ("wrap", inner, text, line)           `nn.DataParallel(inner)`: holds what inner holds, each
                                          marked as wrapped (AMP153's replica threads)
    ("unwrap", inner)                     `inner.module`, `inner._orig_mod`: what inner holds,
                                          never marked wrapped
    ("model_name", callee, name)          the callee of `create_model("vit_small", ...)`; name ""
                                          when not a literal
    ("lookup", base, key, text, line)     `getattr(models, args.arch)`, `models.__dict__[name]`:
                                          key (a "local" or "attr" value, or the literal str of
                                          `getattr(models, "Net")` on a reference) names the attribute
`getattr(obj, "net")` on any other value is ("attr", obj, "net");
`importlib.import_module("pkg." + "models")` is ("ref", "pkg.models") when every part is a literal.
Containers (`nn.Sequential(A(), B())`, `nn.ModuleList([...])`, a list filled by `.append`) are
tuples; `for blk in self.blocks` binds `blk` to ("sub", container).
Carriers that keep the module (`.cuda()`, `.eval()`, `DDP(m)`, `torch.compile(m)`,
`copy.deepcopy(m)`, `accelerator.prepare(m)`, `.module`) are dropped: the value is `m`'s
(`nn.DataParallel(m)` is `m`'s too, marked: the "wrap" value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data.call_names import NOT_MODULE_CALLS as _NOT_MODULE_CALLS, TEST_CASE_HELPER
from amplint.analysis.facts.fp16 import half_cast_dtype
from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes, own_statements
from amplint.analysis.project.flowvalues import (
    ADDS_ITEMS, CHAIN, PREPARE, STATEMENT_CASTS, STATEMENT_METHODS, UNWRAP, Val, ValueReader, binds, first_arg,
    short_text,
    super_init_base, without_positional,
)
from amplint.analysis.project.arm_locals import CST, ArmLocals
from amplint.analysis.project.loop_targets import bind_parts, comprehended, cst_bound_names, cst_target_names

PROPERTIES = frozenset({"property", "cached_property"})  # decorators whose method is read as a value


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
    is_property: bool = False  # `@property` / `@functools.cached_property`: read, not called


@dataclass
class FlowFacts:
    functions: Dict[str, FlowFunction] = field(default_factory=dict)  # "" = module level
    registrations: List[Tuple[Val, str]] = field(default_factory=list)  # (registry, class)
    # module-level functions registered with timm's `@register_model` (`timm.create_model`
    # builds them by name)
    timm_models: List[str] = field(default_factory=list)
    # calls under this file's own active regions that the same-file analysis cannot resolve:
    # (function key or "", receiver, attr, text, line, index into ModuleSummary.region_infos)
    roots: List[Tuple[str, Val, str, str, int, int]] = field(default_factory=list)
    # the same, in a same-file function that such a region calls (`self.shared_step(batch)` under
    # the region, whose body calls `self.loss(...)`): the file's analysis decides that function's
    # region, so the project pass does not propagate from it; seeded from here instead
    helper_roots: List[Tuple[str, Val, str, str, int, int]] = field(default_factory=list)
    globals: Set[str] = field(default_factory=set)


def frame_key(frame: Frame) -> Optional[str]:
    """A function's key in its module's summary: `Class.method`, `outer.inner`, `train`."""
    parts: List[str] = []
    current: Optional[Frame] = frame
    while current is not None and current.kind != "module":
        if current.kind in ("function", "class"):
            parts.append(current.name)
        current = current.parent
    return ".".join(reversed(parts)) if parts else None


class FlowCollector(ValueReader):
    """Fills FlowFacts for one file; `lines` markers are node ids until `finish(lines)`."""

    def __init__(self, summarizer) -> None:
        self.s = summarizer
        self.module = summarizer.module
        self.tree = summarizer.tree
        self.facts = FlowFacts()
        self._keys: Dict[int, str] = {}
        self._lambda_names: Optional[Dict[str, List[cst.BaseExpression]]] = None
        self.comprehended = comprehended(self.tree, cst_bound_names)
        self.arms = ArmLocals(CST)

    def key_of(self, frame: Frame) -> str:
        function = frame.function
        if function is None:
            return ""
        found = self._keys.get(id(function))
        if found is None:
            found = self._keys[id(function)] = frame_key(function) or ""
        return found

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
                    self._loop(loop.target, loop.iter, frame)
        for clause, frame in tree.comprehensions:  # `[m(x) for m, x in zip(self.convs, feats)]`
            names = self.comprehended.get(id(frame.scope), ())
            if frame.function is not None and all(name in names for name in cst_bound_names(clause.target)):
                self._loop(clause.target, clause.iter, frame)
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
            elif name and name[-1] in PROPERTIES:
                function.is_property = True
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
            value = self.val(value_node, frame)
            if value is not None and value[0] == "half" and self._matched_arm(value_node, frame):
                value = value[1]
            elif value is None and isinstance(target, cst.Attribute):
                value = self.stored_self_call(value_node, frame)  # `self._store` keeps `self.x = ...` only
            self._store(function, target, value, frame)

    def _loop(self, target: cst.BaseExpression, source: cst.BaseExpression, frame: Frame) -> None:
        """`for blk in self.blocks:` (also `enumerate(...)`, `.items()`, `.values()`, and a
        comprehension's `for`): the name holds the container's items. A tuple target takes the
        items apart (`for attn, ff in self.layers`, `for kind, (norm, block) in zip(self.kinds, self.layers)`)."""
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute):
                if source.func.attr.value != "items":
                    return self._unpacked(target, source, frame)
                source = source.func.value
            elif isinstance(source, cst.Call) and dotted_name(source.func) == ("enumerate",) and source.args:
                source = source.args[0].value
            else:
                return self._unpacked(target, source, frame)
            target = target.elements[1].value
        elif isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and (
            source.func.attr.value == "values" and not source.args
        ):
            source = source.func.value
        if isinstance(target, (cst.Tuple, cst.List)):
            return self._unpacked(target, source, frame)
        if not isinstance(target, cst.Name):
            return
        container = self.val(source, frame)
        if container is not None:
            self.function(self.key_of(frame)).assigns.setdefault(target.value, []).append(("sub", container))

    def _unpacked(self, target, source: cst.BaseExpression, frame: Frame) -> None:
        """A loop's tuple target: over `zip(A, B)` each name takes its own container's items;
        over one container, element i of each item (an item that is no tuple gives nothing)."""
        names = cst_target_names(target)
        if names is None:
            return
        zipped = isinstance(source, cst.Call) and dotted_name(source.func) == ("zip",) and (
            self.val(source.func, frame) is None  # the builtin
        )
        if zipped:
            args = [a for a in source.args if a.keyword is None or a.keyword.value != "strict"]
            if len(args) != len(target.elements) or any(a.star or a.keyword for a in args):
                return
            parts = [self.val(a.value, frame) for a in args]
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
            values = function.assigns.setdefault(target.value, [])
            values.append(value)
            self.arms.stored(target, values)
            if frame.kind == "class" and frame.parent is self.tree.module_frame:  # `Runner = Runner` in a class body
                self.function(frame.name).stores.append((target.value, value))
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
        for name, frame in module_frame.functions.items():
            node = frame.node
            for dec in getattr(node, "decorators", ()):
                expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
                ref = self.val(expr, module_frame)
                if ref is not None and ref[0] == "ref" and ref[1].startswith("timm.") and ref[1].endswith(".register_model"):
                    self.facts.timm_models.append(name)

    # -- calls ----------------------------------------------------------------------------
    def call(self, site, dynamic: bool, root: Optional[int], reached: Optional[int] = None) -> None:
        """Record a call: the arguments it binds, and (`dynamic`) what it calls when the
        same-file analysis cannot tell; `root`: the region index when under this file's region;
        `reached`: that index when in a same-file function such a region calls."""
        node = site.node
        frame = site.frame
        func = node.func
        key = self.key_of(frame)
        # `X.register(name)(cls)`, `X.register_module(module=cls)` at module level
        if key == "" and isinstance(func, (cst.Call, cst.Attribute)):
            self._call_registration(node, frame)
        name = dotted_name(func)
        if name is not None and name[-1] in ADDS_ITEMS and key and (
            (len(name) == 2 and name[0] != "self") or (len(name) == 3 and name[0] == "self")
        ):
            self._append(name, node, frame, key)
        bind_name, bind = name, node
        if name is not None and len(node.args) > 1 and name[-1] == "partial" and (
            self.s.names.resolve(name, frame) == "functools.partial" and not node.args[0].star
        ):  # `partial(train, model=net)` binds like a call of `train`
            bind_name = dotted_name(node.args[0].value)
            bind = without_positional(node, 1).with_changes(func=node.args[0].value)
        elif name is None:
            base = super_init_base(func, frame)
            if base is not None:  # `super().__init__(model)` binds like a call of the first base
                bind_name, bind = dotted_name(base), node.with_changes(func=base)
            elif isinstance(func, cst.IfExp) and all(  # `(AMPTrainer if amp else SimpleTrainer)(model)`
                dotted_name(branch) is not None for branch in (func.body, func.orelse)
            ):
                for branch in (func.body, func.orelse):
                    self._bind(dotted_name(branch), node.with_changes(func=branch), frame, key, node)
                bind_name = None
        self._bind(bind_name, bind, frame, key, node)
        if not dynamic:
            return
        lambdas = self._lambdas(func)
        if lambdas:  # `decode = lambda l: enc.decode(l)`: calling it runs the body's calls
            for call in (n for body in lambdas for n in iter_nodes(body) if isinstance(n, cst.Call)):
                self._dynamic(call.func, node, frame, key, root, f" (in lambda {func.value})", reached)
            return
        self._dynamic(func, node, frame, key, root, "", reached)

    def _bind(self, bind_name, bind: cst.Call, frame: Frame, key: str, node: cst.Call) -> None:
        # a chain method (`model.train(False)`) binds nothing; a plain name does (`train(model, ...)`:
        # fairseq_cli/train.py's `train`, a project's `eval`)
        if bind_name is not None and bind.args and (
            bind_name[-1] not in CHAIN or len(bind_name) == 1 or bind_name[-1] == "apply"  # converters.py
        ):
            args = []
            for position, arg in enumerate(bind.args):
                if arg.star:
                    break
                value = self.val(arg.value, frame)
                if binds(value):
                    args.append((arg.keyword.value if arg.keyword else position, value))
            if args:
                callee = self.val(bind.func, frame)
                if callee is not None:
                    self.function(key).calls.append((bind_name[-1], callee, tuple(args), self._mark(node)))

    def _dynamic(self, func, node: cst.Call, frame: Frame, key: str, root, via: str,
                 reached: Optional[int] = None) -> None:
        receiver, attr = self._receiver(func, frame)
        if attr in ("to", "type") and func is node.func:  # `model.to(torch.float16)`: `model.half()`
            attr = STATEMENT_METHODS.get(half_cast_dtype(node, frame) or "", attr)
        if receiver is None or attr in CHAIN or attr in _NOT_MODULE_CALLS:
            return
        if receiver[0] == "self" and not attr and TEST_CASE_HELPER.fullmatch(receiver[1]):
            return  # `self.assertEqual(...)`: unittest's, not a stored model
        if attr in STATEMENT_CASTS and self._matched_arm(node, frame):
            return
        text = short_text(self.module, func, 40) + via
        if root is not None:
            self.facts.roots.append((key, receiver, attr, text, self._mark(node), root))
        elif key:
            self.function(key).dynamic.append((receiver, attr, text, self._mark(node)))
            if reached is not None:
                self.facts.helper_roots.append((key, receiver, attr, text, self._mark(node), reached))

    def _matched_arm(self, node: cst.BaseExpression, frame: Frame) -> bool:
        """`m.half() if x.dtype is torch.float16 else m`, `if x.dtype == torch.float16:
        model.half()` (or `model = model.half()`): the module is cast only when another value is
        half (ValueReader._matched_cast), which is no evidence of half."""
        function = frame.function
        for expr in iter_nodes(function.node) if function is not None else ():
            if isinstance(expr, cst.IfExp) and (expr.body is node or expr.orelse is node):
                test = expr.test
            elif isinstance(expr, cst.If) and any(_holds(stmt, node) for stmt in _arm_statements(expr)):
                test = expr.test
            else:
                continue
            cast = self.val(node, frame)
            return cast is not None and self._matched_cast(cast, test, frame, 0) != cast
        return False

    def _lambdas(self, func) -> List[cst.BaseExpression]:
        """The bodies of the lambdas a called name is bound to, when it is bound to nothing
        else in the file."""
        if not isinstance(func, cst.Name):
            return []
        if self._lambda_names is None:
            self._lambda_names = {}
            for site in self.tree.assigns:
                for target in site.targets:
                    if isinstance(target, cst.Name):
                        self._lambda_names.setdefault(target.value, []).append(site.value)
        values = self._lambda_names.get(func.value, [])
        if not values or not all(isinstance(v, cst.Lambda) for v in values):
            return []
        return [v.body for v in values]

    def _append(self, name, node: cst.Call, frame: Frame, key: str) -> None:
        """`layers.append(Block(d))`, `hooks.insert(0, Hook())`: the container
        holds one more item; `layers.extend(more)`: it holds more's items."""
        position = 1 if name[-1] == "insert" else 0
        if len(node.args) != position + 1 or any(arg.star or arg.keyword for arg in node.args):
            return
        item = self.val(node.args[position].value, frame)
        if item is None:
            return
        held = item if name[-1] == "extend" else ("tuple", (item,))
        if name[0] == "self":  # `self.layers.append(Block(d))` in a method
            if frame.class_frame is not None:
                self.function(key).stores.append((name[1], held))
        elif not self._module_level(name[0], frame):
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
            arg = first_arg(node, "module", "module", keyword_only=True)
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
            if value[0] in ("call", "annot", "wrap"):
                return (value[0], fix(value[1]), value[2], lines.get(value[3], 0))
            if value[0] == "lookup":  # ("lookup", base, key, text, line)
                return ("lookup", fix(value[1]), fix(value[2]), value[3], lines.get(value[4], 0))
            return tuple(fix(v) if type(v) is tuple else v for v in value)

        self.arms.settle(self.facts.functions)
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
        self.facts.helper_roots = [
            (k, fix(r), a, t, lines.get(line, 0), i) for k, r, a, t, line, i in self.facts.helper_roots
        ]


def _arm_statements(node: cst.If) -> list:
    """The statements an `if` and its `else` run directly (an `elif` has a test of its own)."""
    found = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
    orelse = node.orelse
    if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        found += list(orelse.body.body)
    return found


def _holds(stmt, node) -> bool:
    """`stmt` is `node` as a statement, or an assignment of it."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        (isinstance(small, cst.Expr) or isinstance(small, cst.Assign)) and small.value is node
        for small in stmt.body)


def _loops(body) -> List[cst.For]:
    """The `for` statements of a function body (not of nested functions or classes)."""
    return [s for s in own_statements(body) if isinstance(s, cst.For)]


def _returns(body) -> List[cst.Return]:
    """The return statements of a function body (not of nested functions or classes)."""
    return [s for s in own_statements(body) if isinstance(s, cst.Return)]
