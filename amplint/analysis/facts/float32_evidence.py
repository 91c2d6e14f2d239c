"""The evidence that a value is float32 by construction, outside any autocast region: a float
factory without `dtype=`, `.float()`, an `nn.Parameter` of one, a parameter or buffer a class
sets so (and the file never turns the class half), a `torch.nn.Linear`-like module's weight.
Part of the escape walk (escape.py), which AMP105 and AMP111 read."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.dtype_value import device_only
from amplint.analysis.facts.half_values import is_float32_cast
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.autocast_calls import DTYPES
from amplint.analysis.facts.syntax import unparen as _unparen
from amplint.analysis.facts.tree import Frame, self_attr

# torch.nn modules with float32 parameters whose output autocast makes half, and which raise on a
# half input outside autocast.
STRICT_MODULES = {
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "LSTM", "GRU", "RNN", "MultiheadAttention",
}
FLOAT_FACTORIES = {"torch." + name for name in R.FLOAT_FACTORIES}
PARAMETER = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}


class Float32Evidence:
    """Mixed into EscapeAnalysis, which supplies `facts`, `reads` (id(Name read) -> Entry, its
    kind "f32" / "module32" set by the walk), `_root(expr, frame)` and `_class_attrs`."""

    def is_float32(self, expr: cst.BaseExpression, frame: Frame) -> bool:
        """`expr` is float32 by construction (and no region is active at `frame`)."""
        if self.facts.active_region(frame) is not None:
            return False
        return self._float32(expr, frame, 0)

    def float32_module(self, expr: cst.BaseExpression, frame: Frame) -> bool:
        """`expr` is a torch.nn module with float32 parameters (`self.head = nn.Linear(...)` in
        a class the file never turns half, a local `head = nn.Linear(...)`)."""
        if isinstance(expr, cst.Name):
            entry = self.reads.get(id(expr))
            return entry is not None and entry.kind == "module32"
        attr = self._self_attr(expr, frame)
        return attr is not None and attr == "module32"

    def _module32_ctor(self, value: cst.BaseExpression, frame: Frame) -> bool:
        """`nn.Linear(...)`, optionally moved with `.to(device)` / `.cuda()`."""
        value = _unparen(value)
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and (
            value.func.attr.value in ("cuda", "cpu")
            or (value.func.attr.value == "to" and device_only(value, frame))
        ):
            value = value.func.value
        if not isinstance(value, cst.Call):
            return False
        qualified = resolve_expr(value.func, frame) or ""
        return qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in STRICT_MODULES

    def _float32(self, expr: cst.BaseExpression, frame: Frame, depth: int) -> bool:
        if depth > 6:
            return False
        if self.facts.dtypes.is_float32(expr):  # the dtype fact (before `_root` copies it)
            return True
        expr = self._root(expr, frame)
        if isinstance(expr, cst.Name):
            entry = self.reads.get(id(expr))
            return entry is not None and entry.kind == "f32"
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("weight", "bias") and self.float32_module(expr.value, frame):
                return True
            return self._self_attr(expr, frame) == "f32"
        if not isinstance(expr, cst.Call):
            return False
        if is_float32_cast(expr, frame) and not _dtype_float64(expr, frame):
            return True
        if self.float32_module(expr.func, frame) and self.facts.active_region(frame) is None:
            return True  # a float32 Linear-like module outside autocast: float32, or it raises
        qualified = resolve_expr(expr.func, frame)
        if qualified in PARAMETER and expr.args:
            return self._float32(expr.args[0].value, frame, depth + 1)
        if qualified in FLOAT_FACTORIES or _number_factory(expr, qualified):
            return not any(a.keyword is not None and a.keyword.value == "dtype" for a in expr.args)
        return False

    def _self_attr(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """"f32" / "module32" for `self.attr` set so in the class (every assignment agrees, and
        the file never turns the class half), else None."""
        attr = self_attr(expr)
        if attr is None:
            return None
        cls = frame.class_frame
        if cls is None or cls.name in self.facts.fp16.half_classes:
            return None
        attrs = self._class_attrs.get(id(cls))
        if attrs is None:
            self._class_attrs[id(cls)] = {}  # while collecting: `self.a = self.b` is unknown
            attrs = self._class_attrs[id(cls)] = self._collect_attrs(cls)
        return attrs.get(attr)

    def _collect_attrs(self, cls: Frame) -> Dict[str, str]:
        kinds: Dict[str, set] = {}
        for attr, sites in self.facts.index.self_assigns(cls).items():
            for site in sites:
                kind = (
                    "module32" if self._module32_ctor(site.value, site.frame)
                    else "f32" if self._float32(site.value, site.frame, 1)
                    else "other"
                )
                kinds.setdefault(attr, set()).add(kind)
        for site in self.facts.index.class_calls(cls):
            func = site.node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in ("register_buffer", "register_parameter")
                and len(site.node.args) >= 2
                and isinstance(site.node.args[0].value, cst.SimpleString)
            ):
                name = site.node.args[0].value.evaluated_value
                kind = "f32" if self._float32(site.node.args[1].value, site.frame, 1) else "other"
                kinds.setdefault(str(name), set()).add(kind)
        return {name: found.pop() for name, found in kinds.items() if len(found) == 1}


def _number_factory(call: cst.Call, qualified: Optional[str]) -> bool:
    """`torch.normal(0, 0.01, (n, d))`: number arguments and a size (R.NUMBER_FACTORIES)."""
    count = R.NUMBER_FACTORIES.get((qualified or "")[len("torch."):]) if (qualified or "").startswith(
        "torch.") else None
    if count is None:
        return False
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return len(positional) > count and all(
        isinstance(_number_value(v), (cst.Integer, cst.Float)) for v in positional[:count])


def _number_value(expr: cst.BaseExpression) -> cst.BaseExpression:
    expr = _unparen(expr)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _unparen(expr.expression)
    return expr


def _dtype_float64(call: cst.Call, frame: Frame) -> bool:
    for arg in call.args:
        if DTYPES.get(resolve_expr(arg.value, frame) or "") == "float64":
            return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "double"
