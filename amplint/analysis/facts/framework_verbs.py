"""Framework calls of the scaler protocol (amplint.analysis.data.scaler_vocab) as scaler events.

`accelerator.unscale_gradients(opt)` is an `unscale` of `opt` by the scaler the Accelerator
holds; `accelerator.clip_grad_norm_(...)` unscales every prepared optimizer (`arg` None) and
clips; a prepared optimizer's `opt.step()` steps and updates that scaler (`step_update`). The
framework object stands for its scaler: the events carry the receiver's text as their `scaler`
(a ScalerRef, never one of `ScalerAnalysis.infos`, so the GradScaler rules' `walk` passes them
by) and the framework's name in `framework`. The flow walker (amplint.analysis.facts.scaler_flow) asks
`events_of` for each call; the composed flows then carry them through same-file helpers.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data.scaler_vocab import BY_METHOD, IMPORT_ALIASES, METHODS, Verb
from amplint.analysis.facts.tree import Collector, dotted_name

# The event names of the table the flow records (the others are read from the table directly,
# e.g. AMP104's `backward` verbs): an unscale of one optimizer or of all, and a step + update.
FLOW_EVENTS = ("unscale", "unscale_all", "step_update")


def imported(tree: Collector) -> Set[str]:
    """The top-level packages the file imports anywhere (`accelerate`, `mmengine`, ...)."""
    found: Set[str] = set()
    for frame in tree.frames:
        for target in frame.imports.values():
            root = target.split(".", 1)[0]
            found.add(IMPORT_ALIASES.get(root, root))
    return found


def verb_of(call: cst.Call, frameworks: Set[str], kinds: Iterable[str] = ()) -> Optional[Verb]:
    """The table's entry for `call` (one with an event in `kinds`, when given), or None."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in METHODS:
        return None
    receiver = dotted_name(func.value)
    if not receiver:
        return None
    last = receiver[-1].lower()
    wanted = tuple(kinds)
    for verb in BY_METHOD[func.attr.value]:
        if wanted and not any(kind in verb.events for kind in wanted):
            continue
        if last == "self" and len(receiver) == 1:
            if "self" not in verb.receivers:
                continue
        elif not any(token in last for token in verb.receivers if token != "self"):
            continue
        if verb.distinctive or verb.module in frameworks:
            return verb
    return None


def optimizer_text(call: cst.Call, verb: Verb, module: cst.Module) -> Optional[str]:
    """The optimizer argument's text, None when the call names none (every optimizer)."""
    if verb.optimizer is None:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == verb.optimizer:
            return module.code_for_node(arg.value).strip()
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return module.code_for_node(arg.value).strip()
    return None


def events_of(call: cst.Call, frameworks: Set[str], module: cst.Module
              ) -> List[Tuple[str, Optional[str], Verb]]:
    """(kind, optimizer text, verb) for each flow event the call amounts to: kinds `unscale`
    (arg None: every optimizer) and `step_update`; nothing for other calls."""
    verb = verb_of(call, frameworks, FLOW_EVENTS)
    if verb is None:
        return []
    found = []
    for kind in verb.events:
        if kind == "unscale":
            found.append(("unscale", optimizer_text(call, verb, module), verb))
        elif kind == "unscale_all":
            found.append(("unscale", None, verb))
        elif kind == "step_update":
            found.append(("step_update", None, verb))
    return found


def receiver_text(call: cst.Call) -> Optional[str]:
    name = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
    return ".".join(name) if name else None
