"""What an expression holds, as a flow value (`Val`, plain tuples; see flowfacts.py): the
reading that FlowCollector applies to every assignment, return, argument and annotation."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.facts.fp16 import half_cast_dtype
from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes

Val = tuple  # see flowfacts.py for the kinds of value

# the list / deque methods that add their argument to the container (extend: its items)
ADDS_ITEMS = ("append", "extend", "insert", "appendleft")

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
# wrappers whose replicas run forward in threads of their own (AMP153): kept as ("wrap", ...)
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel"})
# methods of framework objects that hand back what they are given: (a, b) in, (a, b) out
PREPARE = frozenset({"prepare", "setup", "prepare_model"})
# nn.Module's own methods `self.m(...)` may call (read in _call), never a project method
MODULE_METHODS = CHAIN | frozenset({"half", "bfloat16", "type"})
# attributes that keep the wrapped module
UNWRAP = frozenset({"module", "_orig_mod"})


# the statement form: `model.half()`, `self.backbone.bfloat16()` (recorded as a call on a held value)
STATEMENT_CASTS = {"half": "float16", "bfloat16": "bfloat16"}
# `model.to(torch.float16)` / `.type(torch.half)` as a call of its own: recorded as `model.half()`
STATEMENT_METHODS = {"float16": "half", "bfloat16": "bfloat16"}
_NOT_PROJECT = ("torch.", "typing.", "numpy.", "collections.", "?")
_BOUND_KINDS = frozenset({"local", "self", "call", "attr", "half", "sub", "partial", "wrap", "unwrap"})


def plain_local(name: str) -> str:
    """The name a ("local", name) value reads: without the arm a read inside an `if` arm is
    marked with (arm_locals.py: "model#3b" reads `model`)."""
    return name.partition("#")[0]


def same_local(value: Optional[Val], name: str) -> bool:
    """`value` reads the local `name` (in any arm)."""
    return value is not None and value[0] == "local" and plain_local(value[1]) == plain_local(name)


def keyed(items: tuple, keys) -> Val:
    """A dict's values (`{"h": blocks}`, `dict(h=blocks)`) as a tuple; with ("keys", name, ...)
    when every key is a literal string, so that `md.h` on an `nn.ModuleDict` reads its item."""
    if len(keys) != len(items) or not all(type(k) is str for k in keys):
        return ("tuple", items)
    return ("tuple", items, ("keys",) + tuple(keys))


def binds(value: Optional[Val]) -> bool:
    """Whether a call argument is recorded as binding the callee's parameter: a value that may
    hold a project instance, or a project class or function passed as a value
    (`ResNet(block=BottleneckBlock)`, `make_stage(block_class=...)`, `model.apply(init_fn)`)."""
    if value is None:
        return False
    if value[0] == "ref":
        return not value[1].startswith(_NOT_PROJECT)
    return value[0] in _BOUND_KINDS


class ValueReader:
    """Needs `self.s` (the file's summarizer: names, want_line), `self.module` and
    `self.comprehended` (id(scope) -> the names its comprehensions' `for` clauses bind)."""

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
            arms = getattr(self, "arms", None)
            return ("local", (arms.read(expr, frame, self.key_of) if arms is not None else "") or expr.value)
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
                return ("unwrap", base)
            return ("attr", base, expr.attr.value)
        if isinstance(expr, cst.Call):
            return self._call(expr, frame, depth)
        if isinstance(expr, cst.Subscript):
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "__dict__" and len(expr.slice) == 1:
                index = expr.slice[0].slice  # `models.__dict__[args.arch]`
                if isinstance(index, cst.Index):
                    return self._lookup(expr.value.value, index.value, expr, frame, depth)
            namespace = self._namespace_call(expr.value, frame, depth)
            if namespace is not None and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
                # `globals()[name]`, `vars(models)[name]`
                return self._lookup(namespace, expr.slice[0].slice.value, expr, frame, depth)
            base = self.val(expr.value, frame, depth + 1)
            if base == ("ref", "sys.modules") and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
                    and isinstance(expr.slice[0].slice.value, cst.Name) and expr.slice[0].slice.value.value == "__name__" \
                    and "__name__" not in self.tree.module_frame.bindings:
                return ("ref", "@")  # `sys.modules[__name__]`: this module, as `globals()` reads it
            if base is None:
                return None
            key = self._key(expr, frame, depth)
            return ("sub", base) if key is None else ("sub", base, key)
        if isinstance(expr, (cst.Tuple, cst.List)):
            items = tuple(self.val(e.value, frame, depth + 1) for e in expr.elements)
            return ("tuple", items)
        if isinstance(expr, cst.Dict):
            items = tuple(
                self.val(e.value, frame, depth + 1) for e in expr.elements
                if isinstance(e, cst.DictElement)
            )
            keys = [
                getattr(e.key, "evaluated_value", None) if isinstance(e, cst.DictElement) else None
                for e in expr.elements
            ]
            return keyed(items, keys)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return ("tuple", (self.val(expr.elt, frame, depth + 1),))
        if isinstance(expr, cst.DictComp):
            return ("tuple", (self.val(expr.value, frame, depth + 1),))
        if isinstance(expr, cst.IfExp):
            body, orelse = self.val(expr.body, frame, depth + 1), self.val(expr.orelse, frame, depth + 1)
            test = expr.test
            if (body is not None and body == ("unwrap", orelse) and isinstance(test, cst.Call)
                    and isinstance(test.func, cst.Name) and test.func.value in ("isinstance", "hasattr")
                    and test.args and self.val(test.args[0].value, frame, depth + 1) == orelse):
                return body  # `m.module if isinstance(m, DataParallel) else m`: the unwrapped model
            body, orelse = (self._matched_cast(arm, test, frame, depth) for arm in (body, orelse))
            return _any(body, orelse)
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            return _any(self.val(expr.left, frame, depth + 1), self.val(expr.right, frame, depth + 1))
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self._pattern(expr, frame, depth)
        return None

    def _matched_cast(self, arm: Optional[Val], test: cst.BaseExpression, frame: Frame, depth: int):
        """An arm's half cast taken only when the test reads other values' dtypes, never the cast
        value's (yolov10's autobatch `m = m.half() if x.dtype is torch.float16 else m`): the cast
        follows that value, which the flow does not know half, so it is no evidence of half
        (precision over reach): the arm holds the uncast value."""
        if arm is None or arm[0] != "half":
            return arm
        tested = [node.value for node in iter_nodes(test)
                  if isinstance(node, cst.Attribute) and node.attr.value == "dtype"]
        if not tested or not all(dotted_name(e) is not None for e in tested):
            return arm  # `next(m.parameters()).dtype`: maybe the cast value's own
        values = [self.val(e, frame, depth + 1) for e in tested]
        return arm[1] if all(v is not None and v != arm[1] for v in values) else arm

    def _key(self, expr: cst.Subscript, frame: Frame, depth: int):
        """The key of `D["vit_t"]` (the string) or `D[name]` (("local", name)); None otherwise."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        index = expr.slice[0].slice.value
        if isinstance(index, cst.SimpleString):
            value = index.evaluated_value
            return value if isinstance(value, str) else None
        if isinstance(index, cst.Name):
            value = self.val(index, frame, depth + 1)
            return value if value is not None and value[0] == "local" else None
        return None

    def _pattern(self, expr: cst.BinaryOperation, frame: Frame, depth: int) -> Optional[Val]:
        """`"models." + name + "_model"`: ("str", "models.", "_model", the value of `name`), a
        name with one part that is not a literal (pytorch-CycleGAN-and-pix2pix's module names)."""
        parts = []
        while isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            parts.append(expr.right)
            expr = expr.left
        parts.append(expr)
        texts = [p.evaluated_value if isinstance(p, cst.SimpleString) and isinstance(p.evaluated_value, str)
                 else self.val(p, frame, depth + 1) for p in reversed(parts)]
        holes = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        if len(holes) != 1 or texts[holes[0]] is None or texts[holes[0]][0] not in ("local", "attr"):
            return None
        hole = holes[0]
        return ("str", "".join(texts[:hole]), "".join(texts[hole + 1:]), texts[hole])

    def _module_level(self, name: str, frame: Frame) -> bool:
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind != "class" and (name in scope.bindings or name in self.comprehended.get(id(scope), ())):
                return False
            scope = scope.parent
        return True

    def _namespace_call(self, expr, frame: Frame, depth: int):
        """The namespace `globals()` (this module: ("ref", "@")) or `vars(models)` (the value of
        `models`) reads, with the builtins not rebound; else None."""
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name) or any(
                a.star or a.keyword for a in expr.args):
            return None
        name = expr.func.value
        if name not in ("globals", "vars") or self.val(expr.func, frame, depth + 1) is not None:
            return None
        if name == "globals" and not expr.args:
            return ("ref", "@")
        return expr.args[0].value if name == "vars" and len(expr.args) == 1 else None

    def _lookup(self, base_expr, name_expr, node, frame: Frame, depth: int) -> Optional[Val]:
        """`getattr(obj, "net")` reads as `obj.net`; on a module or class, `getattr(models, "Net")`
        is ("lookup", namespace, "Net", text, line), and with a name that is not a literal
        ("lookup", namespace, name value, text, line): the configs decide it (string_classes.py).
        `base_expr` may be a value already (`globals()`: ("ref", "@"))."""
        base = base_expr if type(base_expr) is tuple else self.val(base_expr, frame, depth + 1)
        if base is None:
            return None
        if isinstance(name_expr, cst.SimpleString) and isinstance(name_expr.evaluated_value, str):
            name = name_expr.evaluated_value
            if not name.isidentifier():
                return None
            if base[0] != "ref":
                return ("attr", base, name)
            return ("lookup", base, name, short_text(self.module, node), self._mark(node))
        key = self.val(name_expr, frame, depth + 1)
        if key is None or key[0] not in ("local", "attr"):
            return None
        return ("lookup", base, key, short_text(self.module, node), self._mark(node))

    def _import_module(self, call: cst.Call) -> Optional[Val]:
        """`importlib.import_module("pkg.models." + "resnet")`: the module, when every part of
        its name is a literal."""
        arg = first_arg(call, "name", "name")
        parts = []
        while isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Add):
            parts.append(arg.right)
            arg = arg.left
        parts.append(arg)
        texts = [p.evaluated_value if isinstance(p, cst.SimpleString) else None for p in reversed(parts)]
        if any(not isinstance(t, str) for t in texts) or len(call.args) != 1:
            return None
        name = "".join(texts)
        return ("ref", name) if all(p.isidentifier() for p in name.split(".")) else None

    def _call(self, call: cst.Call, frame: Frame, depth: int) -> Optional[Val]:
        func = call.func
        if isinstance(func, cst.Name) and func.value == "getattr" and len(call.args) in (2, 3) and not any(
            a.star or a.keyword for a in call.args
        ) and self.val(func, frame, depth + 1) is None:  # the builtin
            return self._lookup(call.args[0].value, call.args[1].value, call, frame, depth)
        if isinstance(func, cst.Name) and func.value == "dict" and call.args and all(
            a.keyword is not None and not a.star for a in call.args
        ) and self.val(func, frame, depth + 1) is None:  # the builtin: `dict(h=..., ln_f=...)` is `{...}`
            items = tuple(self.val(a.value, frame, depth + 1) for a in call.args)
            return keyed(items, [a.keyword.value for a in call.args])
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
        module = self._import_module(call) if ref == "importlib.import_module" else None
        if module is not None:
            return module
        if ref == "importlib.import_module" and len(call.args) == 1 and not call.args[0].star and (
                call.args[0].keyword is None or call.args[0].keyword.value == "name"):
            name = self.val(call.args[0].value, frame, depth + 1)  # a name built at run time
            return ("import", name) if name is not None and name[0] in ("str", "local") else None
        if ref in CONTAINERS:
            return self._container(call, frame, depth)
        if ref == "functools.partial" and call.args and call.args[0].star == "":
            inner = self.val(call.args[0].value, frame, depth + 1)
            return ("partial", inner) if inner is not None else None
        name = dotted_name(func)
        if name and name[-1] == "build_from_cfg":
            registry = first_arg(without_positional(call, 1), "registry", "registry")
            base = self.val(registry, frame, depth + 1) if registry is not None else None
            if base is None:
                return None
            return ("call", ("attr", base, "build"), short_text(self.module, call), self._mark(call))
        if ref in WRAPPERS or (ref or "").endswith(".DistributedDataParallel"):
            arg = first_arg(call, "module", "model")
            inner = self.val(arg, frame, depth + 1) if arg is not None else None
            if ref in DATA_PARALLEL and inner is not None and not _single_device(call):
                return ("wrap", inner, short_text(self.module, call), self._mark(call))
            return inner
        if ref is not None and ref.endswith("deepspeed.initialize"):
            arg = first_arg(call, "model", "model", keyword_only=True)
            return ("tuple", (self.val(arg, frame, depth + 1),)) if arg is not None else None
        callee = self.val(func, frame, depth + 1)
        if callee is None or callee[0] == "self" and not own_method(frame, callee[1]):
            return None
        if name and name[-1] == "create_model":  # timm's: builds a registered model by name
            callee = ("model_name", callee, _model_name(first_arg(call, "model_name", "model_name")))
        return ("call", callee, short_text(self.module, call), self._mark(call))

    def stored_self_call(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Val]:
        """`self.net_g = self.model_to_device(self.net_g)`: a call of any method `m` through
        `self`, stored in an attribute, as a call value; the class flow resolves `m` over the
        class and its bases (an inherited method, BasicSR's BaseModel) or answers nothing."""
        func = expr.func if isinstance(expr, cst.Call) else None
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name) or func.value.value != "self" \
                or frame.class_frame is None or func.attr.value in MODULE_METHODS:
            return None
        return ("call", ("self", func.attr.value), short_text(self.module, expr), self._mark(expr))

    def _container(self, call: cst.Call, frame: Frame, depth: int) -> Optional[Val]:
        """`nn.Sequential(A(), B())`, `nn.Sequential(*layers)`, `nn.ModuleList([...])`,
        `nn.ModuleDict({...})`: a tuple of what it holds (calling it calls each)."""
        args = [a for a in call.args if a.keyword is None]
        if len(args) == 1 and (args[0].star == "*" or not isinstance(args[0].value, cst.Call)):
            return self.val(args[0].value, frame, depth + 1)
        if len(args) == 1 and not args[0].star:  # `nn.ModuleDict(dict(h=...))`: the dict's items
            held = self.val(args[0].value, frame, depth + 1)
            if held is not None and len(held) == 3 and held[0] == "tuple":
                return held
        if any(a.star for a in args):
            return None
        return ("tuple", tuple(self.val(a.value, frame, depth + 1) for a in args))

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

    def _is_ref(self, func: cst.Attribute, frame: Frame) -> bool:
        name = dotted_name(func)
        return bool(name) and self.s.names.resolve(name, frame) is not None

    def _mark(self, node: cst.CSTNode) -> int:
        self.s.want_line(node)
        return id(node)


