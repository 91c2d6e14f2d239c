"""Small questions about libcst nodes that several facts ask."""

from __future__ import annotations

import dataclasses
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

Dotted = Tuple[str, ...]


def dotted_name(expr: cst.BaseExpression) -> Optional[Dotted]:
    """`torch.nn.functional` -> ("torch", "nn", "functional"); None for anything else."""
    parts: List[str] = []
    while type(expr) is cst.Attribute:  # concrete LibCST classes have no subclasses
        parts.append(expr.attr.value)
        expr = expr.value
    if type(expr) is cst.Name:
        parts.append(expr.value)
        return tuple(reversed(parts))
    return None


def receiver_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a call chain: `Net().cuda().half` -> `Net()`'s func `Net`; `x.a.b` -> `x`."""
    while True:
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute):
                expr = expr.func.value
            else:
                return expr
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        else:
            return expr


def self_attr(expr: cst.BaseExpression) -> Optional[str]:
    """`self.name` -> "name"; None for anything else."""
    if (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
    ):
        return expr.attr.value
    return None


_SKIPPED_FIELDS = {
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "header", "footer", "newline",
    "indent", "equal", "colon", "dot", "operator", "asynchronous", "star",
}
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of a node type that can hold code (whitespace and punctuation skipped)."""
    found = _FIELDS.get(node_type)
    if found is None:
        found = _FIELDS[node_type] = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS
            and not f.name.startswith(("whitespace", "lines_"))
        )
    return found


def import_bindings(node) -> List[Tuple[str, str, cst.ImportAlias]]:
    """(name bound, what it refers to, the alias) for each name an import statement binds:
    `import a.b as c` -> ("c", "a.b"), `import a.b` -> ("a", "a"),
    `from x.y import z as w` -> ("w", "x.y.z"). Relative imports keep their dots
    (`from .losses import Focal` -> ("Focal", ".losses.Focal")); star imports bind nothing."""
    found: List[Tuple[str, str, cst.ImportAlias]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                found.append((alias.asname.name.value, ".".join(full), alias))
            else:
                found.append((full[0], full[0], alias))
        return found
    if isinstance(node.names, cst.ImportStar):
        return found
    base: Tuple[str, ...] = ()
    if node.module is not None:
        dotted = dotted_name(node.module)
        if dotted is None:
            return found
        base = dotted
    prefix = "." * len(node.relative) + "".join(part + "." for part in base)
    for alias in node.names:
        if not isinstance(alias.name, cst.Name):
            continue
        bound = alias.name.value
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound = alias.asname.name.value
        found.append((bound, prefix + alias.name.value, alias))
    return found


def bound_argument(call: cst.Call, index: int, param: cst.Param) -> Optional[cst.BaseExpression]:
    """What `call` binds to `param` (at position `index`, -1 for keyword-only): the keyword
    argument, else the positional one, else the parameter's default (`param.default`, which the
    caller may test with `is`); None with a `*args`/`**kwargs` argument or nothing bound."""
    if any(arg.star for arg in call.args):
        return None
    found = keyword(call, param.name.value)
    if found is not None:
        return found.value
    args = positional(call)
    if 0 <= index < len(args):
        return args[index].value
    return param.default


def positional(call: cst.Call) -> List[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, index: int, name: str) -> Optional[cst.Arg]:
    """The argument bound to parameter `name` at position `index`."""
    found = keyword(call, name)
    if found is not None:
        return found
    args = positional(call)
    return args[index] if index < len(args) else None


def iter_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every code node under `root` (itself included), without LibCST's visitor machinery,
    which rebuilds each node it visits and costs several times more."""
    stack = [root]
    known = _IS_NODE
    while stack:
        node = stack.pop()
        yield node
        for name in child_fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                for item in reversed(value):
                    flag = known.get(type(item))
                    if flag is None:
                        flag = _is_node_type(type(item))
                    if flag:
                        stack.append(item)
            else:
                flag = known.get(kind)
                if flag is None:
                    flag = _is_node_type(kind)
                if flag:
                    stack.append(value)




