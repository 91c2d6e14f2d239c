"""AMP127 step-bypasses-scaler: an optimizer steps on gradients that an enabled GradScaler's
``scale(loss).backward()`` produced and that were never unscaled (``optimizer.step()`` called
directly instead of ``scaler.step(optimizer)``): the update is the loss scale times too large.

How it sees it: while the monitor is active, ``GradScaler.scale`` is wrapped to remember the
tensors it returns (torch has no hook for it); a ``backward`` of one of them marks the leaf
tensors its graph reaches (the ``AccumulateGrad`` nodes) as holding scaled gradients of that
scaler; a global optimizer step pre-hook then reports a step of an optimizer holding such a
parameter when the call does not come from ``GradScaler.step`` and the scaler has not unscaled
that optimizer (``unscale_``) since. The graph walk costs one pass over the autograd graph per
scaled backward. A direct step after ``unscale_`` (right size, but inf steps applied) is not
reported: on finite gradients it computes what ``scaler.step`` would.
"""

from __future__ import annotations

import sys
import weakref

import torch

CODE = "AMP127"


def _leaves(roots):
    """The leaf tensors whose ``.grad`` a backward from ``roots`` writes."""
    seen, found, stack = set(), [], [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            found.append(variable)
        stack.extend(child for child, _ in node.next_functions)
    return found


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for t in obj if isinstance(t, torch.Tensor)]
    return []


def _inside_scaler_step(frame, limit: int = 12) -> bool:
    from torch.amp.grad_scaler import GradScaler

    while frame is not None and limit:
        if frame.f_code.co_name in ("step", "_maybe_opt_step") and isinstance(
            frame.f_locals.get("self"), GradScaler
        ):
            return True
        frame = frame.f_back
        limit -= 1
    return False


def install(monitor):
    from torch.amp.grad_scaler import GradScaler, OptState
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    scaled = {}  # id(tensor) -> (weakref to the scaled output, weakref to its scaler)
    pending = {}  # id(param) -> (weakref to the parameter, weakref to the scaler)
    original = GradScaler.scale

    def scale(self, outputs):
        result = original(self, outputs)
        if self.is_enabled():
            for tensor in _tensors(result):
                scaled[id(tensor)] = (weakref.ref(tensor), weakref.ref(self))
        return result

    def on_backward(func, args, kwargs):
        first = args[0] if args else kwargs.get("tensors")
        roots = []
        for tensor in _tensors(first):
            entry = scaled.pop(id(tensor), None)
            if entry is not None and entry[0]() is tensor and entry[1]() is not None:
                roots.append((tensor, entry[1]))
        for tensor, scaler_ref in roots:
            for leaf in _leaves([tensor]):
                pending[id(leaf)] = (weakref.ref(leaf), scaler_ref)

    def on_step(optimizer, args, kwargs):
        hit = None
        for group in optimizer.param_groups:
            for param in group["params"]:
                entry = pending.pop(id(param), None)
                if entry is not None and entry[0]() is param and hit is None:
                    hit = entry[1]()
        if hit is None or _inside_scaler_step(sys._getframe(1)):
            return
        state = hit._per_optimizer_states.get(id(optimizer))
        if state is not None and state["stage"] is not OptState.READY:
            return  # unscaled (or stepped) since the scaled backward
        name = type(optimizer).__name__
        monitor.report(
            CODE,
            f"{name}.step() runs on gradients from a scaled backward (GradScaler.scale) that "
            f"were never unscaled: the update is the loss scale ({hit.get_scale():g}) times too "
            "large; step through the scaler: scaler.step(optimizer)",
            optimizer=name,
            scale=hit.get_scale(),
        )

    GradScaler.scale = scale
    handle = register_optimizer_step_pre_hook(on_step)

    def undo():
        GradScaler.scale = original
        handle.remove()
        scaled.clear()
        pending.clear()

    monitor.cleanups.append(undo)
    return {
        torch.Tensor.backward: (on_backward, None),
        torch.autograd.backward: (on_backward, None),
    }
