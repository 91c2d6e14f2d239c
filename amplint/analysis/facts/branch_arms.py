"""Whether two statements of a function never both run in one call of it: they sit in the two
arms of one `if`, or in opposite arms of two `if`s with the same test (BEiT/EVA's
`if loss_scaler is None: samples = samples.half()` ... `if loss_scaler is None: model(samples)
else: with torch.cuda.amp.autocast(): model(samples)`: the DeepSpeed fp16 path and the
autocast path). The test must be fixed for the whole call: names, attributes, comparisons,
`not`/`and`/`or` and constants only, none of whose names or attributes the function binds, so
the same arm is taken on every pass of a loop around both. `if not t:` is the other arm of `if t:`.
"""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import parents_of
from amplint.analysis.facts.tree import iter_nodes


def exclusive_arms(function: cst.CSTNode, first: cst.CSTNode, second: cst.CSTNode,
                   cache: Optional[dict] = None) -> bool:
    """`first` and `second` (nodes inside `function`) run in arms no one call takes both of."""
    cache = cache if cache is not None else {}
    parents = cache.get(id(function))
    if parents is None:
        parents = cache[id(function)] = parents_of(function)
    arms_a, arms_b = _arms(first, parents), _arms(second, parents)
    if not arms_a or not arms_b:
        return False
    bound = cache.get(("bound", id(function)))
    if bound is None:
        bound = cache[("bound", id(function))] = _bound_texts(function)
    code = cst.Module([]).code_for_node
    for if_a, side_a in arms_a:
        test_a, flip_a = _polarity(if_a.test)
        for if_b, side_b in arms_b:
            test_b, flip_b = _polarity(if_b.test)
            if (side_a == side_b) == (flip_a == flip_b):
                continue
            if if_a is if_b or code(test_a).split() == code(test_b).split():
                if _fixed_test(test_a, bound, code):
                    return True
    return False


def _polarity(test: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    """The test less its leading `not`s, and whether they flip it (`if not training:` takes the
    arm that `if training:` leaves: V-JEPA's eval loops)."""
    flip = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, flip = test.expression, not flip
    return test, flip


def _arms(node: cst.CSTNode, parents) -> List[Tuple[cst.If, str]]:
    """The `if`s around `node`, each with the arm ("body" or "orelse") it sits in."""
    found: List[Tuple[cst.If, str]] = []
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, cst.If):
            if child is parent.body:
                found.append((parent, "body"))
            elif child is parent.orelse:
                found.append((parent, "orelse"))
        child, parent = parent, parents.get(id(parent))
    return found


def _bound_texts(function: cst.CSTNode) -> Set[str]:
    """The names and attribute texts the function binds (assignments, loop and `with`
    targets, walrus, `global`/`nonlocal`, nested `def`/`class`)."""
    code = cst.Module([]).code_for_node
    bound: Set[str] = set()
    for node in iter_nodes(function):
        targets: List[cst.CSTNode] = []
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            bound.update(item.name.value for item in node.names)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not function:
            bound.add(node.name.value)
        for target in targets:
            for part in iter_nodes(target):
                if isinstance(part, (cst.Name, cst.Attribute)):
                    bound.add(code(part))
    return bound


def _fixed_test(test: cst.BaseExpression, bound: Set[str], code) -> bool:
    for node in iter_nodes(test):
        if isinstance(node, (cst.Call, cst.Subscript, cst.Await, cst.Lambda, cst.NamedExpr)):
            return False
        if isinstance(node, (cst.Name, cst.Attribute)) and code(node) in bound:
            return False
    return True
