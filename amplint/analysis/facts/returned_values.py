"""Values a project function of another file returns to one call of this file, as the project
pass delivers them (amplint.analysis.project.return_values makes the entries), and the
containers whose elements a file knows exactly.

`EntryReturn` names the call the way `EntryScaler` does (the calling function's key, the call's
dotted text and its ordinal). It carries what every `return` of the callee agrees on, or nothing:
- `target`: the function value returned, an outside function (`torch.nn.utils.clip_grad_norm_`)
  named directly or through `functools.partial(f, kw=...)`; `names.resolve` then reads a local
  bound once to the call (`clip_grad = make_grad_clipper(hparams)`) as that function, as it reads
  a local `partial` of the same file;
- `elements`: a list or tuple display of that many elements, each written differently
  (`return [dense_optimizer, sparse_optimizer]`): a loop over the call's value runs that many
  times with distinct values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.tree import Frame, dotted_name, iter_nodes


@dataclass(frozen=True)
class EntryReturn:
    function: str  # the calling function's key in this file ("train", "Trainer.fit")
    call: str  # the call's dotted text ("make_grad_clipper")
    ordinal: int  # among the calls of that text in that function
    callee: str  # "utils.py: make_grad_clipper", for messages
    target: str = ""  # the outside function the returned value stands for
    elements: int = 0  # the returned list/tuple display's element count (distinct texts)
    line: int = 0  # the line of the callee's `def`, for messages
    kind: str = ""  # "device" / "finfo" (an imported name's entry, ordinal -1), or ""
    param: str = ""  # finfo: the parameter whose dtype it reads
    index: int = -1  # finfo: that parameter's position (-1: keyword-only)
    bound: str = ""  # finfo: "min" / "max"
    # "chosen" / "chosen_class" (project/chosen_builders.py): the builder's dict, key -> class,
    # and its key parameter's literal default (`param`, `index` name the parameter)
    choices: Tuple[Tuple[str, str], ...] = ()
    key_default: Optional[str] = None


def returned_by_call(entries, tree) -> Dict[int, EntryReturn]:
    """id(call node) -> its EntryReturn, for the entries of this file."""
    wanted = {(e.function, e.call, e.ordinal): e for e in entries
              if isinstance(e, EntryReturn) and e.ordinal >= 0}
    if not wanted:
        return {}
    from amplint.analysis.facts.scaler_remote import call_keys

    return {node: wanted[key] for node, key in call_keys(tree).items() if key in wanted}


def module_frame(frame: Frame) -> Frame:
    while frame.parent is not None:
        frame = frame.parent
    return frame


def returned(call: cst.BaseExpression, frame: Frame) -> Optional[EntryReturn]:
    """What the project says a call of this file returns (None: nothing known)."""
    if not isinstance(call, cst.Call):
        return None
    found = module_frame(frame).returned
    return found.get(id(call)) if found else None  # type: ignore[return-value]


def display_elements(expr: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
    """The element texts of a list/tuple display of dotted names or of string or integer
    literals (the keys of a per-key loop, `for key in ("enc", "dec")`), each a different value;
    None for anything else (a starred element, a call, a repeated name or value)."""
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return None
    texts = []
    for element in expr.elements:
        if isinstance(element, cst.StarredElement):
            return None
        name = dotted_name(element.value)
        if name is None:
            literal = _literal(element.value)
            if literal is None:
                return None
            texts.append(literal)
            continue
        texts.append(".".join(name))
    if len(set(texts)) != len(texts):
        return None
    return tuple(texts)


def _literal(expr: cst.BaseExpression) -> Optional[str]:
    """A string or integer literal's value as a text no dotted name can be (`'enc'` and `"enc"`
    are one value)."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return repr(value) if isinstance(value, str) else None
    if isinstance(expr, cst.Integer):
        return "#" + str(expr.evaluated_value)
    return None


# what a container may be used for without changing its elements
_READ_CALLS = frozenset({"len", "enumerate", "list", "tuple", "reversed", "sorted"})


def known_length(expr: Optional[cst.BaseExpression], frame: Frame, tree) -> int:
    """How many distinct values a loop over `expr` runs with, when the file knows it exactly:
    a display of distinct names, or a local name bound once in `frame`'s scope (straight in
    its body) to one or to a call whose project callee returns one (EntryReturn), and used
    otherwise only as a loop's iterable, indexed for reading, or given to `len`/`enumerate`.
    0: not known."""
    if expr is None:
        return 0
    shown = display_elements(expr)
    if shown is not None:
        return len(shown)
    if not isinstance(expr, cst.Name):
        return 0
    scope = frame.scope
    name = expr.value
    if scope.kind != "function" or not tree.bound_once(scope, name):
        return 0
    sites = [a for a in tree.assigns if a.frame.scope is scope and len(a.targets) == 1
             and isinstance(a.targets[0], cst.Name) and a.targets[0].value == name]
    if len(sites) != 1 or sites[0].line_stmt is None or not _straight(sites[0].line_stmt, scope):
        return 0
    value = sites[0].value
    shown = display_elements(value)
    count = len(shown) if shown is not None else 0
    if not count:
        entry = returned(value, frame)
        count = entry.elements if entry is not None else 0
    if count < 2 or not _only_read(scope.node, name):
        return 0
    return count


def _straight(stmt: cst.CSTNode, scope: Frame) -> bool:
    body = getattr(scope.node, "body", None)
    return isinstance(body, cst.IndentedBlock) and any(s is stmt for s in body.body)


def _only_read(function: cst.CSTNode, name: str) -> bool:
    """Every use of `name` in the function reads the container: a `for` iterable, a subscript
    read, an argument of len/enumerate/list/...; its one assignment aside."""
    allowed = set()
    for node in iter_nodes(function):
        if isinstance(node, cst.For) and isinstance(node.iter, cst.Name):
            allowed.add(id(node.iter))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _READ_CALLS:
            allowed.update(id(a.value) for a in node.args if isinstance(a.value, cst.Name))
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
            allowed.add(id(node.target))
        elif isinstance(node, (cst.AssignTarget, cst.Del, cst.AugAssign)):
            target = node.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                if target.value.value == name:
                    return False  # `opts[i] = ...`, `del opts[i]`
    reads = set()
    for node in iter_nodes(function):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            reads.add(id(node.value))
    return all(
        id(node) in allowed or id(node) in reads
        for node in iter_nodes(function) if isinstance(node, cst.Name) and node.value == name
    )


def loop_source(expr: cst.BaseExpression, frame: Frame) -> str:
    """For a message: where a container `known_length` counted comes from when another file
    returns it (" (returned by `build_optimizers` at optim/__init__.py:12)"), else ""."""
    if not isinstance(expr, cst.Name):
        return ""
    scope = frame.scope
    value = scope.aliases.get(expr.value)
    entry = returned(value, frame) if value is not None else None
    if entry is None:
        return ""
    where, _, function = entry.callee.partition(": ")
    line = f":{entry.line}" if entry.line else ""
    return f" (returned by `{function}` at {where}{line})"
