"""The names a block reads only to run forwards whose results are dropped: `model(x)` as a
statement, `_ = model(x)` (hiera's throughput benchmark, `model(input)` in a `no_grad` loop;
llm-foundry's `test_model_to`, `_ = mpt(ids)` after moving the model between dtypes). Nothing
computed from such a read survives the statement, so no number, loss or gradient comes of it.

A read counts when the name is the callee of such a call (a module's forward), or one of its
arguments inside a `with torch.no_grad()` / `torch.inference_mode()` in the block (a callee
taking it as an argument could train on it otherwise: `trainer.fit(model)`)."""

from __future__ import annotations

from typing import Dict, Set

import libcst as cst

from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.syntax import parents_of, unparen
from amplint.analysis.facts.tree import iter_nodes

_NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
            "torch.autograd.grad_mode.no_grad")


def dropped_only_names(block: cst.CSTNode, frame) -> Set[str]:
    """The names every read of which in `block` only feeds a forward whose result is dropped."""
    parents = parents_of(block)
    live: Set[str] = set()
    dropped: Set[str] = set()
    for node in iter_nodes(block):
        if not isinstance(node, cst.Name):
            continue
        parent = parents.get(id(node))
        (dropped if _dropped_read(node, parent, parents, block, frame) else live).add(node.value)
    return dropped - live


def _dropped_read(name: cst.Name, parent, parents: Dict[int, cst.CSTNode], block, frame) -> bool:
    if isinstance(parent, cst.Call) and parent.func is name:
        return _result_dropped(parent, parents)
    if isinstance(parent, cst.Arg) and parent.value is name and not parent.star:
        call = parents.get(id(parent))
        return isinstance(call, cst.Call) and _result_dropped(call, parents) \
            and _under_no_grad(call, parents, block, frame)
    return False


def _result_dropped(call: cst.Call, parents) -> bool:
    parent = parents.get(id(call))
    if isinstance(parent, cst.Expr):
        return True
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0].target
        return isinstance(target, cst.Name) and target.value == "_"
    return False


def _under_no_grad(node: cst.CSTNode, parents, block, frame) -> bool:
    current = parents.get(id(node))
    while current is not None and current is not block:
        if isinstance(current, cst.With) and any(
                isinstance(unparen(item.item), cst.Call)
                and resolve_expr(unparen(item.item).func, frame) in _NO_GRAD  # type: ignore[union-attr]
                for item in current.items):
            return True
        current = parents.get(id(current))
    return False
