"""Where float16 tensors live outside autocast, as far as the file shows: the methods of half
module classes (and their submodules) with no autocast region active, and locals assigned from a
float16 cast, followed in source order (`x = x.float()` makes later uses float32). Shared by the
rules about float16 arithmetic (AMP140 eps-underflow, AMP141 half-reduction); computed once per
file, on first use, as `FileFacts.half_values`.

What a value's dtype is comes first from the file's dtype fact (`FileFacts.dtypes`, torch's own
tables in amplint.analysis.data.dtype_rules): where that fact knows an expression's dtype (a cast, a
factory, an op of known operands) it is the answer. The scope evidence (a half module's method
runs on float16 inputs) is what this module adds on top, for the values the fact leaves unknown
(parameters, submodule outputs)."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.fp16 import half_cast_dtype
from amplint.analysis.facts.dtype_value import split_input
from amplint.analysis.facts.float16_scope import float16_callees, float16_functions, function_frame, in_float16_scope
from amplint.analysis.facts.half_callees import EntryFloat16Args, half_param_entries
from amplint.analysis.facts.half_containers import (
    CONTAINERS, container_items, note_container_call, note_store,
)
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.spectrum_returns import float32_window, returns_float32
from amplint.analysis.facts.frame_walk import FrameWalker, frames_by_body  # noqa: F401 (re-exported)
from amplint.analysis.facts.syntax import bound_names, params as _params, unparen as _unparen  # noqa: F401 (AMP140/141)
from amplint.analysis.facts.tree import Frame


FLOAT32_NAMES = tuple(n for n, d in R.DTYPE_NAMES.items() if d in ("float32", "float64"))


def is_float32_cast(call: cst.Call, frame) -> bool:
    """`x.float()`, `x.double()`, `x.to(torch.float32)`, `x.type(torch.float64)`, or any call
    with `dtype=torch.float32` (e.g. `x.sum(dtype=torch.float32)`)."""
    from amplint.analysis.facts.names import resolve_expr

    func = call.func
    if isinstance(func, cst.Attribute):
        if func.attr.value in ("float", "double") and not call.args:
            return True
        if func.attr.value in ("to", "type"):
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value == "dtype":
                    if resolve_expr(arg.value, frame) in FLOAT32_NAMES:
                        return True
    dtype = next((a for a in call.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    return dtype is not None and resolve_expr(dtype.value, frame) in FLOAT32_NAMES


def data_chain(expr: cst.BaseExpression, frame):
    """The expressions a value flows through, outermost first: `x.float().pow(2)` yields the
    pow call, the float call, `x`; `torch.pow(x, 2)` yields the call, then `x` (the first
    argument of a call of an imported function)."""
    from amplint.analysis.facts.names import resolve_expr

    seen = 0
    while expr is not None and seen < 32:
        seen += 1
        yield expr
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and resolve_expr(func.value, frame) is None:
                expr = func.value  # a method of the receiver
            elif expr.args and expr.args[0].keyword is None and not expr.args[0].star:
                expr = expr.args[0].value
            else:
                return
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return



F16, F32, SCALAR = "float16", "float32", "scalar"
SCALAR_ATTRS = R.INFO_ATTRS
SCALAR_METHODS = R.PYTHON_METHODS
SCALAR_BUILTINS = R.PYTHON_BUILTINS
SCALAR_MODULES = R.PYTHON_MODULES
# the dtype fact's exact value -> this module's kind (bfloat16: known, and not float16)
FACT_KINDS = {
    "float16": F16, "float32": F32, "float64": F32, "bfloat16": None,
    "integer": SCALAR, "bool": SCALAR, "pyint": SCALAR, "pyfloat": SCALAR, "pybool": SCALAR,
}


class Float16Values:
    """Which values of a file are float16 tensors outside autocast, as far as the file shows.

    - *float16 scope*: the methods of module classes the file casts with `.half()` /
      `.to(torch.float16)` (and of their submodule classes) where no autocast region is
      active. There a tensor-looking value (a call result, a parameter without a scalar
      default, a local assigned from one) is float16 unless the file casts it to float32.
    - *float16 locals*: anywhere outside autocast, locals assigned from a float16 cast
      (`h = x.half()`), and float16 cast expressions themselves.
    bfloat16 casts are not float16: bfloat16 has float32's range.

    Locals are tracked in source order by `FrameWalker` (`note_assign`), so a question asked
    during the walk sees the assignments before it (`x = x.to(torch.float32)` makes later
    uses of `x` float32). Branches and loops are read straight through.
    """

    def __init__(self, facts) -> None:
        self.facts = facts
        # id(function or module frame) -> name -> (kind, kind when explicit, assigned value)
        self._flow: Dict[int, Dict[str, Tuple[Optional[str], Optional[str], object]]] = {}
        # ids of the calls that pass values into `float16_callees`, and, as the walk meets them,
        # id(argument) -> (kind, kind when explicit) at that point of the caller
        self.callee_sites: Set[int] = set()
        self._passed: Dict[int, Tuple[Optional[str], Optional[str]]] = {}
        self._containers: Set[Tuple[int, str]] = set()  # (id(scope), name) bound to a dict/list

    def in_scope(self, frame: Frame) -> bool:
        return in_float16_scope(self.facts, frame)

    def forget_assignments(self) -> None:
        self._flow.clear()
        self._passed.clear()
        self._containers.clear()

    def is_float16(self, expr: cst.BaseExpression, frame: Frame, explicit: bool = False) -> bool:
        """`expr` is a float16 tensor outside autocast. `explicit`: only on the evidence of a
        float16 cast (a cast expression or a local assigned from one), not of the scope."""
        return (
            self.facts.active_region(frame) is None
            and self.kind(expr, frame, explicit) == F16
        )

    def kind(self, expr: cst.BaseExpression, frame: Frame, explicit: bool = False) -> Optional[str]:
        """F16, F32, SCALAR, or None when the file does not show it."""
        return self._kind(expr, frame, 0, explicit)

    def assigned_value(self, name: str, frame: Frame) -> Optional[cst.BaseExpression]:
        """The value last assigned to local `name` before this point of the walk."""
        entry = self._flow.get(id(frame.function or frame.scope), {}).get(name)
        return entry[2] if entry is not None else None  # type: ignore[return-value]

    # -- the walk -------------------------------------------------------------------------
    def note_assign(self, targets, value: Optional[cst.BaseExpression], frame: Frame) -> None:
        """Record `targets = value` (value None: something unknown, e.g. a for target)."""
        flow = self._flow.setdefault(id(frame.function or frame.scope), {})
        if value is None:
            entry = (None, None, None)
        else:
            entry = (self._kind(value, frame, 0, False), self._kind(value, frame, 0, True), value)
        split = value is not None and split_input(_unparen(value), frame) is not None
        # `vision_cls, _ = model(image=image)`: each output of a float16 model is float16
        split = split or (value is not None and entry[0] == F16 and isinstance(_unparen(value), cst.Call)
                          and self._model_call(_unparen(value), frame))
        scope = id(frame.function or frame.scope)
        for target in targets:
            if isinstance(target, cst.Subscript):
                note_store(self, flow, scope, target, entry)
                continue
            if isinstance(target, cst.Name):
                if value is not None and isinstance(_unparen(value), CONTAINERS):
                    self._containers.add((scope, target.value))
                else:
                    self._containers.discard((scope, target.value))
            if split and isinstance(target, (cst.Tuple, cst.List)):
                # `q, k, v = qkv.unbind(0)`: each part has the input's dtype
                for element in target.elements:
                    if isinstance(element, cst.Element) and isinstance(element.value, cst.Name):
                        flow[element.value.value] = entry[:2] + (None,)
                    else:
                        for name in bound_names(element.value):
                            flow[name] = (None, None, None)
                continue
            for name in bound_names(target):
                flow[name] = entry if isinstance(target, cst.Name) else (None, None, None)

    def note_call(self, call: cst.Call, frame: Frame) -> None:
        """Record what `call` passes to a float16 callee, as the walk knows its locals here."""
        if self._containers:
            note_container_call(self, self._flow.get(id(frame.function or frame.scope), {}),
                                id(frame.function or frame.scope), call, frame)
        if id(call) in self.callee_sites:
            for arg in call.args:
                self._passed[id(arg.value)] = (
                    self._kind(arg.value, frame, 0, False), self._kind(arg.value, frame, 0, True))

    # -- kinds ----------------------------------------------------------------------------
    def _kind(self, expr, frame: Frame, depth: int, explicit: bool) -> Optional[str]:
        if depth > 8:
            return None
        known = self._fact(expr)  # before `_unparen`, which copies the node
        if known is not _UNKNOWN_FACT:
            return known
        expr = _unparen(expr)
        if isinstance(expr, (cst.Float, cst.Integer)):
            return SCALAR
        if isinstance(expr, cst.UnaryOperation):
            return self._kind(expr.expression, frame, depth + 1, explicit)
        if isinstance(expr, CONTAINERS):  # a dict/list of float16 tensors: what its items are
            items = container_items(expr)
            kinds = {self._kind(item, frame, depth + 1, explicit) for item in items} if items else {None}
            return kinds.pop() if len(kinds) == 1 and kinds <= {F16, F32} else None
        if isinstance(expr, cst.BinaryOperation):
            kinds = {
                self._kind(expr.left, frame, depth + 1, explicit),
                self._kind(expr.right, frame, depth + 1, explicit),
            }
            for result in (F32, F16):  # a float32 tensor operand promotes the result
                if result in kinds:
                    return result
            return SCALAR if kinds == {SCALAR} else None
        if not explicit and isinstance(expr, cst.Call) and self._model_call(expr, frame):
            return F16  # a float16 model's output: evidence of the model, not a cast of the value
        in_scope = self.in_scope(frame) and not explicit
        flow = self._flow.get(id(frame.function or frame.scope), {})
        saw_call = False
        for node in data_chain(expr, frame):
            if node is not expr:
                known = self._fact(node)
                if known is not _UNKNOWN_FACT:
                    return known
            if node is not expr and isinstance(
                _unparen(node), (cst.BinaryOperation, cst.UnaryOperation)
            ):
                # `(x - mean).pow(2)`: a tensor op keeps its operand's dtype
                inner = self._kind(node, frame, depth + 1, explicit)
                if inner in (F16, F32):
                    return inner
                return F16 if in_scope and saw_call else None
            if isinstance(node, cst.Attribute) and node.attr.value in SCALAR_ATTRS:
                return SCALAR
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in SCALAR_METHODS:
                    return SCALAR
                qualified = resolve_expr(func, frame) or ""
                if _index_or_bool(func, qualified):
                    return SCALAR  # `pred.eq(target)`, `x.argmax(1)`: not the receiver's dtype
                if qualified.startswith(SCALAR_MODULES) or (
                    isinstance(func, cst.Name) and func.value in SCALAR_BUILTINS and not qualified
                ):
                    return SCALAR
                if is_float32_cast(node, frame) or float32_window(self, node, frame, depth):
                    return F32
                dtype = half_cast_dtype(node, frame) or self._returned_cast(node)
                if dtype is not None:
                    return F16 if dtype == "float16" else None
                if (
                    isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Name)
                    and func.value.value == "self"
                ):
                    # `self.proj(x)`: a submodule or method of this class returns activations;
                    # an inherited helper (`self.loss_function(...)`) may return anything
                    known = self._own_attr(func.attr.value, frame)
                    method = self._method(func.attr.value, frame) if known else None
                    if method is not None and returns_float32(self, method, depth):
                        return F32  # `self.stft(x)`: a float32 spectrum (spectrum_returns.py)
                    return F16 if in_scope and known else None
                source = _dtype_source(node, frame)
                if source is not None:
                    # `.to(loss.dtype)`, `.type_as(y)`: the dtype of another value
                    if source is _UNKNOWN:
                        return None
                    return self._kind(source, frame, depth + 1, explicit)
                saw_call = True
            elif isinstance(node, cst.Name):
                if node.value in flow:
                    known = flow[node.value][1 if explicit else 0]
                    if known is not None:
                        return known
                    return F16 if in_scope and saw_call else None
                if _tensor_param(node.value, frame):
                    passed = self._passed_kind(node.value, frame, depth, explicit)
                    if passed is not None:
                        return passed
                    return F16 if in_scope else None
                return F16 if in_scope and saw_call else None
        return F16 if in_scope and saw_call else None

    def _returned_cast(self, call: cst.Call) -> Optional[str]:
        """The dtype of the model a builder returns cast (`model = load_model(cfg, ckpt)`): a
        function of this file (facts/returned_casts.py) or of another (its "half" summary)."""
        found = self.facts.returned_casts.get(id(call))
        if found is not None:
            return found[0]
        return "float16" if id(call) in self.facts.remote_casts else None

    def _fact(self, expr: cst.BaseExpression):
        """The kind the dtype fact shows for `expr`, or _UNKNOWN_FACT when it does not know
        one dtype (a value of several possible dtypes, or one that assumes floating operands,
        is not an answer here)."""
        exact = self.facts.dtypes.exact(expr)
        return FACT_KINDS[exact] if exact in FACT_KINDS else _UNKNOWN_FACT

    def _method(self, attr: str, frame: Frame) -> Optional[Frame]:
        cls = frame.class_frame
        return self.facts.callgraph.method(cls.name, attr) if cls is not None else None

    def _own_attr(self, attr: str, frame: Frame) -> bool:
        """`attr` is a method of the enclosing class (or a base of this file) or set on
        `self` in the class."""
        cls = frame.class_frame
        if cls is None:
            return False
        if self.facts.callgraph.method(cls.name, attr) is not None:
            return True
        owned = self.__dict__.setdefault("_owned", {})
        if id(cls) not in owned:
            names = set()
            for assign in self.facts.tree.assigns:
                if assign.frame.class_frame is cls:
                    for target in assign.targets:
                        if (
                            isinstance(target, cst.Attribute)
                            and isinstance(target.value, cst.Name)
                            and target.value.value == "self"
                        ):
                            names.add(target.attr.value)
            owned[id(cls)] = names
        return attr in owned[id(cls)]

    def _passed_kind(self, name: str, frame: Frame, depth: int, explicit: bool) -> Optional[str]:
        """The kind every same-file caller passes for parameter `name` (`self._norm(x.float())`
        makes `x` float32 inside `_norm`), or None when callers differ or there are none."""
        function = frame.function
        if function is None or depth > 4:
            return None
        params = _params(function.node)
        names = [p.name.value for p in params]
        index = names.index(name)
        if names and names[0] in ("self", "cls"):
            index -= 1
        entry = float16_callees(self.facts).get(id(function))
        if isinstance(entry, EntryFloat16Args) and (index in entry.positions or name in entry.keywords):
            return None if explicit else F16  # another file's float16 code passes it float16
        if name in self._model_params(function):
            return F16  # every call binds it to a float16 model (project/half_param_flow.py)
        kinds = set()
        for site in self._callers().get(id(function), []):
            if entry is not None and site.frame.function is not None \
                    and site.frame.function.name == "__init__":
                return None  # a setting (`dim`), not an activation
            arg = None
            for candidate in site.node.args:
                if candidate.keyword is not None and candidate.keyword.value == name:
                    arg = candidate
            if arg is None:
                positional = [a for a in site.node.args if a.keyword is None and not a.star]
                if any(a.star for a in site.node.args) or not 0 <= index < len(positional):
                    return None
                arg = positional[index]
            noted = self._passed.get(id(arg.value))
            if noted is not None:  # the walk met this call: the kind there, not at its end
                kinds.add(noted[1 if explicit else 0])
            else:
                kinds.add(self._kind(arg.value, site.frame, depth + 1, explicit))
        return kinds.pop() if len(kinds) == 1 else None

    def _model_params(self, function: Frame) -> Set[str]:
        """The parameters of `function` every call binds to a float16 model (EntryHalfParam
        with `every`, project/half_params.py and half_param_flow.py)."""
        table = self.__dict__.get("_models")
        if table is None:
            table = self.__dict__["_models"] = {}
            for (key, param), entry in half_param_entries(self.facts.entries).items():
                frame = function_frame(self.facts, key)
                if frame is not None and entry.every and entry.dtype == "float16":
                    table.setdefault(id(frame), set()).add(param)
        return table.get(id(function), set())

    def _model_call(self, call: cst.Call, frame: Frame) -> bool:
        """`model(x)` (any arguments) where `model` holds a float16 model: a local assigned
        from a float16 cast, or a parameter every call binds to one. Its outputs are float16."""
        func = call.func
        if not isinstance(func, cst.Name):
            return False
        entry = self._flow.get(id(frame.function or frame.scope), {}).get(func.value)
        if entry is not None:
            return entry[1] == F16
        function = frame.function
        if function is None or func.value not in self._model_params(function):
            return False
        return func.value not in function.bindings - set(p.name.value for p in _params(function.node))

    def _callers(self) -> Dict[int, List]:
        callers = self.__dict__.get("_callers_map")
        if callers is None:
            callers = {}
            graph = self.facts.callgraph
            for site in self.facts.tree.calls:
                for callee in graph.callees(site):
                    callers.setdefault(id(callee), []).append(site)
            self.__dict__["_callers_map"] = callers
        return callers


_UNKNOWN = cst.Name("_")
_UNKNOWN_FACT = object()
_CAST_KEYWORDS = R.CAST_KEYWORDS


def _index_or_bool(func: cst.BaseExpression, qualified: str) -> bool:
    """A comparison or predicate (`x.eq(y)`, `torch.isnan(x)`: bool) or an index op
    (`x.argmax(1)`, `torch.nonzero(m)`: int64), as a method or a torch function: its result
    has its own dtype, whatever the receiver's (DeepSpeedExamples' `pred.eq(target).sum()`)."""
    if isinstance(func, cst.Attribute) and not qualified:
        name = func.attr.value
    elif qualified.startswith("torch.") and qualified.count(".") == 1:
        name = qualified[len("torch."):]
    else:
        return False
    return name in R.BOOL or name in R.INTEGER


def _dtype_source(call: cst.Call, frame: Frame):
    """For a cast to a dtype held elsewhere: `x.to(y.dtype)`/`x.to(dtype=y.dtype)` -> `y`,
    `x.type_as(y)` -> `y`, a dtype variable -> _UNKNOWN; None for other calls and for
    `.to(device)` moves, which keep the dtype."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "type_as" and call.args:
        return call.args[0].value
    if func.attr.value not in ("to", "type"):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _CAST_KEYWORDS:
            continue
        value = arg.value
        if isinstance(value, cst.SimpleString) or _looks_like_device(value, frame):
            continue
        if isinstance(value, cst.Attribute) and value.attr.value == "dtype":
            return value.value
        return _UNKNOWN
    return None


