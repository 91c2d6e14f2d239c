"""AMP120's Lightning case: `self.clip_gradients(opt, ...)` in manual optimization under
Lightning's float16 mixed precision clips scaled gradients.

In manual optimization Lightning unscales only inside `opt.step()` (the AMP plugin's
`optimizer_step`, lightning/pytorch/plugins/precision/amp.py:108), after the user's
`training_step` code has clipped; its own `clip_gradients` does not unscale (Lightning issue
#18089, open). The clip is reported when the file names Lightning, the class turns automatic
optimization off (`self.automatic_optimization = False`), the call is not in
`on_before_optimizer_step` / `configure_gradient_clipping` (which run after the unscale), the
function does not call `unscale_` itself, and the region at the call is a float16 one (Lightning's
`precision="16-mixed"`, seen by the project pass): a bfloat16 or unknown-dtype region has no
scaler or is not ours to guess.
"""

from __future__ import annotations

from typing import Iterator, Tuple

import libcst as cst

from amplint.analysis.facts.framework_verbs import imported, verb_of
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name

AFTER_UNSCALE_HOOKS = ("on_before_optimizer_step", "configure_gradient_clipping")


def manual_clips(facts) -> Iterator[Tuple[CallSite, Region]]:
    frameworks = None
    manual: dict = {}
    for site in facts.tree.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "clip_gradients":
            continue
        if frameworks is None:
            frameworks = imported(facts.tree)
        verb = verb_of(site.node, frameworks, ("clip",))
        if verb is None or verb.framework != "lightning":
            continue
        function = site.frame.function
        cls = site.frame.class_frame
        if function is None or cls is None or function.name in AFTER_UNSCALE_HOOKS:
            continue
        if id(cls) not in manual:
            manual[id(cls)] = _manual_optimization(facts.tree, cls)
        if not manual[id(cls)] or _unscales(facts.tree, function):
            continue
        region = facts.active_region(site.frame)
        if region is None or region.enabled is Enabled.FALSE or region.dtype != "float16":
            continue
        yield site, region


def _manual_optimization(tree, cls: Frame) -> bool:
    for assign in tree.assigns:
        if assign.frame.class_frame is not cls:
            continue
        value = assign.value
        if not (isinstance(value, cst.Name) and value.value == "False"):
            continue
        for target in assign.targets:
            if tuple(dotted_name(target) or ()) == ("self", "automatic_optimization"):
                return True
    return False


def _unscales(tree, function: Frame) -> bool:
    for site in tree.calls:
        func = site.node.func
        if (
            isinstance(func, cst.Attribute) and func.attr.value == "unscale_"
            and site.frame.function is function
        ):
            return True
    return False
