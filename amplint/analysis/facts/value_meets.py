"""Where a new tensor meets other data, and why that other value is half: what AMP101's
messages name ("line 8 writes `h` into it (half: the output of `self.encoder` at line 6)").

A factory's value is followed through the function that makes it: the call itself, or the
local it is bound to. It meets another value in arithmetic (`x * mask`), an in-place or
augmented update (`mask += h`, `buf.add_(h)`), an index write (`buf[idx] = h`) or a
`torch.cat/stack` with it. Python numbers, reads through an explicit cast (`mask.float()`) and
values the dtype fact knows are not half (float32, integer, bool) are not meetings.

`cast_where_rebound` says a factory's local is rebound, before anything else reads it, to a
cast of itself through dtype-keeping steps (meta-llama's `mask = torch.full(...)` then
`mask = torch.triu(mask, diagonal=1).type_as(h)`): its float32 value meets nothing uncast.

`reads_meet_no_data` says every read of a factory's local ends in indices, a shape, a bool or
a Python number, or in an update of the local itself that keeps its dtype whatever its arguments (muse-maskgit's `scores = torch.zeros(...)`, read only as `scores.topk(k).indices` and
rebound by `scores.masked_fill(~is_mask, -1e5)`): its float32 value never meets half data.

Why a met value is half is facts/half_evidence.py's `half_origin`, the answer the buffer writes
read too.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.buffer_writes import CONCATS, WRITTEN_ARGUMENT
from amplint.analysis.facts.half_evidence import half_origin, never_half
from amplint.analysis.facts.defuse import explicit_cast
from amplint.analysis.facts.syntax import parents_of, unparen
from amplint.analysis.facts.tree import CallSite, iter_nodes

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
               cst.MatrixMultiply)
_METHODS = {"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "addcmul_", "copy_",
            "masked_scatter_", "index_add_", "index_copy_", "scatter_", "scatter_add_"}


class Meeting(NamedTuple):
    node: cst.CSTNode  # where it happens (its line is cited)
    verb: str  # "mixes it with" | "writes {value} into it" | "concatenates it with"
    other: cst.BaseExpression
    origin: Optional[Tuple[str, cst.CSTNode]]  # why `other` is half, and the node to cite


def _candidate(facts, other: cst.BaseExpression, frame) -> bool:
    """`other` can be data of another dtype: not a Python number, not known to be a dtype that
    never makes the float32 tensor a problem."""
    if isinstance(other, (cst.Integer, cst.Float, cst.Imaginary)):
        return False
    if isinstance(other, cst.UnaryOperation) and isinstance(other.expression, (cst.Integer, cst.Float)):
        return False
    value = facts.dtypes.dtype(other)
    return not never_half(value)


def _meetings_of(facts, read: cst.CSTNode, parents, frame, every: bool = False) -> List[Meeting]:
    parent = parents.get(id(read))
    while True:  # `mask[:, None]`, `mask.view(n, 1)` keep its dtype: follow them up
        if isinstance(parent, cst.Subscript) and parent.value is read and not isinstance(
                parents.get(id(parent)), cst.AssignTarget):
            read = parent
        elif isinstance(parent, cst.Attribute) and parent.value is read \
                and parent.attr.value in _R.KEEP and isinstance(parents.get(id(parent)), cst.Call) \
                and parents[id(parent)].func is parent:
            read = parents[id(parent)]
        else:
            break
        parent = parents.get(id(read))
    found: List[Meeting] = []
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
        other = parent.right if parent.left is read else parent.left
        found.append(Meeting(parent, "mixes it with", other, None))
    elif isinstance(parent, cst.AugAssign) and isinstance(parent.operator, (
            cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
        other = parent.value if parent.target is read else parent.target
        found.append(Meeting(parent, "mixes it with", other, None))
    elif isinstance(parent, cst.Subscript) and parent.value is read:
        target = parents.get(id(parent))
        if isinstance(target, cst.AssignTarget):
            assign = parents.get(id(target))
            if isinstance(assign, cst.Assign):
                found.append(Meeting(assign, "writes {value} into it", assign.value, None))
    elif isinstance(parent, cst.Attribute) and parent.value is read:
        call = parents.get(id(parent))
        if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _METHODS:
            for arg in _operands(call, parent.attr.value):
                found.append(Meeting(call, "writes {value} into it" if parent.attr.value.endswith("_")
                                     else "mixes it with", arg.value, None))
    elif isinstance(parent, cst.Element):
        sequence = parents.get(id(parent))
        arg = parents.get(id(sequence))
        call = parents.get(id(arg))
        if isinstance(sequence, (cst.List, cst.Tuple)) and isinstance(arg, cst.Arg) \
                and isinstance(call, cst.Call) and facts.resolve(call.func, frame) in CONCATS:
            for element in sequence.elements:
                if element is not parent:
                    found.append(Meeting(call, "concatenates it with", element.value, None))
    elif isinstance(parent, cst.Arg):
        call = parents.get(id(parent))
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and call.func.attr.value in _METHODS:
            found.append(Meeting(call, "mixes it with", call.func.value, None))
    return found if every else [m for m in found if _candidate(facts, m.other, frame)]


def _operands(call: cst.Call, method: str) -> List[cst.Arg]:
    """The arguments whose values meet the receiver's: for a scatter/index writer only the values
    it writes (`buf.scatter_(-1, idx, src)`: `src`, never the dim or the int64 index)."""
    if method not in WRITTEN_ARGUMENT:
        return [arg for arg in call.args if arg.keyword is None]
    position = WRITTEN_ARGUMENT[method][0]
    return [arg for index, arg in enumerate(call.args) if arg.keyword is None and index == position]


def _reads(facts, root, parents, name: str) -> List[cst.CSTNode]:
    """Reads of the local `name` in `root`, less its bindings and its explicit casts."""
    reads: List[cst.CSTNode] = []
    for node in iter_nodes(root):
        if isinstance(node, cst.Name) and node.value == name:
            parent = parents.get(id(node))
            if isinstance(parent, cst.AssignTarget) and parent.target is node:
                continue  # a binding, not a read
            if isinstance(parent, cst.Attribute) and parent.value is node:
                call = parents.get(id(parent))
                if isinstance(call, cst.Call) and call.func is parent and explicit_cast(call):
                    continue  # `mask.float()`: never meets anything as it is
            reads.append(node)
    return reads


def meets_only_float32(facts, site: CallSite, name: Optional[str]) -> bool:
    """Every read of the local `name` (name None: the factory call where it is made) meets only
    values the dtype fact knows are float32 or float64 (`torch.cat([key_padding_mask.float(),
    filler])`, `torch.cat([emb, torch.zeros(n, 1)])`): the result has their dtype whatever the
    factory makes, so its float32 upcasts nothing."""
    function = site.frame.function
    if function is None:
        return False
    parents = parents_of(function.node)
    reads = [site.node] if name is None else _reads(facts, function.node, parents, name)
    if not reads:
        return False
    for read in reads:
        meetings = _meetings_of(facts, read, parents, site.frame, every=True)
        if not meetings:
            return False
        for meeting in meetings:
            value = facts.dtypes.dtype(meeting.other)
            if value is None or value.conditional or not value.options <= {"float32", "float64"}:
                return False
    return True


# reads whose result is indices, a shape, a bool or a Python number: no float data comes out
_INDEX_METHODS = {"argmax", "argmin", "argsort", "nonzero", "size", "dim", "numel", "item",
                  "tolist", "any", "all", "eq", "ne", "gt", "ge", "lt", "le", "isnan", "isinf",
                  "isfinite"}
_SORTS = {"topk", "sort", "max", "min"}  # their `.indices` / `[1]`
_METADATA = {"shape", "device", "dtype", "ndim", "is_cuda"}
_KEEP_SELF = {"masked_fill", "masked_fill_", "fill_", "zero_", "uniform_", "normal_"}


def reads_meet_no_data(facts, site: CallSite, name: Optional[str]) -> bool:
    """Every read of the local `name` gives indices, a shape, a bool or a Python number, or is
    an update of `name` itself that keeps its dtype (`masked_fill`, `fill_`): the factory's
    float32 never meets half data (the value is not returned, stored, passed or mixed)."""
    function = site.frame.function
    if name is None or function is None:
        return False
    parents = parents_of(function.node)
    reads = _reads(facts, function.node, parents, name)
    return bool(reads) and all(_meets_no_data(read, parents, name) for read in reads)


def _meets_no_data(read: cst.CSTNode, parents, name: str) -> bool:
    parent = parents.get(id(read))
    if isinstance(parent, cst.ComparisonTarget) or (
            isinstance(parent, cst.Comparison) and parent.left is read):
        return True
    if not (isinstance(parent, cst.Attribute) and parent.value is read):
        return False
    attr = parent.attr.value
    if attr in _METADATA:
        return True
    call = parents.get(id(parent))
    if not (isinstance(call, cst.Call) and call.func is parent):
        return False
    if attr in _INDEX_METHODS:
        return True
    outer = parents.get(id(call))
    if attr in _SORTS:
        if isinstance(outer, cst.Attribute) and outer.value is call:
            return outer.attr.value == "indices"
        return isinstance(outer, cst.Subscript) and outer.value is call and _index_one(outer)
    if attr in _KEEP_SELF:  # the result has the local's own dtype, whatever the arguments
        if isinstance(outer, cst.Assign) and len(outer.targets) == 1:
            target = outer.targets[0].target
            return isinstance(target, cst.Name) and target.value == name
        return isinstance(outer, cst.Expr) and attr.endswith("_")
    return False


def _index_one(subscript: cst.Subscript) -> bool:
    """`x.topk(k)[1]`: the indices of a sort."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    value = subscript.slice[0].slice.value
    return isinstance(value, cst.Integer) and value.value == "1"


