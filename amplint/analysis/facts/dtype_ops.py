"""The value of one expression for amplint.analysis.facts.dtypes: literals, names, casts, factories,
torch ops by their table (amplint.analysis.data.dtype_rules), binary promotion, module outputs, and the
autocast policy of the region the expression runs in."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.dtype_promote import (
    clamped as _clamped, einsum_policy as _einsum_policy, fold as _fold, literal_tensor, promote, size_dim,
)
from amplint.analysis.facts.dtype_value import (
    ELIGIBLE, FLOATS, PYTHON as PYTHON_KINDS, Dtype, Elements, InstanceValue, Items, ModuleValue, _dims,
    join, module_moved, of,
)
from amplint.analysis.facts import instance_forwards
from amplint.analysis.facts.bound_values import dtype_object
from amplint.analysis.facts.names import bound_locally, resolve_expr

_ARITH = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "div",
    cst.FloorDivide: "div_floor", cst.Modulo: "remainder", cst.Power: "pow",
    cst.MatrixMultiply: "matmul",
}
KEEP_ATTRS = R.KEEP_ATTRS
INT_ATTRS = R.INT_ATTRS
SIZE_METHODS = R.SIZE_METHODS


def _kw(call: cst.Call, name: str) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _positional(call: cst.Call) -> List[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


class Evaluator:
    def __init__(self, dtypes, env, frame) -> None:
        self.d = dtypes
        self.env = env
        self.frame = frame
        self.in_region = dtypes.facts.active_region(frame) is not None

    # -- entry ----------------------------------------------------------------------------
    def value(self, expr: cst.BaseExpression, parts: bool = False):
        """`parts`: the caller reads a split's tuple (an index or an unpacking), so an
        `Elements` may come back; elsewhere it is unknown (never bound to a name)."""
        if self.in_region and isinstance(expr, (cst.BinaryOperation, cst.Call)):
            self.d.region_nodes.append((expr, self.frame))
        result = self._value(expr)
        if isinstance(result, Dtype):
            self.d.values[id(expr)] = result
        elif isinstance(result, (Elements, Items)) and not parts:
            return None
        return result

    def _value(self, expr):
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return of("pybool")
            return self.env.get(expr.value)
        if isinstance(expr, cst.Integer):
            return of("pyint")
        if isinstance(expr, cst.Float):
            return of("pyfloat")
        if isinstance(expr, cst.UnaryOperation):
            inner = self.value(expr.expression)
            if isinstance(expr.operator, cst.Not):
                return None
            return inner if isinstance(inner, Dtype) else None
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr)
        if isinstance(expr, cst.Comparison):
            parts = [self.value(expr.left)] + [self.value(c.comparator) for c in expr.comparisons]
            if any(isinstance(p, Dtype) and p.is_tensor for p in parts):
                ops = [type(c.operator) for c in expr.comparisons]
                if all(op in (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                              cst.GreaterThanEqual, cst.Equal, cst.NotEqual) for op in ops):
                    return of("bool", _dims([p for p in parts if isinstance(p, Dtype)]))
            return None
        if isinstance(expr, cst.Attribute):
            base = self.value(expr.value)
            if expr.attr.value in KEEP_ATTRS and isinstance(base, Dtype) and base.is_tensor:
                return base if expr.attr.value not in ("T", "H") else base
            if expr.attr.value in INT_ATTRS and isinstance(base, Dtype) and base.is_tensor:
                return of("pyint")
            if expr.attr.value == "shape" and not (isinstance(base, Dtype) and not base.is_tensor):
                # `n, c, h = x.shape`: Python ints (torch.Size), as `x.shape[-1]` below is
                return Elements(of("pyint"))
            if isinstance(expr.value, cst.Name) and expr.attr.value in R.MATH_CONSTANTS \
                    and resolve_expr(expr, self.frame) == "math." + expr.attr.value:
                return of("pyfloat")  # math.pi
            return self._self_module(expr)
        if isinstance(expr, cst.Subscript):
            base = self.value(expr.value, parts=True)
            for element in expr.slice:
                if isinstance(element.slice, cst.Index):
                    self.value(element.slice.value)
            if isinstance(base, Items):  # `model(x)[2]` of `return logits, None, values`
                index = _literal_index(expr)
                return base.items[index] if index is not None and -len(base.items) <= index < len(
                    base.items) else None
            if isinstance(base, Elements):  # `x.chunk(2)[0]` -> a tensor, `[1:]` -> a tuple
                one = len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
                return base.element if one else base
            if isinstance(base, Dtype) and base.is_tensor:
                return Dtype(base.options, base.conditional, None)
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
                return of("pyint")
            return None
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, (cst.Tuple, cst.List)):
            items = [self.value(element.value) for element in expr.elements]
            if isinstance(expr, cst.List) or any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return Items(v if isinstance(v, (Dtype, InstanceValue)) else None for v in items)
        if isinstance(expr, cst.IfExp):
            self.value(expr.test)
            body, orelse = self.value(expr.body), self.value(expr.orelse)
            if isinstance(body, Dtype) and isinstance(orelse, Dtype):
                return join(body, orelse)
            return None
        return None

    def _self_module(self, expr: cst.Attribute):
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.frame.class_frame
            if cls is not None:
                return self.d.attr_modules(cls).get(expr.attr.value)
        return None

    def _promoted_operands(self, op: str, tensors, rec, call: cst.Call) -> List[Optional[Dtype]]:
        """The values that promote together: `where`'s two values (not its condition), the
        elements of the sequence `cat`/`stack` take (a list or tuple display, else unknown)."""
        if op == "where":
            values = tensors[1:3] if rec is None else [rec] + tensors[2:3]
            return values if len(values) == 2 else [None]
        sequence = call.args[0].value if call.args and call.args[0].keyword is None else None
        if rec is not None or not isinstance(sequence, (cst.List, cst.Tuple)) or not sequence.elements \
                or any(isinstance(e, cst.StarredElement) for e in sequence.elements):
            return [None]
        return [self.d.values.get(id(e.value)) for e in sequence.elements]

    # -- regions --------------------------------------------------------------------------
    def _with_region(self, op: str, args: List[Optional[Dtype]], plain: Optional[Dtype],
                     zero_dim: Optional[bool] = None, call: Optional[cst.Call] = None) -> Optional[Dtype]:
        """The value of aten `op` on `args` where this code runs, given its `plain` value
        outside autocast."""
        region, certain = self.d.region_state(self.frame)
        if region is None:
            return plain
        policy = self.d.policy(region, op)
        if op == "einsum" and region.device != "cuda":
            policy = _einsum_policy(region.device, call)
        if policy is None:
            return None
        if policy == "none":
            return plain
        tensors = [a for a in args if a is None or a.is_tensor]
        known = [a for a in tensors if a is not None]
        conditional = len(known) < len(tensors) or any(a.conditional for a in known)
        if policy == "lower" and known and not any(a.conditional for a in known):
            conditional = False  # the other operands are cast with it, or the op raises
        if any(not a.options <= ELIGIBLE for a in known):
            return None  # a float64 or integer operand is not cast: leave it to torch
        if policy == "lower":
            if not known and not tensors:
                return None
            cast = of(self.d.region_dtype(region), zero_dim, conditional)
        elif policy == "fp32":
            cast = of("float32", zero_dim, conditional)
        else:  # promote: the widest floating dtype among the operands
            if not known or len(known) < len(tensors):
                return None
            options = {R.promote_floats(a, b) if a != "autocast" and b != "autocast" else None
                       for x in known for y in known for a in x.options for b in y.options}
            if None in options or len(options) != 1:
                return None
            cast = of(options.pop(), zero_dim)  # type: ignore[arg-type]
        if certain:
            return cast
        return join(cast, plain)

    # -- binary operators -----------------------------------------------------------------
    def _binary(self, expr: cst.BinaryOperation):
        left, right = self.value(expr.left), self.value(expr.right)
        op = _ARITH.get(type(expr.operator))
        if op is None:
            return None
        a = left if isinstance(left, Dtype) else None
        b = right if isinstance(right, Dtype) else None
        if op == "matmul":
            return self._with_region("matmul", [a, b], self._same([a, b], None))
        if a is None or b is None:
            known = a or b
            if known is None or known.conditional or known.zero_dim is not False \
                    or not known.options <= {"float32", "float64"}:
                return None
            # a dimensioned float32/float64 tensor wins over any real operand's category and
            # over every 0-dim one: the result is that dtype or wider, never half
            wider = frozenset({"float32", "float64"}) if "float32" in known.options else known.options
            return self._with_region(op if op != "div_floor" else "floor_divide", [a, b],
                                     Dtype(wider, False, False), False)
        if not (a.is_tensor or b.is_tensor):
            return _python_arith(a, b, op)  # Python numbers: a Python number
        plain = promote(a, b, op)
        return self._with_region(op if op != "div_floor" else "floor_divide", [a, b], plain,
                                 _dims([a, b]))

    @staticmethod
    def _same(args: List[Optional[Dtype]], zero_dim: Optional[bool]) -> Optional[Dtype]:
        """Operands that must share a dtype (matmul, linear): that dtype, or an error."""
        known = [a for a in args if a is not None and a.is_tensor]
        floats = [a for a in known if a.options <= FLOATS]
        if not floats or len(floats) < len(known):
            return None
        first = floats[0]
        if any(f.options != first.options for f in floats) or first.exact is None:
            return None
        return of(first.exact, zero_dim, any(f.conditional for f in floats))

    # -- calls ----------------------------------------------------------------------------
    def _call(self, call: cst.Call):  # -> Dtype | ModuleValue | None
        func = call.func
        qualified = resolve_expr(func, self.frame)
        receiver = made = None
        if isinstance(func, cst.Attribute) and qualified is None:
            receiver = self.value(func.value)
        elif not isinstance(func, (cst.Name, cst.Attribute)):
            made = self.value(func)
        args = [self.value(a.value) for a in call.args]
        if self.d.bindings is not None:
            self.d.bindings.record(call, self.frame, args)
        explicit = _kw(call, "dtype")
        if explicit is not None:
            found = self._dtype_of(explicit.value)
            if found is not None and qualified and qualified.startswith("torch.") \
                    and qualified[6:] in R.RANGE_FACTORIES:
                return of(found.exact, False)  # `torch.arange(n, dtype=torch.float)`: 1-dim
            return found
        if qualified is not None:
            return self._function(qualified, call, args)
        if isinstance(func, cst.Attribute):
            module = self._self_module(func)
            if isinstance(module, ModuleValue):
                return self._module(module, args)
            own = self.d.bindings.callee(call, self.frame) if self.d.bindings is not None else None
            if own is not None:  # `self._m(...)`: a private method of this class
                return self.d.returned("self." + func.attr.value, call, args, self.frame, own)
            forward = self.d.bindings.forward(call, self.frame) if self.d.bindings is not None else None
            if forward is not None:  # `self.fc(x)`: the file's module class's `forward` returns
                return self.d.returned("forward", call, args, self.frame, forward)
            held = instance_forwards.held(self.d, func, self.frame)
            if held is not None:  # `self.transformer(x)` of `self.transformer = Transformer3D()`
                return self._instance_call(held, call, args)
            return self._method(func.attr.value, receiver, call, args)
        if isinstance(made, ModuleValue):  # `nn.Softmax(dim=-1)(x)`
            return self._module(made, args)
        if isinstance(made, InstanceValue):  # `Head(dim)(x)`
            return self._instance_call(made, call, args)
        forward = self.d.bindings.forward(call, self.frame) if self.d.bindings is not None else None
        if forward is not None:  # `net(x)`, `Block(...)(x)`: the file's module class's `forward`
            return self.d.returned(forward.node.name.value, call, args, self.frame, forward)
        if isinstance(func, cst.Name):
            if func.value in R.PYTHON_CONVERSIONS and func.value not in self.env \
                    and not bound_locally(func.value, self.frame) \
                    and func.value not in self.d.module_counts():
                return of(R.PYTHON_CONVERSIONS[func.value])  # `float(n)`: the builtin
            callee = self.env.get(func.value)
            if isinstance(callee, ModuleValue):
                return self._module(callee, args)
            if isinstance(callee, InstanceValue):  # `values = model(hidden)`
                return self._instance_call(callee, call, args)
            if func.value not in self.env:
                built = instance_forwards.constructed(self.d, call, self.frame)
                if built is not None:  # `model = ValueHeadModel()`
                    return built
                return self.d.returned(func.value, call, args, self.frame)
        return None

    def _instance_call(self, instance: InstanceValue, call: cst.Call, args):
        """What `forward` of a module class of the file returns to this call
        (amplint.analysis.facts.instance_forwards)."""
        forward = instance_forwards.forward_of(self.d, instance)
        if forward is None:
            return None
        return self.d.returned(instance.cls.name + ".forward", call, args, self.frame, forward)

    def _dtype_of(self, expr: cst.BaseExpression) -> Optional[Dtype]:
        name = dtype_object(self.d.facts, expr, self.frame)
        return of(name) if name is not None else None

    def _module(self, module: ModuleValue, args) -> Optional[Dtype]:
        first = args[0] if args else None
        first = first if isinstance(first, Dtype) else None
        # the module's float32 weight is an operand too: under autocast the result is the
        # region's dtype or an error
        return self._op(module.op, [first, of("float32")], first, module=True)

    def _function(self, qualified: str, call: cst.Call, args) -> Optional[Dtype]:
        if qualified.startswith("torch.nn.") and qualified in R.MODULE_OPS:
            return self.d.module_ctor(call, self.frame)
        name = qualified.rsplit(".", 1)[-1]
        if qualified in ("torch.tensor", "torch.as_tensor") and call.args:
            return literal_tensor(call.args[0].value, self.d._default_set)
        if qualified == "torch.full" and len(args) >= 2:
            fill = args[1]
            kinds = {"pyfloat": "float32", "pyint": "integer", "pybool": "bool"}
            if isinstance(fill, Dtype) and fill.exact in kinds and not self.d._default_set:
                size = call.args[0].value
                dim = (not size.elements) if isinstance(size, (cst.Tuple, cst.List)) else (
                    False if isinstance(size, cst.Integer) else None)
                return of(kinds[fill.exact], dim)  # type: ignore[index]
            return None
        if qualified == "torch.arange":
            kinds = {a.exact for a in args if isinstance(a, Dtype)}
            if len(kinds) != len(args) or not kinds <= {"pyint", "pyfloat"}:
                return None
            if "pyfloat" in kinds:
                return None if self.d._default_set else of("float32", False)
            return of("integer", False)
        if qualified.startswith("torch.") and qualified.count(".") == 1:
            if name in R.FLOAT_FACTORIES:
                return None if self.d._default_set else of("float32", size_dim(call))
            if name in R.INT_FACTORIES:
                return of("integer", False)
            if name in R.LIKE_FACTORIES and args:
                first = args[0]
                return first if isinstance(first, Dtype) and first.is_tensor else None
        if qualified.startswith("math.") and qualified.count(".") == 1:
            return _math(name)
        op = R.aten_op(qualified)
        if op is None:
            return None
        tensors = [a if isinstance(a, Dtype) else None for a in args]
        return self._op(op, tensors, None, call=call)

    def _method(self, name: str, receiver, call: cst.Call, args) -> Optional[Dtype]:
        rec = receiver if isinstance(receiver, Dtype) and receiver.is_tensor else None
        if isinstance(receiver, ModuleValue) and name == "forward":
            return self._module(receiver, args)
        if isinstance(receiver, InstanceValue):  # `model.forward(x)`, `model.cuda()`
            if name == "forward":
                return self._instance_call(receiver, call, args)
            if module_moved(call, self.frame) or name in R.CAST_METHODS and not call.args or name in (
                    "to", "type"):
                # `Net().half()`: the same instance; its forward's values follow its inputs
                # (a module's output is its input's dtype outside autocast, or it raises)
                return receiver
        if isinstance(receiver, ModuleValue) and module_moved(call, self.frame):
            return receiver
        if name in SIZE_METHODS:
            if rec is not None and name == "size" and not call.args:
                return Elements(of("pyint"))  # `b, c = x.size()`
            return of("pyint") if rec is not None and name != "size" or call.args and rec else None
        if name in R.CAST_METHODS and not call.args:
            return of(R.CAST_METHODS[name], rec.zero_dim if rec else None)
        if name == "type" and not call.args:
            return None  # the type's name
        if name in ("to", "type"):
            return self._to(call, rec, args)
        if name == "type_as" and args:
            other = args[0]
            return other if isinstance(other, Dtype) and other.is_tensor else None
        if rec is None:
            return None
        if name in R.NEW_FACTORIES:
            return Dtype(rec.options, rec.conditional, None)
        if name.endswith("_") and not name.endswith("__"):
            return rec  # in place: the receiver's dtype
        tensors = [rec] + [a if isinstance(a, Dtype) else None for a in args]
        return self._op(name, tensors, rec, call=call)

    def _to(self, call: cst.Call, rec: Optional[Dtype], args) -> Optional[Dtype]:
        for arg, value in zip(call.args, args):
            if arg.keyword is not None and arg.keyword.value in R.CAST_KEYWORDS:
                continue
            name = dtype_object(self.d.facts, arg.value, self.frame)
            if name is not None:
                return of(name, rec.zero_dim if rec else None)
            if isinstance(arg.value, cst.SimpleString):
                continue  # a device
            if _looks_like_device(arg.value):
                continue
            if isinstance(value, Dtype) and value.is_tensor and arg.keyword is None:
                return Dtype(value.options, value.conditional, rec.zero_dim if rec else None)
            if (resolve_expr(arg.value, self.frame) or "") == "torch.device":
                continue
            return None  # a dtype or device held in a variable
        return rec

    def _op(self, op: str, tensors: List[Optional[Dtype]], rec: Optional[Dtype],
            call: Optional[cst.Call] = None, module: bool = False) -> Optional[Dtype]:
        kind = R.op_kind(op)
        first = tensors[0] if tensors else None
        if op in R.TUPLE_KEEP:
            if first is None or not first.is_tensor or call is None or _kw(call, "dtype"):
                return None
            return Elements(Dtype(first.options, first.conditional, None))  # type: ignore[return-value]
        if op in R.TUPLE_ALWAYS:
            return None  # values and indices
        if op in R.TUPLE_WITH_ARGS:
            other = tensors[1] if len(tensors) == 2 else None
            if op in ("max", "min") and call is not None and other is not None and other.is_tensor \
                    and first is not None and first.is_tensor and len(_positional(call)) == len(call.args):
                kind = "binary"  # `torch.max(a, b)`: torch.maximum
            elif call is not None and (call.args if rec is not None else len(call.args) > 1):
                return None  # `x.max(1)`: values and indices
            else:
                kind = "keep"
        if kind == "promote-all" and call is not None:
            tensors = self._promoted_operands(op, tensors, rec, call)
            first = tensors[0] if tensors else None
        dim = _result_dim(op, kind, tensors, call, rec)
        plain: Optional[Dtype]
        if kind == "keep":
            plain = first if first is not None and first.is_tensor else None
            plain = Dtype(plain.options, plain.conditional, dim) if plain is not None else None
        elif kind == "clamp":
            plain = _clamped(tensors)
        elif kind == "pybool":
            return of("pybool") if first is not None and first.is_tensor else None
        elif kind in ("float", "reduce"):
            plain = None
            if first is not None and first.is_tensor:
                if first.options <= FLOATS:
                    plain = Dtype(first.options, first.conditional, dim)
                elif kind == "reduce" and first.options <= {"integer", "bool"}:
                    plain = of("integer", dim)
                elif kind == "float" and op in ("sigmoid", "tanh", "exp", "log", "sqrt",
                                                "sin", "cos") and not self.d._default_set:
                    plain = of("float32", dim)
        elif kind == "binary" and len(tensors) >= 2 and tensors[0] is not None \
                and tensors[1] is not None:
            plain = promote(tensors[0], tensors[1], op)
        elif kind == "same" or kind == "loss" and len(tensors) >= 2 and None not in tensors[:2]:
            # a loss of two inputs promotes (mse_loss(float16, bfloat16) is float32), so an
            # unknown one leaves it unknown; matmuls raise on a mismatch instead
            plain = self._same(tensors, dim)
        elif kind == "loss":
            plain = None
        elif kind == "promote-all":  # `torch.cat([a, b])`, `torch.where(m, a, b)`: they promote
            plain = _fold(tensors, op) if tensors and None not in tensors and any(
                t.is_tensor for t in tensors) else None  # type: ignore[union-attr]
        elif kind == "bool":
            plain = of("bool", dim) if first is not None and first.is_tensor else None
        elif kind == "integer":
            plain = of("integer", dim) if first is not None and first.is_tensor else None
        else:
            return None
        if module and op in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                             "conv_transpose2d", "conv_transpose3d", "prelu", "bilinear",
                             "layer_norm", "group_norm"):
            plain = first if first is not None and first.options <= FLOATS else None
            if op in ("linear", "conv1d", "conv2d", "conv3d") and plain is not None:
                plain = Dtype(plain.options, plain.conditional, False)
        return self._with_region(op, tensors, plain, dim if kind != "same" else None, call)


def _looks_like_device(expr: cst.BaseExpression) -> bool:
    """`x.device`, `device`, `self.device`, `args.device`: a device, as the name says."""
    last = expr.attr.value if isinstance(expr, cst.Attribute) else (
        expr.value if isinstance(expr, cst.Name) else "")
    return "device" in last


def _result_dim(op, kind, tensors, call, rec) -> Optional[bool]:
    known = [t for t in tensors if t is not None and t.is_tensor]
    if kind in ("float", "reduce") and op in R.REDUCE | {"mean", "var", "std", "norm",
                                                        "logsumexp"}:
        if call is not None and not [a for a in call.args if a.keyword is None][
                (0 if rec is not None else 1):] and _kw(call, "dim") is None:
            return True
        return None
    if op in ("unsqueeze", "flatten", "mm", "bmm", "linear", "conv1d", "conv2d", "conv3d"):
        return False
    if kind in ("keep", "float", "binary", "bool") and op not in (
            "view", "reshape", "squeeze", "select", "index_select", "diagonal", "diag", "take",
            "masked_select", "narrow", "unflatten", "max", "min", "amax", "amin", "pad"):
        return _dims(known) if known else None
    return None


def _math(name: str) -> Optional[Dtype]:
    """`math.sqrt(d)`: a Python number, whatever `d` is (R.MATH_FLOAT/INT/BOOL)."""
    if name in R.MATH_FLOAT:
        return of("pyfloat")
    if name in R.MATH_INT:
        return of("pyint")
    if name in R.MATH_BOOL:
        return of("pybool")
    return None


def _python_arith(a: Dtype, b: Dtype, op: str) -> Optional[Dtype]:
    """`1.0 / math.sqrt(d)`: Python's own rules (`bool` counts as `int`; `int ** int` is a
    float for a negative exponent)."""
    if not (a.options | b.options) <= PYTHON_KINDS:
        return None
    kinds = set()
    for x in a.options:
        for y in b.options:
            if op == "div" or "pyfloat" in (x, y):
                kinds.add("pyfloat")
            elif op == "pow":
                kinds.update(("pyint", "pyfloat"))
            else:
                kinds.add("pyint")
    return Dtype(frozenset(kinds), False, None)


def _literal_index(expr: cst.Subscript) -> Optional[int]:
    """The integer of `t[2]` / `t[-1]`, else None."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = expr.slice[0].slice.value
    negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
    if negative:
        value = value.expression
    if not isinstance(value, cst.Integer):
        return None
    number = int(value.value, 0)
    return -number if negative else number
