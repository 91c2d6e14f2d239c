"""Whether the optimizer a GradScaler steps takes AMP's scaling over itself (its class sets
`_step_supports_amp_scaling = True`: amplint.analysis.project.amp_scaling_classes, delivered as
EntryScalingOptimizer): `GradScaler.step` then never calls `unscale_` on it, and the
optimizer, not AMP, owns how the model's gradients and weights are kept (NVIDIA
DeepLearningExamples BERT's FusedLAMBAMP keeps fp32 master weights of a half model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import libcst as cst

from amplint.analysis.facts.dtype_fields import _root_class, _same_class
from amplint.analysis.facts.tree import CallSite

ATTRIBUTE = "_step_supports_amp_scaling"


@dataclass(frozen=True)
class EntryScalingOptimizer:
    module: str  # "lamb_amp_opt.fused_lamb.fused_lamb" (LOCAL in its own file)
    cls: str  # "FusedLAMBAMP"
    cite: str  # "`FusedLAMBAMP` sets `_step_supports_amp_scaling = True` (path:line)"


def scaling_optimizer(expr: cst.BaseExpression, site: CallSite, entries) -> Optional[EntryScalingOptimizer]:
    """The entry of the class the local `expr` is bound to once (`opt = FusedLAMBAMP(...)`)."""
    if not isinstance(expr, cst.Name):
        return None
    root = _root_class(expr.value, site.frame)
    if root is None:
        return None
    qualified = root[0]
    for entry in entries:
        if isinstance(entry, EntryScalingOptimizer) and entry.cls == qualified.split(".")[-1] \
                and _same_class(qualified, entry):
            return entry
    return None


def steps_only_scaling_optimizers(facts, entries) -> List[EntryScalingOptimizer]:
    """The entries of the optimizers every `scaler.step(opt)` of the file steps, when each one
    takes the scaling over and no `unscale_` is called in the file; [] otherwise."""
    if not any(isinstance(e, EntryScalingOptimizer) for e in entries):
        return []
    found: List[EntryScalingOptimizer] = []
    for site in facts.tree.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute):
            continue
        if func.attr.value == "unscale_":
            return []
        if func.attr.value != "step" or not site.node.args:
            continue
        ref = facts.scalers.ref(facts.module.code_for_node(func.value), site.frame)
        if ref is None or facts.scalers.info(ref) is None:
            continue
        entry = scaling_optimizer(site.node.args[0].value, site, entries)
        if entry is None:
            return []
        found.append(entry)
    return found