def short_text(module: cst.Module, node: cst.CSTNode, limit: int = 48) -> str:
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


def _any(a: Optional[Val], b: Optional[Val]) -> Optional[Val]:
    if a is None:
        return b
    if b is None:
        return a
    return ("any", (a, b))


def first_arg(call: cst.Call, keyword: str, other: str, keyword_only: bool = False):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in (keyword, other):
            return arg.value
    if not keyword_only and call.args and call.args[0].keyword is None and call.args[0].star == "":
        return call.args[0].value
    return None


def without_positional(call: cst.Call, count: int) -> cst.Call:
    """`call` without its first `count` positional arguments."""
    return call.with_changes(args=[a for i, a in enumerate(call.args) if a.keyword is not None or i >= count])


def _model_name(arg: Optional[cst.BaseExpression]) -> str:
    """The timm registry name a `create_model` argument gives: "vit_small_patch16_224" of
    `"vit_small_patch16_224.augreg_in21k"`; "" when it is not a literal; HUB_MODEL for a model
    of a hub (`"hf-hub:timm/vit_base_patch16_224"`), which no function of the project is."""
    if isinstance(arg, cst.SimpleString) and isinstance(arg.evaluated_value, str):
        value = arg.evaluated_value
        if ":" in value or "/" in value:
            return HUB_MODEL
        return value.split(".", 1)[0]
    return ""


