"""fp16 code beyond autocast: module classes whose instances the file turns half, and mmcv
`@auto_fp16` bodies. Also the one definition of "a half cast" the rules share."""

from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from amplint.facts.callgraph import CallGraph
from amplint.facts.names import resolve_expr
from amplint.facts.regions import DTYPES
from amplint.facts.tree import CallSite, Collector, Frame, dotted_name

HALF = ("float16", "bfloat16")


def half_cast_dtype(call: cst.Call, frame: Frame) -> Optional[str]:
    """"float16"/"bfloat16" when `call` is `x.half()`, `x.bfloat16()`, `x.to(torch.float16)`,
    `x.to(device, dtype=torch.half)` or `x.type(torch.float16)`; else None."""
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
    def __init__(self, tree: Collector, graph: CallGraph, entries=()) -> None:
        """`entries`: EntryHalf, classes of this file that other files turn half."""
        self.tree = tree
        self.graph = graph
        self.half_casts: Dict[int, str] = {}  # id(call) -> dtype
        self.half_classes: Set[str] = {e.target for e in entries if e.target in tree.classes}
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
        for frame in tree.frames:
            if frame.kind == "function" and _has_auto_fp16(frame):
                self.functions.add(id(frame))

    def _class_cast(self, site: CallSite) -> Optional[str]:
        func = site.node.func
        assert isinstance(func, cst.Attribute)
        receiver = func.value
        return self.graph.class_of_value(receiver) or self.graph.class_of_instance(
            receiver, site.frame
        )

    def _add_submodules(self, classes: Set[str]) -> None:
        """`.half()` converts submodules too: the classes of `self.x = Sub(...)` join."""
        pending = list(classes)
        while pending:
            name = pending.pop()
            for (owner, _attr), cls in self.graph.self_instances.items():
                if owner == name and cls not in classes:
                    classes.add(cls)
                    pending.append(cls)

    def is_fp16(self, frame: Frame) -> bool:
        function = frame.function
        return function is not None and id(function) in self.functions


def _has_auto_fp16(frame: Frame) -> bool:
    node = frame.node
    assert isinstance(node, cst.FunctionDef)
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        name = dotted_name(expr)
        if name and name[-1] == "auto_fp16":
            return True
    return False