def first_meeting(facts, site: CallSite, name: Optional[str]) -> Optional[Meeting]:
    """Where the value of the factory call at `site` (bound to the local `name`, or used where
    it is made when `name` is None) first meets data that may be half: the first meeting with a
    value shown half, else the first meeting with a value of unknown dtype."""
    function = site.frame.function
    root = function.node if function is not None else facts.module
    parents = parents_of(root)
    reads = [site.node] if name is None else _reads(facts, root, parents, name)
    meetings = [m for read in reads for m in _meetings_of(facts, read, parents, site.frame)]
    if not meetings:
        return None
    shown = [m._replace(origin=half_origin(facts, m.other, site.frame)) for m in meetings]
    with_origin = [m for m in shown if m.origin is not None]
    return (with_origin or shown)[0]


def cast_where_rebound(facts, site: CallSite, name: Optional[str]) -> bool:
    """The factory call at `site` is bound to the local `name` by a plain `name = <call>`, and
    the next statement of the same block that mentions `name` is `name = <cast>` whose only read
    of `name` is the receiver of the cast, reached through dtype-keeping steps (the shared dtype
    tables, as the escape walk reads them): `mask = torch.triu(mask, diagonal=1).type_as(h)`.
    The casts are `.type_as(x)`, `.to(...)`/`.type(...)` naming a dtype that is not float32 or
    float64 (`x.dtype`, `dtype=d`, `torch.float16`), and `.half()`/`.bfloat16()`/integer or bool
    casts. The statements in between are simple ones without `continue`/`break` that do not
    mention `name`, so nothing else can read the float32 value."""
    function = site.frame.function
    stmt = site.line_stmt
    if name is None or function is None or stmt is None:
        return False
    parents = parents_of(function.node)
    block = parents.get(id(stmt))
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return False
    for node in iter_nodes(function.node):
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(
                item.name.value == name for item in node.names):
            return False
    ancestor = block
    while ancestor is not None and ancestor is not function.node:
        if isinstance(ancestor, cst.Try) and any(
                _mentions(part, name) for part in (*ancestor.handlers, ancestor.orelse,
                                                   ancestor.finalbody) if part is not None):
            return False  # an exception between the two bindings lets a handler read it
        ancestor = parents.get(id(ancestor))
    index = next((i for i, s in enumerate(body) if s is stmt), None)
    if index is None:
        return False
    for later in body[index + 1:]:
        if not isinstance(later, cst.SimpleStatementLine):
            return False
        if any(isinstance(small, (cst.Continue, cst.Break)) for small in later.body):
            return False
        if not _mentions(later, name):
            continue
        if len(later.body) != 1 or not isinstance(later.body[0], cst.Assign):
            return False
        assign = later.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                or assign.targets[0].target.value != name:
            return False
        return _cast_of(facts, assign.value, name, site.frame)
    return False


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(node))