def unparen(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression without its parentheses (libcst keeps them on the node)."""
    if getattr(expr, "lpar", None) and not isinstance(expr, cst.Tuple):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def holder_key(expr: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """What a value is held in, as a key: `x` -> ("name", "x"), `self.x` -> ("self", "x");
    None for anything else (`a.b`, `d[k]`)."""
    if isinstance(expr, cst.Name):
        return ("name", expr.value)
    attr = self_attr(expr)
    return ("self", attr) if attr is not None else None


def params(node: cst.CSTNode) -> List[cst.Param]:
    """A function's named parameters (positional-only, ordinary, keyword-only), in order."""
    if not isinstance(node, cst.FunctionDef):
        return []
    found = node.params
    return list(found.posonly_params) + list(found.params) + list(found.kwonly_params)


def bound_names(target: cst.BaseExpression) -> List[str]:
    """The names an assignment target binds: `a`, `a, (b, *c)` -> a, b, c; none for `x.y`/`x[i]`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return bound_names(target.value)
    return []


# LibCST visits these node types' children in an order other than their dataclass fields' (the
# order of the source): the fields that hold code, in LibCST's visit order
# (tests/test_syntax_order.py checks these against LibCST's own visit)
_VISIT_ORDER: Dict[type, Tuple[str, ...]] = {
    cst.Arg: ("keyword", "value"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params",
                     "star_kwarg"),
}
for _name, _order in (("ExceptStarHandler", ("type", "name", "body")),
                      ("TypeAlias", ("name", "type_parameters", "value"))):
    if hasattr(cst, _name):  # newer LibCST versions
        _VISIT_ORDER[getattr(cst, _name)] = _order
_ORDERED: Dict[type, Tuple[str, ...]] = {}
_PUNCTUATION = {"lbracket", "rbracket", "lbrace", "rbrace", "first_colon", "second_colon",
                "posonly_ind", "trailing_comma", "start", "end", "conversion",
                "leading_whitespace", "trailing_whitespace", "relative"}


def visit_fields(node_type: type) -> Tuple[str, ...]:
    """`child_fields` less brackets and colons, in the order LibCST's visitor visits them."""
    found = _ORDERED.get(node_type)
    if found is None:
        fields = [f for f in child_fields(node_type) if f not in _PUNCTUATION]
        order = _VISIT_ORDER.get(node_type, ())
        found = _ORDERED[node_type] = tuple(f for f in order if f in fields) + tuple(
            f for f in fields if f not in order
        )
    return found


_IS_NODE: Dict[type, bool] = {}  # type -> is it a LibCST node (isinstance on LibCST's ABCs
# runs Python code for every miss: a tenth of the time on a large file, issue 34)


def _is_node_type(kind: type) -> bool:
    known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def nodes_of(node: cst.CSTNode, fields: Tuple[str, ...]) -> List[cst.CSTNode]:
    """The LibCST nodes held by `fields` of `node`, in field order (a list field's in its own)."""
    out: List[cst.CSTNode] = []
    known = _IS_NODE
    for name in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            for item in value:
                flag = known.get(type(item))
                if flag is None:
                    flag = _is_node_type(type(item))
                if flag:
                    out.append(item)
        else:
            flag = known.get(kind)
            if flag is None:
                flag = _is_node_type(kind)
            if flag:
                out.append(value)
    return out


def code_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The nodes directly under `node`, in `child_fields` order."""
    return nodes_of(node, child_fields(type(node)))


def children_in_visit_order(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The code nodes directly under `node`, in LibCST's visit order."""
    kind = type(node)
    fields = _ORDERED.get(kind)
    if fields is None:
        fields = visit_fields(kind)
    return nodes_of(node, fields)


def calls_in(node: Optional[cst.CSTNode]) -> List[cst.Call]:
    """The calls of an expression in evaluation order (inner arguments before the outer call):
    LibCST's visit order, each call after its children; a lambda does not run there and is
    skipped (its defaults too, as LibCST's visitor skipping it did)."""
    calls: List[cst.Call] = []
    if node is None or isinstance(node, cst.Lambda):
        return calls
    # without recursion (deep expressions); a call's marker `(call,)` is pushed under its
    # children, so the call comes after them: the post-order of the calls
    stack: List[object] = [node]
    call_class, lambda_class, marker = cst.Call, cst.Lambda, tuple
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is marker:
            calls.append(current[0])  # type: ignore[index]
            continue
        if kind is call_class:
            stack.append((current,))
        children = children_in_visit_order(current)  # type: ignore[arg-type]
        for index in range(len(children) - 1, -1, -1):
            child = children[index]
            if type(child) is not lambda_class:
                stack.append(child)
    return calls


def bound_arguments(call: cst.Call, positional: Tuple[str, ...]) -> Dict[str, cst.BaseExpression]:
    """Keyword -> value for a call, positional arguments named by `positional`."""
    out: Dict[str, cst.BaseExpression] = {}
    index = 0
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            out[arg.keyword.value] = arg.value
        elif index < len(positional):
            out[positional[index]] = arg.value
            index += 1
    return out


def dict_literal(expr: cst.BaseExpression) -> Optional[Dict[str, cst.BaseExpression]]:
    """`{"dtype": torch.bfloat16, "enabled": amp}` -> its entries; None unless every key is a
    string literal (a `**other` entry makes the whole dict unknown)."""
    if not isinstance(expr, cst.Dict):
        return None
    out: Dict[str, cst.BaseExpression] = {}
    for element in expr.elements:
        if not isinstance(element, cst.DictElement):
            return None
        key = literal_str(element.key)
        if key is None:
            return None
        out[key] = element.value
    return out


def literal_bool(expr: Optional[cst.BaseExpression]) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def literal_str(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    return None


def rebinds(node: cst.CSTNode, name: str) -> bool:
    """Some statement or expression under `node` binds the bare name `name` (an assignment,
    augmented or annotated, a walrus, a `for` or `with ... as` target, an import alias)."""
    for child in code_children(node):
        if isinstance(child, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr,
                              cst.For, cst.WithItem, cst.AsName)):
            target = getattr(child, "target", None) or getattr(child, "name", None) \
                or getattr(child, "asname", None)
            if isinstance(target, cst.AsName):
                target = target.name
            if isinstance(target, cst.Name) and target.value == name:
                return True
        if rebinds(child, name):
            return True
    return False


def parents_of(root: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    """id(node) -> its parent, for every code node under `root`."""
    parents: Dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in children_in_visit_order(node):
            parents[id(child)] = node
            stack.append(child)
    return parents
