"""AMP141: a float16 `sum` whose value is only ever the root of a backward pass.

The gradient of `y.sum()` with respect to each element of `y` is 1, whatever the forward
value: `SumBackward` only expands the incoming gradient, it never reads the result. So a float16
sum that overflows to `inf` in the forward still hands the right gradient to `y` (checked on
torch 2.13: a half `x @ w` summed to inf gives `w.grad` equal to the float32 reference, also
through `GradScaler.scale(loss).backward()` + `unscale_`, where the grads are bit-identical to
those of `y.float().sum()` at every scale tried). What the overflow corrupts is the value
itself, so the finding matters only where the value is read: logged, printed, returned,
compared, accumulated, `.item()`.

`backward_root_only(module, call, frame, indexes)` is True when the reduction `call` is used only as a
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

from typing import Dict, List, Optional, Set

import libcst as cst

from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.facts.tree import Frame

_ROOT_TAKERS = ("backward", "manual_backward")


def backward_root_only(module: cst.Module, call: cst.Call, frame: Frame,
                       indexes: Optional[Dict[int, "_ScopeRoots"]] = None) -> bool:
    """`indexes`: one dict per lint of a file, so that each scope is walked once, however many
    reductions it holds (module-level code holds many)."""
    function = frame.function
    scope: cst.CSTNode = function.node if function is not None else module
    index = indexes.get(id(scope)) if indexes is not None else None
    if index is None:
        index = _ScopeRoots(scope)
        if indexes is not None:
            indexes[id(scope)] = index
    if id(call) in index.roots:
        return True  # inline: y.sum().backward(), opt.backward(y.sum())
    target = index.bound.get(id(call))
    if target is None:
        return False
    occurrences = index.names.get(target.value, [])
    roots = [n for n in occurrences if id(n) in index.roots]
    others = [n for n in occurrences if id(n) not in index.roots and n is not target]
    return bool(roots) and not others


class _ScopeRoots:
    """One walk of a scope: which expressions are backward roots, which call each single-name
    assignment binds, and every read of each name (`.attr` and `keyword=` names are not reads)."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.roots: Set[int] = set()
        self.bound: Dict[int, cst.Name] = {}
        self.names: Dict[str, List[cst.Name]] = {}
        not_reads: Set[int] = set()
        names: List[cst.Name] = []
        for node in iter_nodes(scope):
            kind = type(node)
            if kind is cst.Name:
                names.append(node)
            elif kind is cst.Attribute:
                not_reads.add(id(node.attr))
            elif kind is cst.Arg:
                if node.keyword is not None:
                    not_reads.add(id(node.keyword))
            elif kind is cst.Assign:
                if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
                    self.bound[id(node.value)] = node.targets[0].target
            elif kind is cst.Call:
                self._call(node)
        for name in names:
            if id(name) not in not_reads:
                self.names.setdefault(name.value, []).append(name)

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is not cst.Attribute:
            return
        method = func.attr.value
        if method == "backward":
            self._root(func.value)
            receiver = func.value
            if (type(receiver) is cst.Call and type(receiver.func) is cst.Attribute
                    and receiver.func.attr.value == "scale" and len(receiver.args) == 1
                    and receiver.args[0].keyword is None):
                self._root(receiver.args[0].value)  # scaler.scale(loss).backward()
        if method in _ROOT_TAKERS and node.args and node.args[0].keyword is None \
                and node.args[0].star == "":
            self._root(node.args[0].value)  # optimizer.backward(loss)

    def _root(self, expr: cst.BaseExpression) -> None:
        if type(expr) is cst.Call or type(expr) is cst.Name:
            self.roots.add(id(expr))
