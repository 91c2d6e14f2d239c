"""Where a new float32 tensor goes, through the locals of the function that makes it: does it
stay among values that are never half until it is cast, compared, read for its shape or
dropped? (Megatron-LM's RADIO position-embedding augmentation: `scale = torch.rand(...) *
(1 - m) + m`, `aspect = torch.exp(torch.rand(...) * k + c)`, then `scale * aspect`,
`torch.stack`, `lin * scale_xy + pos_xy`, `grid.mul_(2).sub_(1)`, and finally
`F.grid_sample(pos.float(), grid=grid).to(pos.dtype)`.)

The value is followed up its expression and into every read of each local it is bound to:
- through indexing, unary minus, dtype-keeping shape methods (`view`, `expand`, `.cuda()`,
  `.to(device)`), arithmetic (operators and methods, in place or not) and `torch.stack/cat`
  whose every other operand is never half (a Python number, a value the dtype fact knows is
  float32, float64, an integer or a bool), and torch functions whose every other argument is
  such a value or an option keyword (`mode=`, `align_corners=`: never a tensor);
- it ends well in a cast to the code's dtype (`.to(x.dtype)`, `.type_as(x)`, `.half()`), a
  comparison, a shape or size read, or a statement that drops the result (`g.mul_(2)`).
Anything else (returned, stored, passed to a function of the project, a `dtype=` argument,
a name bound some other way) ends the answer: no. Exact or nothing."""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from amplint.analysis.data import dtype_rules as R
from amplint.analysis.facts.buffer_writes import CONCATS
from amplint.analysis.facts.dtype_value import device_only
from amplint.analysis.facts.half_evidence import never_half
from amplint.analysis.facts.half_values import is_float32_cast
from amplint.analysis.facts.syntax import parents_of
from amplint.analysis.facts.tree import CallSite, iter_nodes
from amplint.analysis.facts.value_meets import _low_cast

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)
_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
# methods whose result has the receiver's dtype whatever their (shape, device) arguments
_SHAPE_METHODS = R.KEEP
# methods mixing the receiver with their arguments (the result: the promoted dtype)
_MIXING_METHODS = frozenset({
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "pow", "pow_", "clamp",
    "clamp_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_", "exp", "exp_", "log", "log_",
    "sqrt", "sqrt_", "sin", "cos", "tanh", "sigmoid", "abs_", "neg_", "reciprocal",
})
_LIMIT = 400  # nodes walked per factory


def stays_float32(facts, site: CallSite) -> bool:
    """The factory's value at `site` (outside autocast) meets only values that are never half,
    through every local it is bound to, and ends cast, compared, measured or dropped."""
    function = site.frame.function
    if function is None:
        return False
    parents = parents_of(function.node)
    walk = _Walk(facts, site.frame, function.node, parents)
    return walk.run(site.node)