def cast_where_made(facts, site: CallSite) -> bool:
    """The factory's value goes, through dtype-keeping steps only, straight into a cast
    `cast_where_rebound` accepts (NVIDIA WaveGlow's `torch.randn(...).to(spect.dtype)`, esm's
    `torch.zeros(...).type_as(mask)`) or into a comparison, whose result is bool (wav2vec2's
    layerdrop `torch.rand(1) > p`): its float32 value meets nothing else."""
    stmt = site.top_stmt or site.line_stmt
    if stmt is None:
        return False
    for node in iter_nodes(stmt):
        if isinstance(node, cst.Call) and _low_cast(facts, node, site.frame):
            operands = [node.func.value]  # type: ignore[attr-defined]
        elif isinstance(node, cst.Comparison):
            operands = [node.left] + [c.comparator for c in node.comparisons]
        else:
            continue
        if any(facts.escape.keep_root(o, site.frame) is site.node for o in operands):
            return True
    return False


def _cast_of(facts, expr: cst.BaseExpression, name: str, frame) -> bool:
    """`expr` casts the local `name` (its only read, through dtype-keeping steps) to a dtype
    that is not float32 or float64."""
    expr = unparen(expr)
    if not isinstance(expr, cst.Call) or not _low_cast(facts, expr, frame):
        return False
    if sum(1 for n in iter_nodes(expr) if isinstance(n, cst.Name) and n.value == name) != 1:
        return False
    root = unparen(facts.escape.keep_root(expr.func.value, frame))  # type: ignore[attr-defined]
    return isinstance(root, cst.Name) and root.value == name