HUB_MODEL = "<hub>"


def super_init_base(func, frame: Frame):
    """The first base class expression of the method's class, for `super().__init__` (or
    `super(Cls, self).__init__`) called in a method; None otherwise."""
    if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"):
        return None
    cls = frame.class_frame
    bases = cls.node.bases if cls is not None and isinstance(cls.node, cst.ClassDef) else ()
    if not bases or dotted_name(bases[0].value) is None:
        return None
    args = func.value.args  # `super(Cls, self)` names the class itself; another class skips part of the MRO
    if args and not (isinstance(args[0].value, cst.Name) and args[0].value.value == cls.name):
        return None
    return bases[0].value


def own_method(frame: Frame, name: str) -> bool:
    """`self.<name>(...)` calls a method the enclosing class defines (`self._build_loss()`), not
    a module or callable held in an attribute: what it returns is the call's value."""
    cls = frame.class_frame
    body = cls.node.body.body if cls is not None and isinstance(cls.node, cst.ClassDef) else ()
    return any(isinstance(stmt, cst.FunctionDef) and stmt.name.value == name and not stmt.decorators
               for stmt in body)


def _single_device(call: cst.Call) -> bool:
    """`DataParallel(m, device_ids=[0])`: one device, the module runs in the caller's thread
    (rules/amp153's single_device, on the summary's LibCST reading)."""
    ids = None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device_ids":
            ids = arg.value
    if ids is None and len(positional) > 1:
        ids = positional[1].value
    return isinstance(ids, (cst.List, cst.Tuple)) and len(ids.elements) == 1 \
        and not isinstance(ids.elements[0], cst.StarredElement)