class _Walk:
    def __init__(self, facts, frame, root, parents) -> None:
        self.facts, self.frame, self.root, self.parents = facts, frame, root, parents
        self.followed: Set[str] = set()
        self.containers: Set[str] = set()  # local dicts holding the value in an entry
        self.steps = 0

    def run(self, start: cst.CSTNode) -> bool:
        work: List[cst.CSTNode] = [start]
        while work:
            node = work.pop()
            if isinstance(node, cst.Name) and node.value in self.containers:
                node = self._entry_read(node)
                if node is True:
                    continue
                if node is None:
                    return False
            name = self._climb(node)
            if name is False:
                return False
            if isinstance(name, str) and name not in self.followed:
                self.followed.add(name)
                reads = self._reads(name)
                if reads is None:
                    return False
                work.extend(reads)
        return True

    def _entry_read(self, read: cst.Name):
        """A read of a local dict holding the value: an entry load (the value, maybe: climbed
        on), True for an entry store (`m[k] = v` puts another value in), None otherwise."""
        parent = self.parents.get(id(read))
        if not (isinstance(parent, cst.Subscript) and parent.value is read):
            return None
        if isinstance(self.parents.get(id(parent)), cst.AssignTarget):
            return True
        return parent

    def _climb(self, node: cst.CSTNode):
        """Up from `node` (a float32 value): True when it ends well, a local's name when it is
        bound to one (its reads are followed), False otherwise."""
        while True:
            self.steps += 1
            if self.steps > _LIMIT:
                return False
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.Subscript) and parent.value is node:
                node = parent
            elif isinstance(parent, (cst.SubscriptElement, cst.Index, cst.Slice)):
                return True  # used as an index: the result is not this value
            elif isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
                node = parent
            elif isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
                if not self._never_half(parent.right if parent.left is node else parent.left):
                    return False
                node = parent
            elif isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                return True
            elif isinstance(parent, cst.Attribute) and parent.value is node:
                step = self._method(parent)
                if step is None or step is True:
                    return step is True
                node = step
            elif isinstance(parent, cst.Element):
                step = self._concat(parent)
                if step is None:
                    return False
                node = step
            elif isinstance(parent, cst.Arg):
                step = self._torch_call(parent)
                if step is None:
                    return False
                node = step
            elif isinstance(parent, cst.Expr):
                return True  # the result is dropped (`grid.mul_(2).sub_(1)`)
            elif isinstance(parent, cst.Assign) and parent.value is node:
                target = parent.targets[0].target if len(parent.targets) == 1 else None
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                        and self._local_dict(target.value.value):
                    self.containers.add(target.value.value)  # `m[n] = torch.empty(...)`
                    return target.value.value
                if not isinstance(target, cst.Name) or target.value in self.containers:
                    return False
                return target.value
            elif isinstance(parent, cst.AugAssign) and isinstance(parent.operator, _AUGMENTED):
                other = parent.value if parent.target is node else parent.target
                if not isinstance(parent.target, cst.Name) or not self._never_half(other):
                    return False
                return parent.target.value
            else:
                return False

    def _method(self, attribute: cst.Attribute):
        """`value.attr...`: True (ends well), the call to climb on, or None (no answer)."""
        attr = attribute.attr.value
        if attr in R.INFO_ATTRS:
            return True
        call = self.parents.get(id(attribute))
        if not (isinstance(call, cst.Call) and call.func is attribute):
            return attribute if attr in R.KEEP_ATTRS else None
        if attr in R.SIZE_METHODS or attr in R.PYTHON_METHODS:
            return True
        if _low_cast(self.facts, call, self.frame):
            return True
        if is_float32_cast(call, self.frame):
            return call
        if attr == "to" and device_only(call, self.frame):
            return call
        if attr in _SHAPE_METHODS:
            return call
        if attr in _MIXING_METHODS and all(
                a.keyword is None and not a.star and self._never_half(a.value) for a in call.args):
            return call
        return None

    def _concat(self, element: cst.Element) -> Optional[cst.CSTNode]:
        sequence = self.parents.get(id(element))
        arg = self.parents.get(id(sequence))
        call = self.parents.get(id(arg))
        if not (isinstance(sequence, (cst.List, cst.Tuple)) and isinstance(arg, cst.Arg)
                and isinstance(call, cst.Call) and self.facts.resolve(call.func, self.frame) in CONCATS):
            return None
        if not all(e is element or self._never_half(e.value) for e in sequence.elements):
            return None
        return call if self._other_args_never_half(call, arg) else None

    def _torch_call(self, arg: cst.Arg) -> Optional[cst.CSTNode]:
        """A torch function taking the value with arguments that are never half: its result is
        not half either (no `dtype=`, no autocast here)."""
        call = self.parents.get(id(arg))
        if not isinstance(call, cst.Call) or arg.star:
            return None
        qualified = self.facts.resolve(call.func, self.frame) or ""
        if not qualified.startswith("torch.") or qualified.startswith("torch.nn.Module"):
            return None
        return call if self._other_args_never_half(call, arg) else None

    def _other_args_never_half(self, call: cst.Call, own: cst.Arg) -> bool:
        for other in call.args:
            if other is own:
                continue
            keyword = other.keyword.value if other.keyword is not None else None
            if keyword in ("dtype", "out") or other.star:
                return False
            if keyword in R.OPTION_KEYWORDS:
                continue
            if not self._never_half(other.value):
                return False
        return True

    def _never_half(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float)):
            return True
        value = self.facts.dtypes.dtype(expr)
        return never_half(value)

    def _local_dict(self, name: str) -> bool:
        """Every binding of `name` in the function is `name = {}` or `name = dict()`."""
        found = False
        for node in iter_nodes(self.root):
            if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) \
                    and node.target.value == name:
                assign = self.parents.get(id(node))
                value = assign.value if isinstance(assign, cst.Assign) else None
                empty = (isinstance(value, cst.Dict) and not value.elements) or (
                    isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                    and value.func.value == "dict" and not value.args)
                if not empty:
                    return False
                found = True
        return found

    def _reads(self, name: str) -> Optional[List[cst.CSTNode]]:
        """The reads of the local `name`; None when it is bound otherwise than by `name = ...`
        or `name op= ...` (a parameter, a loop target, `global`, unpacking, a nested scope)."""
        reads: List[cst.CSTNode] = []
        for node in iter_nodes(self.root):
            if not (isinstance(node, cst.Name) and node.value == name):
                continue
            parent = self.parents.get(id(node))
            if isinstance(parent, cst.AssignTarget) and parent.target is node:
                continue
            if isinstance(parent, cst.AugAssign) and parent.target is node:
                continue  # the update itself was read where its value came from
            if isinstance(parent, (cst.Param, cst.For, cst.CompFor, cst.AsName, cst.Global,
                                   cst.Nonlocal, cst.Element, cst.StarredElement)) and \
                    _binds(parent, node, self.parents):
                return None
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            reads.append(node)
        return reads


def _binds(parent: cst.CSTNode, node: cst.Name, parents) -> bool:
    if isinstance(parent, (cst.Param, cst.AsName, cst.Global, cst.Nonlocal)):
        return True
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.target is node
    # `a, b = ...`: an element of a tuple or list that is an assignment target
    outer = parents.get(id(parent))
    while isinstance(outer, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        outer = parents.get(id(outer))
    return isinstance(outer, (cst.AssignTarget, cst.For, cst.CompFor))
