"""AMP111's reading of `torch.finfo(self.X)` where `X` is a property returning the module's
parameters' dtype (amplint.analysis.facts.property_dtypes): float32 parameters of a module no code
makes half, filling a region's float16/bfloat16 value."""

from __future__ import annotations

import libcst as cst

from amplint.analysis.diagnostics import Applicability
from amplint.analysis.facts.escape import Entry
from amplint.analysis.facts.property_dtypes import params_dtype_property
from amplint.analysis.facts.region_entries import EntryHalf
from amplint.analysis.rules._util import region_note

C10 = {"float16": "c10::Half", "bfloat16": "c10::BFloat16"}
_C10 = C10


def property_fill(rule, ctx, attr, bound, target, frame, escape, direct):
    """`torch.finfo(self.dtype).min` where `dtype` is a property of the method's class
    returning its parameters' dtype, float32 where the module is not made half, and the
    filled tensor is a region's float16 (or bfloat16) value."""
    facts = ctx.facts
    cls = frame.class_frame
    if cls is None:
        return None
    cite = params_dtype_property(facts, cls, attr.attr.value)
    if cite is None or facts.fp16.is_fp16(frame):
        return None
    if any(isinstance(e, EntryHalf) and e.target == cls.name for e in facts.entries):
        return None
    entry = escape.half_source(target, frame)
    if entry is None:
        region = facts.active_region(frame)
        if region is None or facts.dtypes.exact(target) not in ("float16", "bfloat16"):
            return None
        entry = Entry("half", True, target, region)
    region = entry.region
    half = region.dtype or "half (float16 or bfloat16)"
    note, related = region_note(region)
    target_text = ctx.module.code_for_node(target).strip()
    plain = _plain(target)
    shown = f"`{target_text}`" if plain else "the filled tensor"
    name = f"self.{attr.attr.value}"
    message = (
        f"`torch.finfo({name}).{bound}` takes the range of the module's parameters (float32 here: "
        f"{cite} returns `next(self.parameters()).dtype`), but {shown} is {half} under autocast "
        f"{note}: 'RuntimeError: value cannot be converted to type {_C10.get(half, 'c10::Half')} without "
        f"overflow'; take the dtype from the filled tensor"
    )
    fix = None
    if direct and plain:
        fix = rule.fix(
            Applicability.SAFE,
            f"Use `torch.finfo({target_text}.dtype)`",
            {attr: cst.Attribute(value=target.deep_clone(), attr=cst.Name("dtype"))},
        )
    return rule.report(attr, message, fix=fix, related=related)


def _plain(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return True
    return isinstance(expr, cst.Attribute) and _plain(expr.value)
