"""fp16 code beyond autocast: module classes whose instances the file turns half, and mmcv
`@auto_fp16` bodies. Also the one definition of "a half cast" the rules share."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.callgraph import CallGraph
from amplint.analysis.facts.dtype_value import module_moved
from amplint.analysis.facts.inherited_methods import inherited_methods
from amplint.analysis.facts.autocast_calls import DTYPES
from amplint.analysis.facts.names import bound_locally, resolve_expr
from amplint.analysis.facts.tree import CallSite, Collector, Frame, dotted_name, iter_nodes

HALF = ("float16", "bfloat16")
# `x.type(torch.cuda.HalfTensor)`: the tensor types `.type()` takes for a half dtype
TENSOR_TYPES = {
    "torch.HalfTensor": "float16", "torch.cuda.HalfTensor": "float16",
    "torch.BFloat16Tensor": "bfloat16", "torch.cuda.BFloat16Tensor": "bfloat16",
}
_CONTAINERS = ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict")


def half_cast_dtype(call: cst.Call, frame: Frame) -> Optional[str]:
    """"float16"/"bfloat16" when `call` is `x.half()`, `x.bfloat16()`, `x.to(torch.float16)`,
    `x.to(device, dtype=torch.half)`, `x.type(torch.float16)` or `x.type(torch.cuda.HalfTensor)`;
    else None."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method == "half" and not call.args:
        return "float16"
    if method == "bfloat16" and not call.args:
        return "bfloat16"
    if method in ("to", "type"):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value != "dtype":
                continue
            dtype = dtype_of(arg.value, frame)
            if dtype is None and method == "type":
                dtype = TENSOR_TYPES.get(resolve_expr(arg.value, frame) or "")
            if dtype in HALF:
                return dtype
    return None