def _low_cast(facts, call: cst.Call, frame) -> bool:
    """`call` is `.type_as(x)`, `.half()`/`.bool()`/`.long()`, or `.to(...)`/`.type(...)`
    naming a dtype that is not float32 or float64 (`x.dtype`, `dtype=d`, `torch.float16`)."""
    if not isinstance(call.func, cst.Attribute):
        return False
    method = call.func.attr.value
    if method == "type_as":
        return len(call.args) == 1 and call.args[0].keyword is None
    if method in _R.CAST_METHODS:
        return not call.args and _R.CAST_METHODS[method] not in ("float32", "float64")
    if method in ("to", "type"):
        return _names_low_dtype(facts, call, frame)
    return False


def _names_low_dtype(facts, call: cst.Call, frame) -> bool:
    """`.to(...)`/`.type(...)` names a dtype (`x.dtype`, `dtype=d`, `torch.float16`) that is
    not float32 or float64."""
    for arg in call.args:
        value = arg.value
        if arg.keyword is not None and arg.keyword.value != "dtype":
            continue
        dtype = _R.DTYPE_NAMES.get(facts.resolve(value, frame) or "")
        if dtype is not None:
            return dtype not in ("float32", "float64")
        if arg.keyword is not None or (isinstance(value, cst.Attribute) and value.attr.value == "dtype"):
            return True  # `dtype=d`, `.to(x.dtype)`: the dtype of the code it runs in
    return False
