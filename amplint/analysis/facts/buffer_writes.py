"""What goes into a tensor a float factory just made (`buf = torch.zeros(...)`), for AMP101:
the first use that goes wrong when the value is half (an advanced-index write, an in-place
scatter, `out=buf`, a cat/stack), the value written, whether a value can be half under
autocast, and what kind of tensor a `device=r.device` reference is."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.data.write_errors import HALF_NAMES, INDEX_PUT, METHOD_ERRORS, OUT_ERROR
from amplint.analysis.facts.half_evidence import lowers_call, may_be_half
from amplint.analysis.facts.syntax import self_attr
from amplint.analysis.facts.tree import CallSite, argument, iter_nodes, keyword

# in-place writer -> (position, keyword) of the values it writes
WRITTEN_ARGUMENT = {
    "index_put_": (1, "values"), "index_copy_": (2, "source"), "index_add_": (2, "source"),
    "scatter_": (2, "src"), "scatter_add_": (2, "src"), "scatter_reduce_": (2, "src"),
    "masked_scatter_": (1, "source"), "put_": (1, "source"),
}
CONCATS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack",
           "torch.vstack")


def written_value(facts, site: CallSite) -> Optional[cst.BaseExpression]:
    """The tensor whose values are written into the new buffer, when it is a plain name or
    `self.` attribute (`buf[idx] = h`, `buf[idx] = h[idx]`, `buf.index_add_(0, idx, h)`)."""
    if _assigned_name(site) is None and held_buffer(facts, site) is not None:
        return None  # `self.cache`: made once, its dtype is not one call's value
    found = hazardous_write(facts, site)
    if found is None or found[1] != "raise":
        return None
    value = found[2]
    while isinstance(value, cst.Subscript):
        value = value.value
    if isinstance(value, cst.Name) or (
        isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
    ):
        return value if _same_at_the_factory(facts, site, found[0], value) else None
    return None


def _same_at_the_factory(facts, site: CallSite, write: cst.CSTNode, value) -> bool:
    """`value`, read at the factory call, is what the write puts in: nothing rebinds its name
    between the two (`cache = torch.zeros(...)` then `k = lin(x)` then `cache[i] = k`: `k` is
    not bound yet at the factory, and `dtype=k.dtype` there would raise NameError); for
    `self.h`, nothing stores into `self` in between either."""
    func = getattr(write, "func", None)
    if isinstance(func, cst.Attribute) and func.value is site.node:
        return True  # `torch.zeros(...).index_add_(0, idx, h)`: read in the same expression
    root = value if isinstance(value, cst.Name) else value.value
    bad = {"rebound", "escapes"} if isinstance(value, cst.Name) else {"rebound", "escapes", "mutated"}
    try:
        changes = facts.defuse.changes(root.value, site.node, write, site.frame.function)
    except KeyError:
        return False
    return not any(change.kind in bad for change in changes)


def write_error(write: cst.CSTNode, dtype: Optional[str]) -> str:
    """What torch raises for this write of a `dtype` value into a float32 tensor (the start of
    its message, amplint.analysis.data.write_errors); the index-put message for `buf[idx] = h`."""
    half = HALF_NAMES.get(dtype or "", "Half/BFloat16")  # the region's dtype unknown
    if isinstance(write, cst.Call):
        func = write.func
        if isinstance(func, cst.Attribute) and func.attr.value in METHOD_ERRORS:
            return METHOD_ERRORS[func.attr.value].format(half=half)
        if keyword(write, "out") is not None:
            return OUT_ERROR.format(half=half)
    return INDEX_PUT


def hazardous_write(facts, site: CallSite):
    """(node, "raise" | "upcast", value) for the first use of the new float32 tensor in the
    same function that goes wrong when the value is half: an advanced-index write
    (`buf[idx] = h` with a tensor or mask index), `index_add_/index_copy_/index_put_/scatter*/
    masked_scatter_/put_`, `out=buf` of a matmul-family op (these raise), or a cat/stack of it
    with a half value (silently float32). The value must possibly be half (facts/half_evidence.py):
    constants and float32-by-construction values never are. Basic-slice writes
    (`buf[i, :n] = h`) convert the dtype and are fine."""
    chained = _chained_write(facts, site)
    if chained is not None:
        return chained
    buffer = _assigned_name(site) or held_buffer(facts, site)
    if buffer is None:
        return None
    function = site.frame.function
    found = []
    for assign in facts.tree.assigns:
        if assign.frame.function is not function:
            continue
        for target in assign.targets:
            if (
                isinstance(target, cst.Subscript)
                and _is_buffer(target.value, buffer)
                and _advanced_index(facts, target, assign.frame)
                and may_be_half(facts, assign.value, assign.frame)
            ):
                found.append((target, "raise", assign.value))
    for qualified, other in facts.qualified_calls:
        if other.frame.function is not function:
            continue
        call = other.node
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in WRITTEN_ARGUMENT
            and _is_buffer(func.value, buffer)
        ):
            position, name = WRITTEN_ARGUMENT[func.attr.value]
            arg = argument(call, position, name)
            if arg is not None and may_be_half(facts, arg.value, other.frame):
                found.append((call, "raise", arg.value))
        out = keyword(call, "out")
        if (
            out is not None and _is_buffer(out.value, buffer)
            and lowers_call(facts, qualified, other.frame)
            and any(may_be_half(facts, a.value, other.frame) for a in call.args if a.keyword is None)
        ):
            found.append((call, "raise", None))
        if qualified in CONCATS and call.args and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            items = [e.value for e in call.args[0].value.elements]
            # the tensor itself, or a value cast to its dtype, is never another dtype than it
            # (mmagic's `torch.cat([noise_batch, label.to(noise_batch)])`, where `noise_batch`
            # is this factory's value on one branch and a half one on another)
            half = next((i for i in items if not _is_buffer(i, buffer)
                         and not _cast_to_buffer(i, buffer)
                         and may_be_half(facts, i, other.frame)), None)
            if half is not None and any(_is_buffer(i, buffer) for i in items):
                found.append((call, "upcast", half))
    if not found:
        return None
    return min(found, key=lambda item: _position(facts, item[0], function))


def _chained_write(facts, site: CallSite):
    """`torch.zeros(...).index_add_(0, idx, h)`: the new tensor is written as it is made (the
    chained form of `buf = torch.zeros(...); buf.index_add_(0, idx, h)`)."""
    function = site.frame.function
    for other in facts.tree.calls:
        func = other.node.func
        if (
            other.frame.function is function and isinstance(func, cst.Attribute)
            and func.value is site.node
            and func.attr.value in WRITTEN_ARGUMENT
        ):
            position, name = WRITTEN_ARGUMENT[func.attr.value]
            arg = argument(other.node, position, name)
            if arg is not None and may_be_half(facts, arg.value, other.frame):
                return other.node, "raise", arg.value
            return None
    return None


def _position(facts, node, function) -> int:
    scope = function.node if function is not None else None
    data = facts.defuse._scope(scope)
    return data.order.get(id(node), 0)


def _advanced_index(facts, target: cst.Subscript, frame) -> bool:
    """A tensor or mask index (index_put_, which demands matching dtypes), not basic indexing
    (ints, slices, None, ...), which converts the value to the destination's dtype."""
    ints = _int_loop_names(facts, frame)
    for element in target.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        value = index.value
        if isinstance(value, (cst.Integer, cst.Ellipsis)) or (
            isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer)
        ):
            continue
        if isinstance(value, cst.Name) and (value.value in ("None", "Ellipsis") or value.value in ints):
            continue
        if isinstance(value, cst.BinaryOperation) and all(
            isinstance(side, cst.Integer) or (isinstance(side, cst.Name) and side.value in ints)
            for side in (value.left, value.right)
        ):
            continue
        return True
    return False