def dtype_of(expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
    """The dtype a literal `torch.float16`-style expression names (through import aliases)."""
    qualified = resolve_expr(expr, frame)
    if qualified is None:
        return None
    return DTYPES.get(qualified)


class Fp16Analysis:
    def __init__(self, tree: Collector, graph: CallGraph, entries=(), inherited=(), chosen=None) -> None:
        """`entries`: EntryHalf, classes of this file that other files turn half; `inherited`:
        EntryHalfBase, the methods a half class of another file inherits from a class of this one;
        `chosen`: the classes a string picks (chosen_classes.py), `create_model("b0").half()`."""
        self.tree = tree
        self.graph = graph
        self.chosen = chosen
        self.half_casts: Dict[int, str] = {}  # id(call) -> dtype
        # id(call) -> why its dtype argument is half, for a dataclass field (facts/dtype_fields.py)
        self.field_cites: Dict[int, str] = {}
        self.half_classes: Set[str] = {e.target for e in entries if e.target in tree.classes}
        # class -> why it is half: (text, the node of this file the text's {half_line} names)
        self.why: Dict[str, Tuple[str, Optional[cst.CSTNode]]] = {
            e.target: (e.cite, None) for e in entries if e.target in tree.classes}
        # cast to float16 (not bfloat16)
        self.float16_classes: Set[str] = {
            e.target for e in entries if e.target in tree.classes and e.dtype == "float16"
        }
        for site in tree.calls:
            dtype = half_cast_dtype(site.node, site.frame)
            if dtype is None:
                continue
            self.half_casts[id(site.node)] = dtype
            cls = self._class_cast(site)
            if cls is not None:
                self.half_classes.add(cls)
                self.why.setdefault(cls, (f"`{cls}` is made half at line {{half_line}}", site.node))
                if dtype == "float16":
                    self.float16_classes.add(cls)
        # id(call) -> dtype for calls of a method of this file that casts the receiver's
        # submodules (`model.convert_to_fp16()`); `model_casts` adds them to the half casts
        self.method_cast_calls: Dict[int, str] = {}
        self._held: Optional[Dict[str, List[str]]] = None
        for cls, dtype in self._method_casts():
            self.half_classes.add(cls)
            self.why.setdefault(cls, (f"a method of this file makes `{cls}` half", None))
            if dtype == "float16":
                self.float16_classes.add(cls)
        self._add_submodules(self.half_classes)
        self._add_submodules(self.float16_classes)
        # methods that run in float16 (not bfloat16) when no autocast region is active
        self.float16_functions = frozenset(
            id(method) for name in self.float16_classes
            for method in tree.classes[name].functions.values()
        )
        self.functions: Set[int] = set()
        for name in self.half_classes:
            for method in tree.classes[name].functions.values():
                self.functions.add(id(method))
        # id(method) -> (text, node) citing the half class that inherits it (a base or mixin's
        # method runs on the half instance as its own methods do)
        self.inherited: Dict[int, Tuple[str, Optional[cst.CSTNode]]] = {}
        float16 = set(self.float16_functions)
        for name in sorted(self.half_classes):
            for method in inherited_methods(tree, graph.method, name):
                text, node = self.why.get(name, (f"`{name}` is made half", None))
                self.inherited.setdefault(id(method), (f"`{method.name}` inherited by `{name}`; {text}", node))
                if name in self.float16_classes:
                    float16.add(id(method))
        for entry in inherited:
            cls = tree.classes.get(entry.target)
            for name in entry.methods if cls is not None else ():
                method = cls.functions.get(name)
                if method is not None:
                    self.inherited.setdefault(id(method), (entry.cite, None))
                    if entry.dtype == "float16":
                        float16.add(id(method))
        self.functions.update(self.inherited)
        self.float16_functions = frozenset(float16)
        for frame in tree.frames:
            if frame.kind == "function" and _has_auto_fp16(frame):
                self.functions.add(id(frame))

    def _class_cast(self, site: CallSite) -> Optional[str]:
        func = site.node.func
        assert isinstance(func, cst.Attribute)
        receiver = func.value
        moves: List[str] = []
        # `model.to(device).half()`, `model.cuda().eval().half()`: nn.Module's moves return the
        # module itself, unless the class defines its own method of that name
        while isinstance(receiver, cst.Call) and module_moved(receiver, site.frame):
            assert isinstance(receiver.func, cst.Attribute)
            moves.append(receiver.func.attr.value)
            receiver = receiver.func.value
        cls = (
            self.graph.class_of_value(receiver)
            or self.graph.class_of_instance(receiver, site.frame)
            or self.graph.factory_class(receiver)
            or self.graph.built_instance(receiver, site.frame)
            or (self.chosen.local_class(receiver, site.frame) if self.chosen is not None else None)
        )
        if cls is None or any(self.graph.method(cls, name) is not None for name in moves):
            return None
        return cls

    # -- half through a method of the project: `model.convert_to_fp16()` --------------------
    def _method_casts(self) -> List[Tuple[str, str]]:
        """(class, dtype) for the submodules a method of this file casts, where that method is
        called: `def convert_to_fp16(self): self.blocks.apply(convert_module_to_f16)` or
        `self.blocks.half()`, then `model.convert_to_fp16()` (or `self.convert_to_fp16()`)."""
        found: List[Tuple[str, str]] = []
        done: Set[int] = set()
        for site in self.tree.calls:
            if not isinstance(site.node.func, cst.Attribute) or site.node.args:
                continue
            for method in self.graph.callees(site):
                owner = method.parent
                if owner is None or owner.kind != "class":
                    continue
                casts = self._casts_of(method)
                if casts:
                    dtypes = {dtype for _, dtype in casts}
                    self.method_cast_calls[id(site.node)] = (
                        "float16" if "float16" in dtypes else dtypes.pop()
                    )
                if id(method) in done:
                    continue
                done.add(id(method))
                for attr, dtype in casts:
                    if attr is None:
                        found.append((owner.name, dtype))
                        continue
                    for cls in self._classes_held(owner.name, attr):
                        found.append((cls, dtype))
        return found

    @property
    def model_casts(self) -> Dict[int, str]:
        """id(call) -> dtype: the half casts, and the calls of methods that cast submodules."""
        return {**self.half_casts, **self.method_cast_calls}

    def _casts_of(self, method: Frame) -> List[Tuple[Optional[str], str]]:
        """(`self` attribute or None for `self` itself, dtype) for each cast the method body
        makes of its own submodules."""
        out: List[Tuple[Optional[str], str]] = []
        for site in method.calls:
            call = site.node
            func = call.func
            if site.frame.function is not method or not isinstance(func, cst.Attribute):
                continue
            target = func.value
            if isinstance(target, cst.Name) and target.value == "self":
                attr: Optional[str] = None
            elif (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == "self"
            ):
                attr = target.attr.value
            else:
                continue
            dtype = half_cast_dtype(call, site.frame)
            if dtype is None and func.attr.value == "apply" and len(call.args) == 1:
                dtype = self._converter_dtype(call.args[0].value)
            if dtype is not None:
                out.append((attr, dtype))
        return out

    def _converter_dtype(self, expr: cst.BaseExpression) -> Optional[str]:
        """The dtype a function handed to `.apply` casts modules to: a function of this file
        whose body makes a half cast (`l.weight.data = l.weight.data.half()`), or one named so
        (`convert_module_to_f16` from guided-diffusion's fp16_util)."""
        name = dotted_name(expr)
        if not name:
            return None
        function = self.tree.module_frame.functions.get(name[-1]) if len(name) == 1 else None
        if function is not None:
            for site in function.calls:
                dtype = half_cast_dtype(site.node, site.frame)
                if dtype is not None:
                    return dtype
            return None
        last = name[-1].lower()
        if re.search(r"(^|_)(to|convert\w*)_(bf16|bfloat16)$", last):
            return "bfloat16"
        if re.search(r"(^|_)(to|convert\w*)_(f16|fp16|half|float16)$", last):
            return "float16"
        return None

    def _classes_held(self, owner: str, attr: str) -> List[str]:
        """The module classes of this file held in `self.attr` of class `owner`: the class
        constructed there, or those a container holds (`nn.ModuleList([Block(...), ...])`,
        `nn.Sequential(...)`, a same-file `nn.Sequential` subclass)."""
        direct = self.graph.self_instances.get((owner, attr))
        found: List[str] = [direct] if direct is not None else []
        for site in self.tree.assigns:
            if self.graph.self_attr_owner(site.targets[0], site.frame) != (owner, attr):
                continue
            value = site.value
            if not (isinstance(value, cst.Call) and self._container(value, site.frame)):
                continue
            for node in iter_nodes(value):
                if (
                    isinstance(node, cst.Call)
                    and isinstance(node.func, cst.Name)
                    and node.func.value in self.tree.classes
                    and node.func.value not in found
                ):
                    found.append(node.func.value)
        return found

    def _container(self, call: cst.Call, frame: Frame) -> bool:
        qualified = resolve_expr(call.func, frame) or ""
        if qualified in _CONTAINERS:
            return True
        if isinstance(call.func, cst.Name) and call.func.value in self.tree.classes:
            node = self.tree.classes[call.func.value].node
            return any(
                (dotted_name(base.value) or ("",))[-1] in ("Sequential", "ModuleList", "ModuleDict")
                for base in node.bases  # type: ignore[attr-defined]
            )
        return False

    def _submodule_classes(self) -> Dict[str, List[str]]:
        """class -> the classes of this file its `self.x` holds: constructed there, or inside a
        torch container (`self.heads = nn.ModuleDict({"vision": Normalize()})`), whose
        children `.half()` converts too."""
        if self._held is not None:
            return self._held
        held: Dict[str, List[str]] = {}
        for (owner, _attr), cls in self.graph.self_instances.items():
            held.setdefault(owner, []).append(cls)
        for site in self.tree.assigns:
            key = self.graph.self_attr_owner(site.targets[0], site.frame)
            value = site.value
            if key is None or not (isinstance(value, cst.Call) and self._container(value, site.frame)):
                continue
            classes = held.setdefault(key[0], [])
            for name in self._contained(value, site.frame):
                if name not in classes:
                    classes.append(name)
        self._held = held
        return held

    def _contained(self, expr: cst.BaseExpression, frame: Frame) -> Iterator[str]:
        """The classes of this file constructed as elements of `expr`: through torch containers,
        displays, comprehensions and the builtin `dict`/`list`/`tuple`, never through a call
        whose result is not known to hold its arguments (`wrap(Norm())` may keep nothing)."""
        if isinstance(expr, cst.Call):
            func = expr.func
            container = self._container(expr, frame)
            if isinstance(func, cst.Name) and func.value in self.tree.classes:
                yield func.value
                if not container:
                    return
            builtin = isinstance(func, cst.Name) and func.value in ("dict", "list", "tuple") \
                and not bound_locally(func.value, frame)
            if builtin or container:
                for arg in expr.args:
                    yield from self._contained(arg.value, frame)
        elif isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for element in expr.elements:
                yield from self._contained(element.value, frame)
        elif isinstance(expr, cst.Dict):
            for element in expr.elements:
                yield from self._contained(element.value, frame)
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            yield from self._contained(expr.elt, frame)
        elif isinstance(expr, cst.DictComp):
            yield from self._contained(expr.value, frame)

    def _add_submodules(self, classes: Set[str]) -> None:
        """`.half()` converts submodules too: the classes of `self.x = Sub(...)` join."""
        pending = list(classes)
        held = self._submodule_classes()
        while pending:
            name = pending.pop()
            for cls in held.get(name, ()):
                if cls not in classes:
                    classes.add(cls)
                    pending.append(cls)
                    if cls not in self.why and name in self.why:
                        text, node = self.why[name]
                        self.why[cls] = (f"`{cls}` is a submodule of `{name}`; {text}", node)

    def note(self, frame: Frame) -> Tuple[str, Dict[str, cst.CSTNode]]:
        """How a message cites why `frame` is fp16 code, as `region_note` cites a region:
        ("(`Net` is made half at line {half_line})", {"half_line": node}), or the chain
        another file made (`model <- Net() at deploy/loader.py:7 made half`), with no related
        node (then the message is not formatted, and its braces stay as they are)."""
        function = frame.function
        if function is not None and _has_auto_fp16(function):
            return f"(mmcv's @auto_fp16 on `{function.name}`)", {}
        for name in sorted(self.half_classes):
            if function is not None and function in self.tree.classes[name].functions.values():
                text, node = self.why.get(name, (f"`{name}` is made half", None))
                if node is None:  # no {half_line} to fill: the message is not formatted
                    return f"({text})", {}
                return f"({text})", {"half_line": node}
        if function is not None and id(function) in self.inherited:
            text, node = self.inherited[id(function)]
            return (f"({text})", {}) if node is None else (f"({text})", {"half_line": node})
        return "(a module made half, or @auto_fp16)", {}

    def is_fp16(self, frame: Frame) -> bool:
        function = frame.function
        return function is not None and id(function) in self.functions

    def float32_params(self, frame: Frame) -> Set[str]:
        """Parameters of the function around `frame` that mmcv's `@force_fp32` casts to float32
        on entry: those named in `apply_to=(...)`, or all of them when it names none."""
        function = frame.function
        if function is None:
            return set()
        node = function.node
        assert isinstance(node, cst.FunctionDef)
        for dec in node.decorators:
            expr = dec.decorator
            name = dotted_name(expr.func if isinstance(expr, cst.Call) else expr)
            if not name or name[-1] != "force_fp32":
                continue
            params = node.params
            every = {p.name.value for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params)}
            every.discard("self")
            listed = None
            if isinstance(expr, cst.Call):
                for arg in expr.args:
                    if (arg.keyword is None and arg is expr.args[0]) or (arg.keyword is not None and arg.keyword.value == "apply_to"):
                        listed = arg.value
            if listed is None or (isinstance(listed, cst.Name) and listed.value == "None"):
                return every
            if isinstance(listed, (cst.Tuple, cst.List)):
                return {
                    e.value.evaluated_value for e in listed.elements
                    if isinstance(e.value, cst.SimpleString) and isinstance(e.value.evaluated_value, str)
                } & every
            return set()
        return set()


def _has_auto_fp16(frame: Frame) -> bool:
    node = frame.node
    assert isinstance(node, cst.FunctionDef)
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        name = dotted_name(expr)
        if name and name[-1] == "auto_fp16":
            return True
    return False
