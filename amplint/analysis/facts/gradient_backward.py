"""`tensor.backward(gradient)`: a backward with a positional gradient argument, told apart from
`accelerator.backward(loss)`, `engine.backward(loss)`, `self.balancer.backward(losses, y)` (the
same spelling on an object that is not a tensor) only when the function itself shows that the
receiver is a tensor:

- it differentiates with respect to it, `torch.autograd.grad(loss, [y])` / `inputs=y` (encodec's
  `Balancer.backward`: the losses' gradients with respect to the decoder's output, summed,
  then `y.backward(out_grad)`);
- the gradient is made like it, `torch.ones_like(y)` / `torch.zeros_like(y)` / ..., inline or
  bound once to a local (`out_grad = torch.zeros_like(y)`).

Either raises on anything but a tensor, so the receiver's `.backward(g)` is `Tensor.backward`:
its gradients are as unscaled as those of `loss.backward()` unless `g` is scaled. Anything else
(a parameter with no such use, an attribute) stays unknown: no event.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import Frame, dotted_name

_GRAD = "torch.autograd.grad"
_LIKE = frozenset(f"torch.{name}_like" for name in ("zeros", "ones", "empty", "full", "rand", "randn"))


def gradient_backward(call: cst.Call, frame: Optional[Frame], tree) -> bool:
    """`y.backward(g)` / `y.backward(g, retain_graph=True)`: one positional argument, on a
    receiver the enclosing function shows to be a tensor (a name it binds once: `tree`'s
    `bound_once`)."""
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 1 or positional[0].star or frame is None:
        return False
    receiver = _text(call.func.value)  # type: ignore[attr-defined]
    function = frame.function
    if receiver is None or function is None or receiver.split(".", 1)[0] in ("self", "cls"):
        return False
    if "." not in receiver and not tree.bound_once(function, receiver):
        return False
    if _made_like(positional[0].value, receiver, frame, function):
        return True
    return any(_differentiated(site.node, receiver, site.frame) for site in function.calls)


def _text(expr: cst.BaseExpression) -> Optional[str]:
    name = dotted_name(expr)
    return ".".join(name) if name else None


def _made_like(gradient: cst.BaseExpression, receiver: str, frame: Frame, function: Frame) -> bool:
    if isinstance(gradient, cst.Name):
        gradient = function.aliases.get(gradient.value)  # type: ignore[assignment]
    return (isinstance(gradient, cst.Call) and bool(gradient.args)
            and gradient.args[0].keyword is None
            and _text(gradient.args[0].value) == receiver
            and resolve_expr(gradient.func, frame) in _LIKE)


def _differentiated(node: cst.Call, receiver: str, frame: Frame) -> bool:
    """`torch.autograd.grad(outputs, inputs)` whose inputs name the receiver."""
    inputs = None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "inputs":
            inputs = arg.value
    positional = [a for a in node.args if a.keyword is None]
    if inputs is None and len(positional) >= 2 and not positional[1].star:
        inputs = positional[1].value
    if inputs is None:
        return False
    elements = ([e.value for e in inputs.elements] if isinstance(inputs, (cst.List, cst.Tuple))
                else [inputs])
    if not any(_text(e) == receiver for e in elements):
        return False
    return resolve_expr(node.func, frame) == _GRAD