def _int_loop_names(facts, frame) -> set:
    """Names bound by `for i in range(...)`, `for i, x in enumerate(...)` in the function."""
    function = frame.function
    root = function.node if function is not None else facts.module
    names = set()
    for node in iter_nodes(root):
        if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call):
            continue
        callee = node.iter.func
        if isinstance(callee, cst.Name) and callee.value == "range" and isinstance(node.target, cst.Name):
            names.add(node.target.value)
        elif isinstance(callee, cst.Name) and callee.value == "enumerate":
            target = node.target
            if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                first = target.elements[0].value
                if isinstance(first, cst.Name):
                    names.add(first.value)
    return names


def _cast_to_buffer(expr: cst.BaseExpression, buffer: str) -> bool:
    """`x.to(buf)`, `x.type_as(buf)`, `x.to(buf.dtype)`, `x.to(dtype=buf.dtype)`,
    `x.type(buf.dtype)`: a value of the new tensor's own dtype."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) \
            or len(expr.args) != 1 or expr.args[0].star:
        return False
    method, arg = expr.func.attr.value, expr.args[0]
    value = arg.value
    if method in ("to", "type_as") and arg.keyword is None and _is_buffer(value, buffer):
        return True
    if method not in ("to", "type") or (arg.keyword is not None and arg.keyword.value != "dtype"):
        return False
    return isinstance(value, cst.Attribute) and value.attr.value == "dtype" \
        and _is_buffer(value.value, buffer)


def _is_buffer(expr: cst.BaseExpression, buffer: str) -> bool:
    """`expr` is the new tensor: its name, or `self.<attr>` for "self.<attr>" (held_buffer)."""
    if isinstance(expr, cst.Name):
        return expr.value == buffer
    return buffer.startswith("self.") and self_attr(expr) == buffer[5:]


def held_buffer(facts, site: CallSite) -> Optional[str]:
    """"self.<attr>" for `self.cache = torch.zeros(...)` in a method (lit-llama's KV cache built
    on the first forward), when that is the file's only store of `.cache` (any receiver,
    augmented too) but of `None` (`self.cache = None` in `__init__`), and no `setattr` is
    called: the tensor the method's later writes meet is
    this float32 one, made on this call or an earlier one (a plain attribute, which
    `module.half()` / `.to()` do not convert)."""
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if assign.value is not site.node or len(assign.targets) != 1:
        return None
    attr = self_attr(assign.targets[0].target)
    if attr is None or site.frame.class_frame is None or site.frame.function is None:
        return None
    if facts.param_defaults.attribute_stores(attr, but_none=True) != 1:
        return None
    return "self." + attr


def _assigned_name(site: CallSite) -> Optional[str]:
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if assign.value is site.node and len(assign.targets) == 1:
        target = assign.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None


def _is_module_call(facts, assign) -> bool:
    """`self.layer(x)` (an attribute that is not a method of the class) or `net(x)` where
    `net` is an instance of a module class of this file."""
    func = assign.value.func
    owner = facts.callgraph.self_attr_owner(func, assign.frame)
    if owner is not None:
        return facts.callgraph.method(owner[0], owner[1]) is None
    return facts.callgraph.class_of_instance(func, assign.frame) is not None


def reference_kind(facts, site: CallSite, reference: cst.BaseExpression) -> str:
    """"activation" (a module output, or the value written into the new buffer),
    "parameter" (`.weight`/`.bias`), or "unknown"."""
    function = site.frame.function
    code = facts.module.code_for_node
    ref_code = code(reference)
    buffer = _assigned_name(site)
    for assign in facts.tree.assigns:
        if assign.frame.function is not function:
            continue
        for target in assign.targets:
            # the value written into the new buffer: `buf[idx] = r` / `buf[idx] = r[idx]`
            written = assign.value
            if isinstance(written, cst.Subscript):
                written = written.value
            if (
                buffer is not None
                and isinstance(target, cst.Subscript)
                and isinstance(target.value, cst.Name)
                and target.value.value == buffer
                and code(written) == ref_code
            ):
                return "activation"
            # a module's output: `r = self.layer(x)` / `r = model(x)`
            if (
                isinstance(target, cst.Name)
                and isinstance(reference, cst.Name)
                and target.value == reference.value
                and isinstance(assign.value, cst.Call)
                and _is_module_call(facts, assign)
            ):
                return "activation"
    if isinstance(reference, cst.Attribute) and reference.attr.value in ("weight", "bias"):
        return "parameter"
    return "unknown"
