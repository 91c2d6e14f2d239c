"""Methods that run their module's forward without grad (AMP150): a method decorated
`@torch.no_grad()` / `@torch.inference_mode()` whose body calls `self(...)` or
`self.forward(...)` (nanoGPT's `GPT.generate`, a sampler's `sample`). A call of it is a no-grad
forward of the receiver, whatever grad mode the caller is in.

Same file: the rule asks `nograd_forward(method frame)`. Another file: the project pass finds
the method a region's call runs through the class flow (`model.generate(...)` where `model`
holds `GPT` of model.py) and hands the calling file an `EntryNoGradCall` naming the call by its
function, receiver and method (amplint.analysis.project.nograd_entries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import calls_in, iter_nodes
from amplint.analysis.facts.tree import Frame

NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
           "torch.autograd.grad_mode.no_grad", "torch.autograd.inference_mode",
           "torch.autograd.grad_mode.inference_mode")


@dataclass(frozen=True)
class EntryNoGradCall:
    """`receiver.method(...)` in function `scope` of this file ("" at module level) runs the
    receiver's forward under no_grad: `method` of `cls` (defined at `where`) is."""

    scope: str
    receiver: Tuple[str, ...]  # ("model",), ("self", "policy")
    method: str
    cls: str
    where: str  # "model.py:101", for messages


def nograd_forward(method: Optional[Frame]) -> bool:
    """The method is decorated no_grad/inference_mode and calls `self(...)`/`self.forward(...)`."""
    if method is None or method.kind != "function":
        return False
    node = method.node
    if not isinstance(node, cst.FunctionDef) or not node.params.params:
        return False
    scope = method.parent or method
    if not any(resolve_expr(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator, scope)
               in NO_GRAD for d in node.decorators):
        return False
    me = node.params.params[0].name.value
    nested = {id(call) for inner in iter_nodes(node.body) if inner is not node.body
              and isinstance(inner, (cst.FunctionDef, cst.ClassDef)) for call in calls_in(inner)}
    for call in calls_in(node.body):
        if id(call) in nested:
            continue  # a nested def's `self(...)` runs when it is called, maybe after no_grad
        func = call.func
        if isinstance(func, cst.Name) and func.value == me:
            return True
        if (isinstance(func, cst.Attribute) and func.attr.value == "forward"
                and isinstance(func.value, cst.Name) and func.value.value == me):
            return True
    return False

