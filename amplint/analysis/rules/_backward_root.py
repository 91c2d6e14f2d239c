"""AMP141: a float16 `sum` whose value is only ever the root of a backward pass.

The gradient of `y.sum()` with respect to each element of `y` is 1, whatever the forward
value: `SumBackward` only expands the incoming gradient, it never reads the result. So a float16
sum that overflows to `inf` in the forward still hands the right gradient to `y` (checked on
torch 2.13: a half `x @ w` summed to inf gives `w.grad` equal to the float32 reference, also
through `GradScaler.scale(loss).backward()` + `unscale_`, where the grads are bit-identical to
those of `y.float().sum()` at every scale tried). What the overflow corrupts is the value
itself, so the finding matters only where the value is read: logged, printed, returned,
compared, accumulated, `.item()`.

`backward_root_only(module, call, frame)` is True when the reduction `call` is used only as a
backward root, either inline (`y.sum().backward()`, `opt.backward(y.sum())`) or bound once to a
local whose every other occurrence in the function is such a root:

- `loss.backward(...)`;
- `scaler.scale(loss).backward(...)`;
- `X.backward(loss)` / `X.manual_backward(loss)` with `loss` the first positional argument
  (fairseq's `optimizer.backward`, accelerate's and Fabric's `backward`, Lightning's
  `manual_backward`, `torch.autograd.backward`).

Any other occurrence of the name (another binding, a parameter, a closure read, `global`) keeps
the finding. `X.backward(loss)` is also the spelling of `tensor.backward(gradient)`; a reduced
scalar as the gradient of another tensor is not a pattern seen in real code, and would be a
missed finding, not a false one.
"""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from amplint.analysis.facts.tree import Frame

_ROOT_TAKERS = ("backward", "manual_backward")


def backward_root_only(module: cst.Module, call: cst.Call, frame: Frame) -> bool:
    function = frame.function
    scope: cst.CSTNode = function.node if function is not None else module
    finder = _Roots(call)
    scope.visit(finder)
    if finder.inline:
        return True
    name = finder.bound_to
    if name is None:
        return False
    finder = _Roots(call, name)
    scope.visit(finder)
    occurrences = [n for n in finder.names if n.value == name and id(n) not in finder.not_reads]
    roots = [n for n in occurrences if id(n) in finder.roots]
    others = [n for n in occurrences if id(n) not in finder.roots and n is not finder.target]
    return bool(roots) and not others


class _Roots(cst.CSTVisitor):
    """One pass over the scope: whether `call` is inline a root, the local it is bound to, and
    which occurrences of `name` are backward roots."""

    def __init__(self, call: cst.Call, name: Optional[str] = None) -> None:
        self.call = call
        self.name = name
        self.inline = False
        self.bound_to: Optional[str] = None
        self.target: Optional[cst.Name] = None
        self.names: List[cst.Name] = []
        self.roots: Set[int] = set()
        self.not_reads: Set[int] = set()  # `.attr` names and `keyword=` names

    def visit_Assign(self, node: cst.Assign) -> None:
        if node.value is self.call and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                self.bound_to = target.value
                self.target = target

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_reads.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_reads.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "backward":
            self._root(func.value)
            receiver = func.value
            if (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
                    and receiver.func.attr.value == "scale" and len(receiver.args) == 1
                    and receiver.args[0].keyword is None):
                self._root(receiver.args[0].value)  # scaler.scale(loss).backward()
        if method in _ROOT_TAKERS and node.args and node.args[0].keyword is None \
                and node.args[0].star == "":
            self._root(node.args[0].value)  # optimizer.backward(loss)

    def _root(self, expr: cst.BaseExpression) -> None:
        if expr is self.call:
            self.inline = True
        elif isinstance(expr, cst.Name) and expr.value == self.name:
            self.roots.add(id(expr))
