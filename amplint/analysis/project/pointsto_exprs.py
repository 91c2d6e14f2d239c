"""Expressions as points-to constraints (the expression half of pointsto_extract.py).

`expr` returns the node that holds the expression's values, or None when the expression
cannot hold a project function, class, instance, module or container (numbers, f-strings)."""

from __future__ import annotations

import ast
import re
from typing import List, Optional

from amplint.analysis.project import pointsto_atoms

_UNION = (ast.BoolOp, ast.IfExp, ast.BinOp)


def expr(ex, node: ast.expr, scope) -> Optional[str]:
    if ex.atoms:
        found = _expr(ex, node, scope)
        if found and isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
            ex.spans[span(node)] = found
        return found
    return _expr(ex, node, scope)


def span(node: ast.expr):
    """(line, column, end line, end column) of an expression, as `ast` gives them (columns in
    UTF-8 bytes)."""
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _expr(ex, node: ast.expr, scope) -> Optional[str]:
    if isinstance(node, ast.Name):
        return ex.load_name(scope, node.id)
    if isinstance(node, ast.Attribute):
        base = expr(ex, node.value, scope)
        if not base:
            return None
        t = ex.temp()
        ex.cons.append(("load", t, base, node.attr, ex.scope_of(scope)))
        return t
    if isinstance(node, ast.Call):
        return call(ex, node, scope)
    if isinstance(node, (ast.Constant, ast.UnaryOp)) and ex.atoms:
        number = pointsto_atoms.number(node, ex.module)
        if number is not None:
            return ex.const(number)
        if isinstance(node, ast.Constant) and node.value is not None:  # a string, a bool: something else
            return ex.const(pointsto_atoms.OTHER_NUMBER)  # (None: no value, `_device = None` set lazily)
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Lambda):
        scope.lambdas += 1
        return ex.function(node, scope, lambda_name="<lambda%d>" % scope.lambdas)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and inert(node) and (
            node.keys if isinstance(node, ast.Dict) else node.elts) and not _names(node):
        return None  # plain data (configs, shapes): no value worth a box
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return display(ex, node, scope)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        comprehension(ex, node.generators, scope)
        if isinstance(node, ast.DictComp):
            box = "D:" + ex.site(node)
            expr(ex, node.key, scope)
            v = expr(ex, node.value, scope)
            if v:
                ex.cons.append(("copy", box + "#[*]", v))
                ex.cons.append(("copy", box + "#[**]", v))
        else:
            box = "L:" + ex.site(node)
            v = expr(ex, node.elt, scope)
            if v:
                ex.cons.append(("copy", box + "#*", v))
        return ex.const(box)
    if isinstance(node, ast.Subscript):
        base = expr(ex, node.value, scope)
        if isinstance(node.slice, ast.Slice):
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    expr(ex, part, scope)
            lower = node.slice.lower
            start = 0 if lower is None else None
            if isinstance(lower, ast.Constant) and type(lower.value) is int and lower.value >= 0:
                start = lower.value
            if node.slice.step is not None:
                start = None
            if not base:
                return None
            t = ex.temp()
            ex.cons.append(("slice", t, base, start))
            return t
        key, key_node = ex.index_key(node.slice, scope)
        if not base:
            return None
        t = ex.temp()
        ex.cons.append(("index", t, base, key, key_node, ex.scope_of(scope)))
        return t
    if isinstance(node, ast.NamedExpr):
        value = expr(ex, node.value, scope)
        target = scope
        while target.kind == "class" and target.parent is not None:
            target = target.parent
        if value:
            target.bound.add(node.target.id) if target.kind == "function" else None
            ex.cons.append(("copy", ex.store_node(target, node.target.id), value))
        return value
    if isinstance(node, (ast.Await, ast.Starred)):
        return expr(ex, node.value, scope)
    if isinstance(node, (ast.Yield, ast.YieldFrom)):
        value = expr(ex, node.value, scope) if node.value is not None else None
        if scope.kind == "function" and scope.fqn in ex.funcs:
            ex.funcs[scope.fqn]["gen"] = True
        if value and scope.kind == "function":
            kind = "copy" if isinstance(node, ast.Yield) else "elem"
            ex.cons.append((kind, "V:%s#<yield>" % scope.fqn, value))
        return None
    if isinstance(node, (ast.JoinedStr, ast.BinOp)) and _name_like(string_parts(node)):
        return text(ex, node, scope)
    if isinstance(node, _UNION):
        parts: List[ast.expr]
        if isinstance(node, ast.BoolOp):
            parts = node.values
        elif isinstance(node, ast.IfExp):
            expr(ex, node.test, scope)
            parts = [node.body, node.orelse]
        else:
            parts = [node.left, node.right]
        nodes = [n for n in (expr(ex, p, scope) for p in parts) if n]
        if ex.atoms and isinstance(node, ast.BinOp):  # arithmetic: not either operand's number
            nodes.append(ex.const("E:?"))
        if len(nodes) == 1:
            return nodes[0]
        if not nodes:
            return None
        t = ex.temp()
        for n in nodes:
            ex.cons.append(("copy", t, n))
        return t
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            expr(ex, child, scope)
        elif isinstance(child, ast.comprehension):
            comprehension(ex, [child], scope)
    return None


