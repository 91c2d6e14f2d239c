"""`self.<attr>` read as a dtype in the method that stored it: facebookresearch/audiocraft's
solvers write

    self.autocast_dtype = torch.bfloat16
    self.autocast = TorchAutocast(enabled=cfg.autocast, device_type=self.device, dtype=self.autocast_dtype)

The read is the store's value when the file binds the attribute (on any object) exactly once,
that store is a statement of the method's own body (not inside an `if`, a loop or a `try`) that
comes before the statement holding the read, and its value is a floating torch dtype. Anything
else (a second store, `setattr`, an augmented or tuple store, a store in another method) gives no
answer. (A class attribute read through the classes that can be `self` is class_dtypes.py's.)"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.syntax import iter_nodes, self_attr
from amplint.analysis.facts.tree import Frame, dotted_name

_FLOATS = {name: dtype for name, dtype in _R.DTYPE_NAMES.items() if dtype in _R.FLOAT_ORDER}


def stored_dtype(tree, frame: Frame, read: cst.CSTNode, attr: str) -> Optional[str]:
    """The dtype of `self.<attr>` read at `read` (a node inside method `frame`), or None."""
    counts = _attribute_stores(tree)
    if counts.get(attr) != 1 or frame.class_frame is None or not isinstance(frame.node, cst.FunctionDef):
        return None
    body = frame.node.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    value = None
    for stmt in body.body:
        if value is not None and any(node is read for node in iter_nodes(stmt)):
            return value
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and self_attr(small.targets[0].target) == attr):
                name = dotted_name(small.value)
                value = _FLOATS.get(".".join(name)) if name and name[0] == "torch" else None
                if value is None:
                    return None
    return None


def _attribute_stores(tree) -> Dict[str, int]:
    """attribute name -> how many times the file binds it on any object (`x.a = ...`, `x.a += ...`,
    `x.a: T = ...`, in a tuple target, a `for` or `with` target); a file that calls `setattr`
    counts every attribute as bound many times. Made once per file."""
    memo: Dict[int, Dict[str, int]] = tree.__dict__.setdefault("_attribute_stores", {})
    module = tree.module_frame.node
    found = memo.get(id(module))
    if found is not None:
        return found
    found = {}
    for node in iter_nodes(module):
        targets: Tuple[cst.CSTNode, ...] = ()
        if isinstance(node, cst.AssignTarget):
            targets = (node.target,)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
            targets = (node.target,)
        elif isinstance(node, cst.AsName):
            targets = (node.name,)
        elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
              and node.func.value == "setattr"):
            found = {"": -1}
            break
        for target in targets:
            for part in iter_nodes(target):
                if isinstance(part, cst.Attribute) and (part is target or _in_target(target, part)):
                    found[part.attr.value] = found.get(part.attr.value, 0) + 1
    if "" in found:
        found = _Many()
    memo[id(module)] = found
    return found


def _in_target(target: cst.CSTNode, part: cst.Attribute) -> bool:
    """`part` is an element of a tuple/list/starred target, not an attribute read inside one
    (`x[self.i] = ...` binds no attribute)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(element.value is part or _in_target(element.value, part) for element in target.elements)
    if isinstance(target, cst.StarredElement):
        return target.value is part or _in_target(target.value, part)
    return False


class _Many(dict):
    """Every attribute bound many times (a file with `setattr`)."""

    def get(self, key, default=None):
        return 2
