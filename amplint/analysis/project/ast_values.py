"""flowvalues.ValueReader over Python's `ast` (ast_summary.py): what an expression holds, as
a flow value, value for value the same as LibCST's reading. Lines are taken when a node is
marked (`self.s.line`)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import List, Optional, Tuple

from amplint.analysis.facts.fp16 import HALF, TENSOR_TYPES
from amplint.analysis.facts.autocast_calls import DTYPES
from amplint.analysis.facts.tree import Frame
from amplint.analysis.project.ast_aliases import absolute
from amplint.analysis.project.ast_tree import Refused, call_args, dotted
from amplint.analysis.project.flowvalues import (
    CHAIN, CONTAINERS, DATA_PARALLEL, HUB_MODEL, MODULE_METHODS, PREPARE, UNWRAP, WRAPPERS, Val, _NOT_PROJECT, _any,
    keyed,
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
    """Needs `self.s` (the summarizer: names, tree, line(node), text(node)), `self.tree` and
    `self.comprehended` (flowvalues.ValueReader's); `self.arms` (arm_locals.ArmLocals) where
    names read in an `if` arm are told apart (the flow collector)."""

    arms = None

    def val(self, expr, frame: Frame, depth: int = 0) -> Optional[Val]:
        if depth > 8:
            return None
        kind = type(expr)
        if kind is ast.Name:  # what a name holds depends on its scope only: once per scope
            held = frame.scope.held
            name = expr.id
            try:
                found = held[name]
            except KeyError:
                found = held[name] = self._name(name, frame)
            if found is not None and found[0] == "local" and self.arms is not None:
                synthetic = self.arms.read(expr, frame, self.key_of)
                if synthetic:
                    return ("local", synthetic)
            return found
        if kind is ast.Attribute:
            if type(expr.value) is ast.Name and expr.value.id == "self":
                return ("self", expr.attr)
            return self._chain(expr, frame, depth)
        if kind is ast.Call:
            return self._call(expr, frame, depth)
        if kind is ast.Constant:
            return None
        if kind is ast.Subscript:
            value = expr.value
            if type(value) is ast.Attribute and value.attr == "__dict__":
                elements = self.s.subscript_elements(expr)
                if len(elements) == 1 and type(elements[0]) is not ast.Slice:  # `models.__dict__[args.arch]`
                    return self._lookup(value.value, elements[0], expr, None, frame, depth)
            namespace = self._namespace_call(value, frame, depth)
            if namespace is not None:
                elements = self.s.subscript_elements(expr)
                if len(elements) == 1 and type(elements[0]) is not ast.Slice:  # `globals()[name]`
                    return self._lookup(namespace, elements[0], expr, None, frame, depth)
            base = self.val(expr.value, frame, depth + 1)
            if base == ("ref", "sys.modules") and type(expr.slice) is ast.Name and expr.slice.id == "__name__" \
                    and "__name__" not in self.tree.module_frame.bindings:
                return ("ref", "@")  # flowvalues: `sys.modules[__name__]`
            if base is None:
                return None
            index = expr.slice
            key = None
            if type(index) is ast.Constant and type(index.value) is str:
                key = index.value  # flowvalues.ValueReader._key
            elif type(index) is ast.Name:
                key = self.val(index, frame, depth + 1)
                key = key if key is not None and key[0] == "local" else None
            return ("sub", base) if key is None else ("sub", base, key)
        if kind in (ast.Tuple, ast.List):
            return ("tuple", tuple(self.val(_unstar(e), frame, depth + 1) for e in expr.elts))
        if kind is ast.Dict:
            items = tuple(self.val(v, frame, depth + 1) for k, v in zip(expr.keys, expr.values) if k is not None)
            return keyed(items, [k.value if type(k) is ast.Constant else None for k in expr.keys])
        if kind in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return ("tuple", (self.val(expr.elt, frame, depth + 1),))
        if kind is ast.DictComp:
            return ("tuple", (self.val(expr.value, frame, depth + 1),))
        if kind is ast.IfExp:
            body, orelse = self.val(expr.body, frame, depth + 1), self.val(expr.orelse, frame, depth + 1)
            test = expr.test
            if (body is not None and body == ("unwrap", orelse) and type(test) is ast.Call
                    and type(test.func) is ast.Name and test.func.id in ("isinstance", "hasattr")
                    and test.args and self.val(test.args[0], frame, depth + 1) == orelse):
                return body  # `m.module if isinstance(m, DataParallel) else m`: the unwrapped model
            body, orelse = (self._matched_cast(arm, test, frame, depth) for arm in (body, orelse))
            return _any(body, orelse)
        if kind is ast.BoolOp and type(expr.op) is ast.Or:
            # LibCST nests `a or b or c` to the left: ((a or b) or c)
            found = self.val(expr.values[0], frame, depth + 1)
            for value in expr.values[1:]:
                found = _any(found, self.val(value, frame, depth + 1))
            return found
        if kind is ast.BinOp and type(expr.op) is ast.Add:
            return self._pattern(expr, frame, depth)
        return None

    def _pattern(self, expr: ast.BinOp, frame: Frame, depth: int) -> Optional[Val]:
        """flowvalues.ValueReader._pattern: `"models." + name + "_model"`."""
        parts = []
        while type(expr) is ast.BinOp and type(expr.op) is ast.Add:
            parts.append(expr.right)
            expr = expr.left
        parts.append(expr)
        texts = [p.value if type(p) is ast.Constant and type(p.value) is str and self.s.one_string(p)
                 else self.val(p, frame, depth + 1) for p in reversed(parts)]
        holes = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        if len(holes) != 1 or texts[holes[0]] is None or texts[holes[0]][0] not in ("local", "attr"):
            return None
        hole = holes[0]
        return ("str", "".join(texts[:hole]), "".join(texts[hole + 1:]), texts[hole])

    def _chain(self, expr: ast.Attribute, frame: Frame, depth: int) -> Optional[Val]:
        """`a.b.c` as the recursion through each link reads it, in one go: every link's dotted
        name has the same root, so it resolves (or not) as the whole does; then the base's
        value, wrapped link by link (each link one level deeper)."""
        name = dotted(expr)
        if name is not None:
            ref = self.s.names.resolve(name, frame)
            if ref is not None:
                return ("ref", ref)
        links = [expr.attr]
        inner = expr.value
        while type(inner) is ast.Attribute and not (type(inner.value) is ast.Name and inner.value.id == "self"):
            links.append(inner.attr)
            inner = inner.value
        base = self.val(inner, frame, depth + len(links))  # None past the depth limit
        for attr in reversed(links):
            if base is None:
                return None
            base = ("unwrap", base) if attr in UNWRAP else ("attr", base, attr)
        return base

    def _name(self, name: str, frame: Frame) -> Optional[Val]:
        if name == "self":
            return None
        ref = self.s.names.resolve((name,), frame)
        if ref is not None:
            return ("ref", ref)
        if self._module_level(name, frame):
            module_frame = self.tree.module_frame
            if name in self.tree.classes or name in module_frame.functions:
                return ("ref", "@" + name)
            if name not in module_frame.bindings:
                return None
        return ("local", name)

    def _module_level(self, name: str, frame: Frame) -> bool:
        scope: Optional[Frame] = frame.scope
        while scope is not None and scope.kind != "module":
            if scope.kind != "class" and (name in scope.bindings or name in self.comprehended.get(id(scope), ())):
                return False
            scope = scope.parent
        return True

    def _namespace_call(self, expr, frame: Frame, depth: int):
        """flowvalues.ValueReader._namespace_call: `globals()`, `vars(models)`."""
        if type(expr) is not ast.Call or type(expr.func) is not ast.Name or expr.keywords or any(
                type(a) is ast.Starred for a in expr.args):
            return None
        name = expr.func.id
        if name not in ("globals", "vars") or self.val(expr.func, frame, depth + 1) is not None:
            return None
        if name == "globals" and not expr.args:
            return ("ref", "@")
        return expr.args[0] if name == "vars" and len(expr.args) == 1 else None

    def _lookup(self, base_expr, name_expr, node, args: Optional[Args], frame: Frame, depth: int) -> Optional[Val]:
        """flowvalues.ValueReader._lookup: `getattr(obj, "net")`, `models.__dict__[name]`."""
        base = base_expr if type(base_expr) is tuple else self.val(base_expr, frame, depth + 1)
        if base is None:
            return None
        if type(name_expr) is ast.Constant and type(name_expr.value) is str and self.s.one_string(name_expr):
            name = name_expr.value
            if not name.isidentifier():
                return None
            if base[0] != "ref":
                return ("attr", base, name)
            return ("lookup", base, name, self._text(node, args), self._line(node))
        key = self.val(name_expr, frame, depth + 1)
        if key is None or key[0] not in ("local", "attr"):
            return None
        return ("lookup", base, key, self._text(node, args), self._line(node))

    def _text(self, node, args: Optional[Args]) -> str:
        return short_text(node.func, args) if args is not None else short_text(node, None)

    def _line(self, node) -> int:
        if type(node) is ast.Call:
            return self.s.line(node)
        row = node.lineno - 1
        opens = self.s._opens(row, self.s._col(row, node.col_offset))
        if opens and opens[0] != row:
            raise Refused("a subscript lookup after a parenthesis on an earlier line")
        return node.lineno

    def _import_module(self, args: Args) -> Optional[Val]:
        """flowvalues.ValueReader._import_module: the module of an all-literal name."""
        arg = first_arg(args, "name", "name")
        parts = []
        while type(arg) is ast.BinOp and type(arg.op) is ast.Add:
            parts.append(arg.right)
            arg = arg.left
        parts.append(arg)
        texts = [
            p.value if type(p) is ast.Constant and type(p.value) is str and self.s.one_string(p) else None
            for p in reversed(parts)
        ]
        if any(not isinstance(t, str) for t in texts) or len(args) != 1:
            return None
        name = "".join(texts)
        return ("ref", name) if all(p.isidentifier() for p in name.split(".")) else None

    def _matched_cast(self, arm: Optional[Val], test: ast.expr, frame: Frame, depth: int):
        """flowvalues.ValueReader._matched_cast over `ast`."""
        if arm is None or arm[0] != "half":
            return arm
        tested = [node.value for node in ast.walk(test) if type(node) is ast.Attribute and node.attr == "dtype"]
        if not tested or not all(dotted(e) is not None for e in tested):
            return arm
        values = [self.val(e, frame, depth + 1) for e in tested]
        return arm[1] if all(v is not None and v != arm[1] for v in values) else arm

    def _call(self, call: ast.Call, frame: Frame, depth: int) -> Optional[Val]:
        func = call.func
        site = self.s.sites.get(id(call))
        args = site.args if site is not None else call_args(call)
        if type(func) is ast.Name and func.id == "getattr" and len(args) in (2, 3) and not any(
            a[0] is not None or a[1] for a in args
        ) and self.val(func, frame, depth + 1) is None:  # the builtin
            return self._lookup(args[0][2], args[1][2], call, args, frame, depth)
        if type(func) is ast.Name and func.id == "dict" and args and all(
            a[0] is not None and not a[1] for a in args
        ) and self.val(func, frame, depth + 1) is None:  # the builtin: `dict(h=..., ln_f=...)` is `{...}`
            return keyed(tuple(self.val(a[2], frame, depth + 1) for a in args), [a[0] for a in args])
        if type(func) is ast.Attribute:
            method = func.attr
            dtype = _half_cast_dtype(method, args, frame) if method in _CASTS else None
            if dtype is not None:
                inner = self.val(func.value, frame, depth + 1)
                return ("half", inner, dtype) if inner is not None else None
            if method in CHAIN and not self._is_ref(func, frame):
                return self.val(func.value, frame, depth + 1)
            if method in PREPARE and len(args) == 1 and args[0][1] == "":
                return self.val(args[0][2], frame, depth + 1)
        name = site.dotted if site is not None else dotted(func)
        ref = self.s.names.resolve(name, frame) if name else None
        module = self._import_module(args) if ref == "importlib.import_module" else None
        if module is not None:
            return module
        if ref == "importlib.import_module" and len(args) == 1 and not args[0][1] and args[0][0] in (None, "name"):
            name = self.val(args[0][2], frame, depth + 1)  # a name built at run time
            return ("import", name) if name is not None and name[0] in ("str", "local") else None
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
            inner = self.val(arg, frame, depth + 1) if arg is not None else None
            if ref in DATA_PARALLEL and inner is not None and not _single_device(args):
                return ("wrap", inner, short_text(func, args), self.s.line(call))
            return inner
        if ref is not None and ref.endswith("deepspeed.initialize"):
            arg = first_arg(args, "model", "model", keyword_only=True)
            return ("tuple", (self.val(arg, frame, depth + 1),)) if arg is not None else None
        if ref is not None and depth < 8 and name[0] != "self":  # what val(func) would give
            callee: Optional[Val] = ("ref", ref)
        else:
            callee = self.val(func, frame, depth + 1)
        if callee is None or callee[0] == "self" and not _own_method(frame, callee[1]):
            return None
        if name and name[-1] == "create_model":
            callee = ("model_name", callee, self._model_name(first_arg(args, "model_name", "model_name")))
        return ("call", callee, short_text(func, args), self.s.line(call))

    def stored_self_call(self, expr, frame: Frame) -> Optional[Val]:
        """flowvalues.ValueReader.stored_self_call: `self.net_g = self.model_to_device(self.net_g)`."""
        func = expr.func if type(expr) is ast.Call else None
        if type(func) is not ast.Attribute or type(func.value) is not ast.Name or func.value.id != "self" \
                or frame.class_frame is None or func.attr in MODULE_METHODS:
            return None
        site = self.s.sites.get(id(expr))
        args = site.args if site is not None else call_args(expr)
        return ("call", ("self", func.attr), short_text(func, args), self.s.line(expr))

    def _container(self, args: Args, frame: Frame, depth: int) -> Optional[Val]:
        args = [a for a in args if a[0] is None]
        if len(args) == 1 and (args[0][1] == "*" or type(args[0][2]) is not ast.Call):
            return self.val(args[0][2], frame, depth + 1)
        if len(args) == 1 and not args[0][1]:  # `nn.ModuleDict(dict(h=...))`: the dict's items
            held = self.val(args[0][2], frame, depth + 1)
            if held is not None and len(held) == 3 and held[0] == "tuple":
                return held
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


_CASTS = frozenset({"half", "bfloat16", "to", "type"})  # the methods _half_cast_dtype reads
_ANNOTATION_TEXT = re.compile(r"[\w.\[\], |]*")


def _own_method(frame: Frame, name: str) -> bool:
    """flowvalues.own_method for `ast`."""
    cls = frame.class_frame
    body = cls.node.body if cls is not None and type(cls.node) is ast.ClassDef else ()
    return any(type(stmt) is ast.FunctionDef and stmt.name == name and not stmt.decorator_list for stmt in body)


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
            qualified = absolute(dotted(value), frame)
            dtype = DTYPES.get(qualified) if qualified is not None else None
            if dtype is None and method == "type":
                dtype = TENSOR_TYPES.get(qualified or "")
            if dtype in HALF:
                return dtype
    return None


def string_count(segment: str) -> int:
    """How many string literals a literal's source text holds (implicit concatenation: > 1)."""
    try:
        return sum(1 for tok in tokenize.generate_tokens(io.StringIO(segment).readline) if tok.type == tokenize.STRING)
    except (tokenize.TokenError, SyntaxError):
        return 0


def _single_device(args: Args) -> bool:
    """`DataParallel(m, device_ids=[0])`: one device, the module runs in the caller's thread
    (the `ast` reading of flowvalues._single_device)."""
    ids = first_arg(args, "device_ids", "device_ids", keyword_only=True)
    positional = [value for name, star, value in args if name is None and star == ""]
    if ids is None and len(positional) > 1:
        ids = positional[1]
    return type(ids) in (ast.List, ast.Tuple) and len(ids.elts) == 1 and type(ids.elts[0]) is not ast.Starred