def _looks_like_device(expr: cst.BaseExpression, frame: Frame) -> bool:
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return True
    if isinstance(expr, cst.Name) and "device" in expr.value:
        return True
    if isinstance(expr, cst.Call):
        return (resolve_expr(expr.func, frame) or "") == "torch.device"
    return False


def float16_values(facts) -> Float16Values:
    """The file's `Float16Values` (computed once: `FileFacts.half_values`)."""
    return facts.half_values


def _tensor_param(name: str, frame: Frame) -> bool:
    """A parameter of the enclosing function other than self/cls with no scalar default
    (a forward's inputs)."""
    function = frame.function
    if function is None or name in ("self", "cls"):
        return False
    for param in _params(function.node):
        if param.name.value == name:
            return param.default is None or not isinstance(
                param.default,
                (cst.Float, cst.Integer, cst.Name, cst.UnaryOperation, cst.SimpleString),
            )
    return False


def walk_float16_code(facts, make_walker) -> None:
    """Walk only the code where float16 values can occur: the methods of float16 module
    classes, and the functions (or the module) holding a float16 cast of something that is not
    a module class of this file. `make_walker(start_frame)` builds the FrameWalker."""
    # each walk starts from no assignment seen: a rule's answers must not depend on whether
    # another rule walked the file before it (AMP141 alone and after AMP140 agree)
    facts.half_values.forget_assignments()
    selected: Set[int] = set(float16_functions(facts)) | set(float16_callees(facts))
    bindings = facts.dtypes.bindings  # and functions every call of which passes float16
    if bindings is not None:
        selected |= bindings.given("float16")
    whole_module = False
    fp16 = facts.fp16
    for site in facts.tree.calls:
        if fp16.half_casts.get(id(site.node)) != "float16":
            continue
        function = site.frame.function
        if function is not None:
            selected.add(id(function))
        elif fp16._class_cast(site) is None:
            whole_module = True
    if whole_module:
        make_walker(None).walk(facts.module)
        return
    callees = float16_callees(facts)
    # the callees last, callers first: what a call passes is noted as the walk meets it
    frames = [f for f in facts.tree.frames if id(f) not in callees]
    by_id = {id(f): f for f in facts.tree.frames if id(f) in callees}
    for frame in frames + [by_id[key] for key in callees]:
        if frame.kind != "function" or id(frame) not in selected:
            continue
        outer = frame.parent
        while outer is not None and not (outer.kind == "function" and id(outer) in selected):
            outer = outer.parent
        if outer is None:  # not nested in another selected function: walk it
            make_walker(frame.parent).walk(frame.node)
