"""The class a helper of this file returns a new instance of (issue 26), for the chosen-class fact
(chosen_classes.py) that every rule asking "which class is this instance" reads: AMP102 (a
`BCELoss` held as the loss), AMP152 (the optimizer a helper builds over a model's parameters).

LoRA's examples are the shape:

    def create_adam_optimizer_from_args(model, args):
        params = [p for p in model.parameters() if p.requires_grad]
        return torch.optim.AdamW(params, lr=args.lr, eps=args.adam_epsilon)

    optimizer = create_adam_optimizer_from_args(net, args)   # a torch.optim.AdamW

Exact or nothing: the one callee `FunctionReturns.of_call` finds (a plain def of this file called
by name or through `self`, every path ending in a `return`, no override), every `return` a call
of the same imported class (a dotted name the callee's frame resolves to an import, its last part
capitalised). The instance's arguments are the helper's: `Chosen.built` keeps the callee and
the call, so a reader maps the helper's parameters to what the call passes."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import _CANONICAL, resolve
from amplint.analysis.facts.tree import Frame, dotted_name


def returned_instance(tree, returns, call: cst.Call, frame: Frame) -> Optional[Tuple[str, object]]:
    """(qualified class, the `Returned`) for `call` when the helper it calls returns a new
    instance of one imported class on every path; None otherwise."""
    if returns is None or not _helper_call(tree, call):
        return None
    returned = returns.of_call(call, frame)
    if returned is None or not returned.values:
        return None
    found: Optional[str] = None
    for value in returned.values:
        if not isinstance(value, cst.Call):
            return None
        qualified = resolve(dotted_name(value.func), returned.function)
        if qualified is None or not qualified.rsplit(".", 1)[-1][:1].isupper() or found not in (None, qualified):
            return None
        found = qualified
    if found is None:
        return None
    return _CANONICAL.get(found, found), returned


def _helper_call(tree, call: cst.Call) -> bool:
    """A cheap gate before the call graph: `helper(...)` naming a module-level function of the
    file, or `self.helper(...)`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in tree.module_frame.functions
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