def display(ex, node: ast.expr, scope) -> Optional[str]:
    """The value of a list, tuple, set or dict display: a box per site (also for plain data when
    a name is bound to it: the name may fill it later)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        # a literal list or tuple is index-sensitive ("!"): element i also goes to field [i]
        indexed = not isinstance(node, ast.Set)
        box = "L:" + ex.site(node) + ("!" if indexed else "")
        names = _names(node)  # a few literal names keep their strings (not a long table of them)
        for i, elt in enumerate(node.elts):
            if isinstance(elt, ast.Starred):
                indexed = False
                inner = expr(ex, elt.value, scope)
                if inner:
                    ex.cons.append(("elem", box + "#*", inner))
            else:
                value = literal(ex, elt, scope) if names else expr(ex, elt, scope)
                if value:
                    ex.cons.append(("copy", box + "#*", value))
                    if indexed:
                        ex.cons.append(("copy", "%s#[%d]" % (box, i), value))
        return ex.const(box)
    if isinstance(node, ast.Dict):
        box = "D:" + ex.site(node)
        for key, value in zip(node.keys, node.values):
            v = expr(ex, value, scope)
            if key is None:
                if v:
                    ex.cons.append(("dictmerge", box, v))
                continue
            k = ex.index_key(key, scope)[0]
            if v:
                ex.cons.append(("copy", "%s#[%s]" % (box, k if k is not None else "*"), v))
                ex.cons.append(("copy", box + "#[**]", v))
        return ex.const(box)
    return None


def _names(node: ast.expr) -> bool:
    """A list or tuple of a few short strings (OpenPCDet's `module_topology`): names a loop may
    format into attribute names or keys, so its box keeps them."""
    return (isinstance(node, (ast.List, ast.Tuple)) and 0 < len(node.elts) <= 16
            and all(_short_string(e) for e in node.elts))


def _short_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 64


def string_parts(node: ast.expr) -> Optional[List[object]]:
    """A string built of literal text and values (`"build_%s" % name`, `f"build_{name}"`,
    `"build_" + name`), as its parts: text, or the expression of a `%s`/`{}` without a format
    spec; None for any other expression (`a + b` of two names: a list's concatenation too)."""
    if isinstance(node, ast.JoinedStr):
        parts: List[object] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue) and value.format_spec is None and value.conversion in (-1, 115):
                parts.append(value.value)
            else:
                return None
        return parts
    if not isinstance(node, ast.BinOp):
        return None
    if isinstance(node.op, ast.Mod) and _short_string(node.left):
        values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        pieces = re.split(r"(%[sd%])", node.left.value)
        if "%" in "".join(pieces[::2]) or sum(p in ("%s", "%d") for p in pieces) != len(values):
            return None  # another conversion (`%5.2f`, `%(name)s`), or a count that does not fit
        parts, rest = [], list(values)
        for piece in pieces:
            parts.append("%" if piece == "%%" else rest.pop(0) if piece in ("%s", "%d") else piece)
        return parts
    if isinstance(node.op, ast.Add):
        sides = [string_parts(n) if isinstance(n, (ast.JoinedStr, ast.BinOp)) else n for n in (node.left, node.right)]
        if not any(_short_string(n) or isinstance(n, ast.JoinedStr) for n in (node.left, node.right)) or None in sides:
            return None  # no literal side: maybe a list's concatenation (the union stays)
        out: List[object] = []
        for side in sides:
            if isinstance(side, list):
                out.extend(side)
            else:
                out.append(side.value if _short_string(side) else side)
        return out
    return None


def _name_like(parts: Optional[List[object]]) -> bool:
    """Parts that may make a name or a key: a few, their text short (not a log message)."""
    return (parts is not None and len(parts) <= 8
            and sum(len(p) for p in parts if isinstance(p, str)) <= 32)


def text(ex, node: ast.expr, scope) -> Optional[str]:
    """A string of known parts: a "format" constraint makes each string its values' strings
    give (strings and small ints only; a part of any other value gives no string)."""
    parts = []
    for part in string_parts(node) or ():
        if isinstance(part, str):
            parts.append("S:" + part)
            continue
        value = literal(ex, part, scope)
        if value is None:
            return None
        parts.append(value)
    t = ex.temp()
    ex.cons.append(("format", t, parts))
    return t


def inert(node: Optional[ast.expr]) -> bool:
    """Literal data all the way down: it cannot hold a function, class, instance or module."""
    if node is None or isinstance(node, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(inert(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(inert(k) and inert(v) for k, v in zip(node.keys, node.values))
    if isinstance(node, ast.UnaryOp):
        return inert(node.operand)
    return False


def literal(ex, node: ast.expr, scope) -> Optional[str]:
    """An argument or a default: a short string or small int is kept as a value there (for getattr,
    dict keys and indexes that a parameter carries); elsewhere literals hold nothing."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str) and len(node.value) <= 64:
            return ex.const("S:" + node.value)
        if type(node.value) is int and 0 <= node.value < 64:
            return ex.const("N:%d" % node.value)
    if ex.atoms and isinstance(node, (ast.Constant, ast.UnaryOp)):
        number = pointsto_atoms.number(node, ex.module)
        if number is None and isinstance(node, ast.Constant) and node.value is not None:
            number = pointsto_atoms.OTHER_NUMBER  # a bool, a long string: something else
        return ex.const(number) if number is not None else None
    if isinstance(node, ast.Constant):
        return None
    return expr(ex, node, scope)


def comprehension(ex, generators, scope) -> None:
    for gen in generators:
        src = expr(ex, gen.iter, scope)
        item = ex.temp()
        if src:
            ex.cons.append(("iter", item, src, ex.scope_of(scope)))
        _bind_comprehension_target(ex, gen.target, scope)
        ex.assign(gen.target, item, scope)
        for cond in gen.ifs:
            expr(ex, cond, scope)


def _bind_comprehension_target(ex, target, scope) -> None:
    """Comprehension variables live in the enclosing function's scope here (a harmless merge)."""
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and scope.kind == "function":
            scope.bound.add(node.id)


_KEYED_METHODS = ("get", "setdefault", "pop")  # a dict's methods whose first argument is a key


def call(ex, node: ast.Call, scope) -> str:
    caller = ex.scope_of(scope)
    if isinstance(node.func, ast.Name) and node.func.id == "super" and ex.load_name(scope, "super").startswith("T:"):
        return _super(ex, node, scope)
    fn = expr(ex, node.func, scope)
    if isinstance(node.func, ast.Attribute) and node.func.attr in _KEYED_METHODS and node.args:
        ex.mark_key(node.args[0], scope)
    args: List[Optional[str]] = []
    star: Optional[str] = None
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            value = expr(ex, arg.value, scope)
            if value:
                if star is None:
                    star = ex.temp()
                ex.cons.append(("copy", star, value))
            continue
        args.append(literal(ex, arg, scope))
    kwargs = {}
    kwstar: Optional[str] = None
    for kw in node.keywords:
        value = literal(ex, kw.value, scope)
        if kw.arg is None:
            if value:
                if kwstar is None:
                    kwstar = ex.temp()
                ex.cons.append(("copy", kwstar, value))
        elif value:
            kwargs[kw.arg] = value
    t = ex.temp()
    if fn:
        ex.cons.append(("call", t, fn, args, kwargs, star, kwstar, caller, ex.site(node)))
    if ex.atoms and isinstance(node.func, ast.Attribute):
        cast = pointsto_atoms.cast_kind(node)
        base = ex.spans.get(span(node.func.value)) if cast else None
        if base:  # `model.half()`, `.to(dtype)`, `.cuda()`: the receiver comes back, maybe cast
            ex.cons.append(("recast", t, base, cast, "X:half@%s:%d:%d" % (ex.module, node.lineno, node.col_offset),
                            [a for a in args if a] + list(kwargs.values())))
    return t


def _super(ex, node: ast.Call, scope) -> str:
    t = ex.temp()
    for arg in node.args:
        expr(ex, arg, scope)
    func = scope
    while func is not None and func.kind != "function":
        func = func.parent
    if func is None:
        return t
    info = ex.funcs.get(func.fqn) or {}
    cls = func.cls
    if len(node.args) == 2:
        cls_node, self_node = expr(ex, node.args[0], scope), expr(ex, node.args[1], scope)
        if cls_node and self_node:
            ex.cons.append(("super", t, self_node, cls_node))
        return t
    params = info.get("params") or []
    if cls and params:
        ex.cons.append(("super", t, "V:%s#%s" % (func.fqn, params[0]), ex.const("C:" + cls)))
    return t
