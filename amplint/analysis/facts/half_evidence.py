"""Why a value may be half where a float32 tensor meets it: the one answer AMP101's buffer
writes (buffer_writes.hazardous_write) and its meetings (value_meets.first_meeting) read, and
the answer the autocast escape walk (escape.py) shares for "which op lowers here".

The dtype fact (amplint.analysis.facts.dtypes, torch's own tables) answers first: a value it
may value half is half; a value whose every possible dtype is another (`p.float()`, a
`LayerNorm` output under CUDA autocast, an integer index) is not, whatever it looks like. What
the fact leaves unknown (a submodule's output, a call of another file) is half on evidence
only: a matmul `@`, an op torch's lower-precision list of the active region's device names
(both devices must agree when the region's device is unknown; outside a region, either
device's), a module's output, a dtype-keeping step of one (`h.view(n, -1)`, `h[idx]`, a piece
of `h.split(d)`), arithmetic whose tensor sides all are, or a local the function binds to one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.dtypes import region_policy
from amplint.analysis.facts.returned_escapes import EntryModuleOutput
from amplint.analysis.facts.tree import dotted_name, iter_nodes, scope_key

HALF_OPTIONS = ("float16", "bfloat16", "autocast")
# `h * W`, `h + b`: the result is half only when every tensor side is (a float32 side promotes)
_ELEMENTWISE = (cst.Multiply, cst.Add, cst.Subtract, cst.Divide)
_LOWER_EITHER = (
    _R.CUDA_LOWER_PRECISION.ops | _R.CPU_LOWER_PRECISION.ops
    | {op for (_, op), policy in _R.DECOMPOSED_POLICY.items() if policy == "lower"}
)

Origin = Tuple[str, cst.CSTNode]


def lowers_here(facts, op: Optional[str], frame) -> bool:
    """aten `op` runs in the low dtype where `frame` runs: the active region's device list
    (region_policy: "lower"), or, outside any region, either device's list (fp16 code's
    evidence that a matmul-family result is half)."""
    if not op:
        return False
    region = facts.active_region(frame)
    if region is None:
        return op in _LOWER_EITHER
    return region_policy(region, op) == "lower"


def lowers_call(facts, qualified: Optional[str], frame) -> bool:
    return lowers_here(facts, _R.aten_op(qualified or ""), frame)


def never_half(value) -> bool:
    """The dtype fact's `value` shows no half dtype: each dtype it may have is another. A
    `conditional` value (it holds when the operands of unknown dtype are floating tensors: a
    `LayerNorm` output under CUDA autocast) is no half either way: a non-floating operand
    gives an integer or bool result, or raises."""
    return value is not None and not value.may_be(*HALF_OPTIONS)


def may_be_half(facts, expr: cst.BaseExpression, frame) -> bool:
    return half_origin(facts, expr, frame) is not None


def half_origin(facts, expr: cst.BaseExpression, frame, depth: int = 0) -> Optional[Origin]:
    """(why `expr` may be half, the node that shows it), or None when nothing shows it."""
    known = _fact(facts, expr)
    if known == "":
        return None
    if isinstance(expr, cst.Subscript):  # `h[keep]` has the dtype of `h`: cite what shows `h`
        inner = expr
        while isinstance(inner, cst.Subscript):
            inner = inner.value
        return half_origin(facts, inner, frame, depth) or known
    if isinstance(expr, cst.Name):  # cite the binding that shows it: `y = torch.mm(a, b)`
        # a piece of a split only where the fact does not know the name (`v` is bfloat16)
        bound = _bound_half(facts, expr.value, frame, depth, known is None) if depth < 3 else None
        return bound or known or _passed_half(facts, expr, frame)
    if known is not None:
        return known
    code = facts.module.code_for_node
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.MatrixMultiply):
            return "a matmul result", expr
        if isinstance(expr.operator, _ELEMENTWISE) and depth < 6:
            sides = [s for s in (expr.left, expr.right) if not isinstance(s, (cst.Integer, cst.Float))]
            found = [half_origin(facts, side, frame, depth + 1) for side in sides]
            return found[0] if found and all(found) else None
        return None
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    qualified = facts.resolve(func, frame)
    if lowers_call(facts, qualified, frame):
        return f"a `{code(func)}` result", expr
    if isinstance(func, cst.Attribute) and func.attr.value in _R.KEEP and qualified is None and depth < 6:
        # `model(x).squeeze(-1)`, `h.view(n, -1)`: a shape op keeps its receiver's dtype
        return half_origin(facts, func.value, frame, depth + 1)
    if module_callee(facts, func, frame):
        return f"the output of `{code(func)}`", expr
    return None


def _fact(facts, expr: cst.BaseExpression):
    """The dtype fact's answer: an origin when it may be half, "" when it surely is not (every
    dtype it may have is another), None when it does not know."""
    value = facts.dtypes.dtype(expr)
    if value is None:
        return None
    if never_half(value):
        return ""
    halves = sorted(value.options & {"float16", "bfloat16"})
    word = " or ".join(halves) if halves else "the region's low dtype"
    shown = " ".join(facts.module.code_for_node(expr).split())
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"`{shown}` is {word}", expr


def _bound_half(facts, name: str, frame, depth: int, pieces: bool = True) -> Optional[Origin]:
    """The first binding of local `name` in the function that may be half: `name = <half>`, or
    a piece of one (`q, k, v = self.wqkv(x).split(dim, dim=-1)`)."""
    function = frame.function
    for assign in facts.tree.assigns:
        if assign.frame.function is not function:
            continue
        if any(isinstance(t, cst.Name) and t.value == name for t in assign.targets):
            found = half_origin(facts, assign.value, assign.frame, depth + 1)
        elif pieces and _split_into(assign, name):
            found = half_origin(facts, assign.value.func.value, assign.frame, depth + 1)
        else:
            continue
        if found is not None:
            return found
    return None


def _split_into(assign, name: str) -> bool:
    """`..., name, ... = t.split(...)` (torch's tuple-keeping ops): each piece has t's dtype."""
    value = assign.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _R.TUPLE_KEEP):
        return False
    return any(isinstance(t, (cst.Tuple, cst.List)) and any(
        isinstance(e.value, cst.Name) and e.value.value == name for e in t.elements)
        for t in assign.targets)


def module_callee(facts, func: cst.BaseExpression, frame) -> bool:
    """`self.layer(...)` (an attribute that is not a method), an instance of a module class
    of this file, a call the project resolves to the forward of project module classes
    (EntryForwardCall; in the project pass, its EntryModuleOutput), or a loop variable over
    `self.layers` (`for i, layer in enumerate(self.x)`)."""
    owner = facts.callgraph.self_attr_owner(func, frame)
    if owner is not None:
        return facts.callgraph.method(owner[0], owner[1]) is None
    if facts.callgraph.class_of_instance(func, frame) is not None:
        return True
    if _forward_call(facts, func, frame) is not None:
        return True
    if not isinstance(func, cst.Name):
        return False
    function = frame.function
    root = function.node if function is not None else facts.module
    for node in iter_nodes(root):
        if not isinstance(node, cst.For):
            continue
        iterable, target = node.iter, node.target
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "enumerate" and iterable.args:
            iterable = iterable.args[0].value
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                target = target.elements[1].value
        if (
            isinstance(target, cst.Name) and target.value == func.value
            and isinstance(iterable, cst.Attribute) and isinstance(iterable.value, cst.Name)
            and iterable.value.value == "self"
        ):
            return True
    return False


@dataclass(frozen=True)
class EntryForwardCall:
    """`callee(...)` (its dotted text) in function `scope` of this file runs, under a region,
    the forward of project module classes of other files (the project's EntryModuleOutput,
    handed to the file where AMP101 reads it: project/module_outputs.forward_call_entries):
    pytorch-metric-learning's `compute_all_embeddings(trunk, embedder, ...)` fills a float32
    bank with `embedder(trunk(x))`, the models built in another file and passed in."""

    scope: str
    callee: Tuple[str, ...]
    classes: str  # "TinyAttention in models/attention.py"


def _forward_call(facts, func: cst.BaseExpression, frame) -> Optional[str]:
    """The module classes the project says `func(...)` at `frame` runs (EntryForwardCall, or
    the pass's own EntryModuleOutput), None when it says nothing."""
    table = facts.__dict__.get("_forward_calls")
    if table is None:
        table = {(e.scope, e.callee): e.classes for e in facts.entries
                 if isinstance(e, (EntryForwardCall, EntryModuleOutput))}
        facts.__dict__["_forward_calls"] = table
    dotted = dotted_name(func) if table else None
    if dotted is None:
        return None
    return table.get((scope_key(frame.scope) if frame.scope is not None else "", dotted))


@dataclass(frozen=True)
class EntryRegionArg:
    """Parameter `param` of function `scope` (its key in this file) is bound, at a call of
    another file under an enabled autocast region that reaches it, to a value that file shows
    may be half there (amplint.analysis.project.region_args): GFPGAN's `GFPGANer.enhance` runs
    `output = self.gfpgan(batch)[0]` under its region and passes `output` to
    `scatter_restored_faces(restored, ...)` of face_utils.py."""

    scope: str
    param: str
    # "the output of `self.gfpgan` at gfpgan/utils.py:60, passed at gfpgan/utils.py:61"
    cite: str


def _passed_half(facts, expr: cst.Name, frame) -> Optional[Origin]:
    """A parameter that a call of another file under an enabled region binds to a value that
    may be half there (EntryRegionArg), read where the function runs under a region and the
    function never binds the name itself."""
    function = frame.function
    if function is None or facts.active_region(frame) is None:
        return None
    table = facts.__dict__.get("_region_args")
    if table is None:
        table = {(e.scope, e.param): e.cite for e in facts.entries if isinstance(e, EntryRegionArg)}
        facts.__dict__["_region_args"] = table
    cite = table.get((scope_key(function), expr.value)) if table else None
    if cite is None or frame.scope is not function or not facts.tree.bound_once(function, expr.value):
        return None  # a name the function binds again (or a comprehension's) is not the argument
    return cite, expr
