"""AMP123's framework case: accelerate's `unscale_gradients` and `clip_grad_norm_` /
`clip_grad_value_` (which unscale every prepared optimizer) twice before the optimizer steps
(the pairs: amplint.analysis.facts.scaler_paths.repeated_unscales; the verbs: amplint.analysis.data.scaler_vocab)."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic
from amplint.analysis.facts.framework_verbs import FLOW_EVENTS, verb_of
from amplint.analysis.facts.scaler_paths import repeated_unscales
from amplint.analysis.facts.scalers import Event, spans
from amplint.analysis.facts.tree import dotted_name


def framework_double_unscales(rule, module: cst.Module, scalers) -> Iterable[Diagnostic]:
    """accelerate's `unscale_gradients(opt)` and `clip_grad_norm_`/`clip_grad_value_`
    (which unscale every prepared optimizer) twice before the optimizer steps."""
    for flow in scalers.framework_flows:
        for earlier, later in repeated_unscales(flow):
            if not spans(earlier, later):
                continue  # wholly inside one callee: reported there
            first = _call_text(module, earlier)
            second = _call_text(module, later)
            through = " (through this call)" if later.origin is not None else ""
            what = f"`{later.arg}`" if later.arg else "every prepared optimizer"
            related = {"first_line": earlier.inner or earlier.node}
            where = "at line {first_line}"
            if earlier.remote is not None:
                first = earlier.remote.text
                where = f"at {earlier.remote.where}, through the call at line {{first_line}},"
            elif earlier.origin is not None:
                where += ", through the call at line {call_line},"
                related["call_line"] = earlier.node
            yield rule.report(
                later.node,
                f"`{second}`{through} unscales {what} again: `{first}` {where} "
                "already did, with no optimizer step between; under "
                f"{later.framework}'s fp16 mixed precision its GradScaler raises "
                "'RuntimeError: unscale_() has already been called on this optimizer since "
                f"the last update().' ({_source(later, scalers.frameworks)}); unscale once "
                "per step (`clip_grad_norm_` and `clip_grad_value_` unscale by themselves)",
                related=related,
            )


def _source(event: Event, frameworks) -> str:
    """Where the framework unscales, from amplint.analysis.data.scaler_vocab."""
    node = event.inner if event.inner is not None else event.node
    verb = verb_of(node, frameworks, FLOW_EVENTS) if isinstance(node, cst.Call) else None
    return f"{verb.release}: {verb.path}:{verb.line}" if verb else event.framework or ""


def _call_text(module: cst.Module, event: Event) -> str:
    node = event.inner if event.inner is not None else event.node
    func = node.func if isinstance(node, cst.Call) else node
    return module.code_for_node(func).strip() + "(...)" if event.inner is None else (
        ".".join(dotted_name(func) or ("?",)) + "(...)"
    )
