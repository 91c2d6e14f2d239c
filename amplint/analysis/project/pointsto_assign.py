"""The assignment half of the points-to extractor (pointsto_extract.Extractor): a target bound to
a value, element by element for literal tuples, through attributes, subscripts and starred
targets."""

from __future__ import annotations

import ast
from typing import Optional, Tuple

from amplint.analysis.project import pointsto_exprs
from amplint.analysis.project.pointsto_scopes import Scope, literal_key


class Assignments:
    # -- assignment ----------------------------------------------------------------------------
    def assign_expr(self, target: ast.expr, value: ast.expr, scope: Scope) -> None:
        """Pairs a literal tuple on the right with a tuple target element by element."""
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            stars = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if not any(isinstance(v, ast.Starred) for v in value.elts):
                if not stars and len(target.elts) == len(value.elts):
                    for t, v in zip(target.elts, value.elts):
                        self.assign_expr(t, v, scope)
                    return
                if len(stars) == 1 and len(value.elts) >= len(target.elts) - 1:
                    i = stars[0]
                    tail = len(target.elts) - i - 1
                    for t, v in zip(target.elts[:i], value.elts[:i]):
                        self.assign_expr(t, v, scope)
                    for t, v in zip(target.elts[i + 1:], value.elts[len(value.elts) - tail:]):
                        self.assign_expr(t, v, scope)
                    rest = ast.List(elts=value.elts[i: len(value.elts) - tail], ctx=ast.Load())
                    ast.copy_location(rest, value)
                    self.assign(target.elts[i].value, self.expr(rest, scope), scope)  # type: ignore[attr-defined]
                    return
        named = isinstance(target, ast.Name)  # `KEY = "name"`: a named constant keeps its value
        if named and isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            self.assign(target, pointsto_exprs.display(self, value, scope), scope)
        else:
            self.assign(target, pointsto_exprs.literal(self, value, scope) if named else self.expr(value, scope), scope)

    def assign(self, target: ast.expr, value: Optional[str], scope: Scope) -> None:
        if isinstance(target, ast.Name):
            if value:
                self.cons.append(("copy", self.store_node(scope, target.id), value))
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value, scope)
            if base and value:
                self.cons.append(("store", base, target.attr, value))
        elif isinstance(target, ast.Subscript):
            name = target.value.id if isinstance(target.value, ast.Name) else None
            old = self.load_name(scope, name) if name else None
            base = old or self.expr(target.value, scope)
            key, key_node = self.index_key(target.slice, scope)
            if base and value:
                self.cons.append(("setindex", base, key, value, key_node))
                if key is not None and name and "@" in old and not scope.nested:
                    # `d["k"] = v` in straight-line code: the name's next binding is the dict
                    # with "k" replaced (aliases keep the weak update above)
                    self.cons.append(("dictset", self.store_node(scope, name), old, key, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            star = False
            for i, sub in enumerate(target.elts):
                if isinstance(sub, ast.Starred):
                    star = True
                    self.assign(sub.value, value, scope)
                    continue
                item = self.temp()
                if value:
                    self.cons.append(("elem", item, value) if star else ("nth", item, value, i))
                self.assign(sub, item, scope)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, scope)

    def index_key(self, node: ast.expr, scope: Scope) -> Tuple[Optional[str], Optional[str]]:
        """The key as a literal, else the node that holds its values (strings, small ints)."""
        key = literal_key(node)
        if key is None:
            self.mark_key(node, scope)
        return (key, None) if key is not None else (None, self.expr(node, scope))

    def mark_key(self, node: ast.expr, scope: Scope) -> None:
        """A parameter used as a key (`d[event]`, `d.get(event)`): "keyed", so that a call giving it
        a literal gets a copy of its own (pointsto_copies.keyed_literal)."""
        info = self.funcs.get(scope.fqn) if scope.kind == "function" else None
        if info is not None and isinstance(node, ast.Name) and node.id in info["params"] + info["kwonly"]:
            if node.id not in info.setdefault("keyed", []):
                info["keyed"].append(node.id)
