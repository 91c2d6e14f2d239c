"""One module's binding constructs as points-to constraints: plain data, built from one `ast` parse.

The resolver (pointsto_solve.py) is context-insensitive, field-sensitive on attributes, with
containers collapsed to their elements, in the style of PyCG. This module only names things; it
knows nothing of other modules, so its output can be cached per file.

Nodes are strings. A variable is a field of the object that holds it: a module global `x` of
`pkg.m` is "M:pkg.m#x", a class-body name "C:pkg.m.A#x", a local or parameter of a function
"V:pkg.m.f#x" (its return "V:pkg.m.f#<return>", its yields "V:pkg.m.f#<yield>"), an attribute
stored on instances of A "I:pkg.m.A#x", the collapsed elements of the list built at a site
"L:<site>#*". Temporaries are "T:<module>:<n>". Values: "F:" function, "C:" class, "I:" instance,
"M:" module, "E:" something outside the project (a dotted name; "E:?" what calls to it return),
"S:"/"N:" a string or small int literal passed as an argument or default, "U:" a super() proxy,
"L:"/"D:" a container built at a site.

Constraints (tuples, first item the kind): const(dst, value) · copy(dst, src) · load(dst, base,
attr, scope) · store(base, attr, src) · call(dst, fn, args, kwargs, star, kwstar, scope, site) ·
elem(dst, src) · iter(dst, src, scope) · index(dst, base, key, scope) · setindex(base, key, src) ·
decorate(dst, dec, src, scope) · super(dst, self, cls) · import(dst, module, top) ·
importfrom(dst, module, name) · star(module, source) · enter(dst, src, scope) · inst(dst, src).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project import pointsto_atoms, pointsto_exprs
from amplint.analysis.project.pointsto_assign import Assignments
from amplint.analysis.project.pointsto_scopes import (
    COMPOUND, SPECIAL_DECORATORS, BUILTINS, Scope, bound_names, leaves, literal_update, param_guard,
    returns_param,
)


class Extractor(Assignments):
    def __init__(self, module: str, is_package: bool, atoms: bool = False) -> None:
        self.module, self.is_package = module, is_package
        # `atoms`: also carry the values rules ask about (pointsto_atoms.py) and keep the node of
        # every name, attribute and call by its span (facts/bound_values.py reads them)
        self.atoms = atoms
        self.spans: Dict[Tuple[int, int, int, int], str] = {}
        self.cons: List[tuple] = []
        self.funcs: Dict[str, dict] = {}
        self.classes: Dict[str, dict] = {}
        self.globals: List[str] = []
        self.all: Optional[List[str]] = None
        self.sites: Dict[str, Tuple[int, int]] = {}
        self._bodies: Dict[str, List[ast.stmt]] = {}  # function -> its body (for param_guard)
        self._n = 0

    # -- nodes ---------------------------------------------------------------------------------
    def temp(self) -> str:
        self._n += 1
        return "T:%s:%d" % (self.module, self._n)

    def site(self, node: ast.AST) -> str:
        key = "%s:%d:%d" % (self.module, node.lineno, node.col_offset)
        self.sites[key] = (node.lineno, node.col_offset)
        return key

    def const(self, value: str) -> str:
        t = self.temp()
        self.cons.append(("const", t, value))
        return t

    def var_node(self, scope: Scope, name: str) -> str:
        if scope.kind == "module":
            return "M:%s#%s" % (self.module, name)
        if scope.kind == "class":
            return "C:%s#%s" % (scope.fqn, name)
        return "V:%s#%s" % (scope.fqn, name)

    def store_node(self, scope: Scope, name: str) -> str:
        if name in scope.globals:
            return "M:%s#%s" % (self.module, name)
        if name in scope.nonlocals:
            return self.load_name(scope.parent, name) if scope.parent else self.var_node(scope, name)
        node = self.var_node(scope, name)
        if scope.nested or name in self.shared:
            return node
        self._n += 1
        version = "%s@%d" % (node, self._n)
        self.cons.append(("copy", node, version))
        scope.current[name] = version
        return version

    def load_name(self, scope: Scope, name: str) -> str:
        first = True
        cur: Optional[Scope] = scope
        while cur is not None:
            if name in cur.globals:
                break
            if first and name in cur.current:
                return cur.current[name]
            if cur.kind == "module":
                break
            if (first or cur.kind != "class") and name in cur.bound:
                return self.var_node(cur, name)
            first = False
            cur = cur.parent
        if name in self.module_bound or name not in BUILTINS:
            return "M:%s#%s" % (self.module, name)
        return self.const("E:" + name)

    def scope_of(self, scope: Scope) -> str:
        """The caller a call in this scope is charged to (class bodies run in their parent)."""
        while scope.kind == "class" and scope.parent is not None:
            scope = scope.parent
        return scope.fqn

    # -- module --------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        scope = Scope("module", self.module, None)
        bound_names(tree.body, scope)
        self.module_bound = set(scope.bound)
        self.shared = {n for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
        self.globals = sorted(scope.bound)
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                if isinstance(stmt.value, (ast.List, ast.Tuple)):
                    self.all = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        self.body(tree.body, scope)

    def body(self, stmts: List[ast.stmt], scope: Scope) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmt, scope)
            guard = self.param_guard(stmt, scope)
            if guard is not None and leaves(stmt.body) and not stmt.orelse and i + 1 < len(stmts):
                # `if p is None: return ...`: the rest of the block runs only when p is not None
                start = len(self.cons)
                self.body(stmts[i + 1:], scope)
                self.funcs[scope.fqn]["guards"].append((guard[0], not guard[1], start, len(self.cons)))
                return

    def param_guard(self, stmt: ast.stmt, scope: Scope) -> Optional[tuple]:
        if scope.kind != "function" or scope.fqn not in self.funcs:
            return None
        return param_guard(stmt, self.funcs[scope.fqn], self._bodies[scope.fqn])

    # -- statements ----------------------------------------------------------------------------
    def stmt(self, node: ast.stmt, scope: Scope) -> None:
        if isinstance(node, COMPOUND):
            if not scope.nested and scope.current:  # inner blocks: their names are already dropped
                inner = Scope("block", "", None)
                bound_names([node], inner)
                for name in inner.bound | inner.globals | inner.nonlocals:
                    scope.current.pop(name, None)
            scope.nested += 1
            try:
                self._stmt(node, scope)
            finally:
                scope.nested -= 1
        else:
            self._stmt(node, scope)

    def _stmt(self, node: ast.stmt, scope: Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node, scope)
        elif isinstance(node, ast.ClassDef):
            self.klass(node, scope)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.assign_expr(target, node.value, scope)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign_expr(node.target, _field_default(node.value) if scope.kind == "class" else node.value, scope)
        elif isinstance(node, ast.AugAssign):
            value = self.expr(node.value, scope)
            if isinstance(node.target, ast.Name):
                old = self.load_name(scope, node.target.id)
                new = self.store_node(scope, node.target.id)
                self.cons.append(("copy", new, old))
                if value:
                    self.cons.append(("copy", new, value))
                if self.atoms:  # `eps *= 2`: not the number it held
                    self.cons.append(("copy", new, self.const("E:?")))
            else:
                self.assign(node.target, value, scope)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            item = self.temp()
            src = self.expr(node.iter, scope)
            if src:
                self.cons.append(("iter", item, src, self.scope_of(scope)))
            self.assign(node.target, item, scope)
            self.body(node.body + node.orelse, scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                ctx = self.expr(item.context_expr, scope)
                if ctx:
                    entered = self.temp()
                    self.cons.append(("enter", entered, ctx, self.scope_of(scope)))
                    if item.optional_vars is not None:
                        self.assign(item.optional_vars, entered, scope)
            self.body(node.body, scope)
        elif isinstance(node, ast.Expr) and literal_update(node.value) and not scope.nested:
            call = node.value
            name = call.func.value.id
            for key, value in zip(call.args[0].keys, call.args[0].values):
                self.assign(ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=key, ctx=ast.Store()),
                            self.expr(value, scope), scope)
        elif isinstance(node, ast.Return):
            if node.value is not None and scope.kind == "function":
                info = self.funcs.get(scope.fqn)
                if info is not None:
                    # the parameters it returns (part of): "through" (pointsto_copies.py)
                    params = set(info["params"] + info["kwonly"] + [info["vararg"], info["kwarg"]])
                    named = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in params}
                    if named - set(info.get("through", ())):
                        info["through"] = sorted(named | set(info.get("through", ())))
                    first = info["params"][:1]
                    info["identity"] = info.get("identity", True) and bool(first) and returns_param(
                        node.value, first[0], self._bodies[scope.fqn])
                value = self.expr(node.value, scope)
                if value:
                    self.cons.append(("copy", "V:%s#<return>" % scope.fqn, value))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.cons.append(("import", self.store_node(scope, alias.asname), alias.name, False))
                else:
                    top = alias.name.split(".")[0]
                    self.cons.append(("import", self.store_node(scope, top), alias.name, True))
        elif isinstance(node, ast.ImportFrom):
            base = self.absolute(node.module, node.level)
            for alias in node.names:
                if alias.name == "*":
                    self.cons.append(("star", self.module, base))
                    scope.current.clear()
                else:
                    dst = self.store_node(scope, alias.asname or alias.name)
                    self.cons.append(("importfrom", dst, base, alias.name))
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                exc = self.expr(node.exc, scope)
                if exc and not isinstance(node.exc, ast.Call):
                    self.cons.append(("call", self.temp(), exc, [], {}, None, None, self.scope_of(scope), None))
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.body(node.body, scope)
            for handler in node.handlers:
                kind = self.expr(handler.type, scope) if handler.type is not None else None
                if handler.name and kind:
                    self.cons.append(("inst", self.store_node(scope, handler.name), kind))
                self.body(handler.body, scope)
            self.body(node.orelse + node.finalbody, scope)
        elif isinstance(node, ast.If) and self.param_guard(node, scope):
            # the branches of a None test on a parameter are marked, so that a copy made where the
            # parameter is known (a decorator given a function, a call that leaves it to its
            # default None) drops the branch that cannot run (pointsto_copies.py)
            param, is_none = self.param_guard(node, scope)
            self.expr(node.test, scope)
            for block, when in ((node.body, is_none), (node.orelse, not is_none)):
                start = len(self.cons)
                self.body(block, scope)
                self.funcs[scope.fqn]["guards"].append((param, when, start, len(self.cons)))
        elif isinstance(node, (ast.If, ast.While)):
            self.expr(node.test, scope)
            self.body(node.body + node.orelse, scope)
        elif isinstance(node, ast.Match):
            self.expr(node.subject, scope)
            for case in node.cases:
                self.body(case.body, scope)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child, scope)
                elif isinstance(child, ast.stmt):
                    self.stmt(child, scope)

    def absolute(self, module: Optional[str], level: int) -> str:
        if not level:
            return module or ""
        parts = self.module.split(".")
        if not self.is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
        return ".".join(parts + ([module] if module else []))

    def function(self, node, scope: Scope, lambda_name: Optional[str] = None) -> str:
        name = lambda_name or node.name
        fqn = "%s.%s" % (scope.fqn, name)
        inner = Scope("function", fqn, scope, cls=scope.fqn if scope.kind == "class" else None)
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        inner.bound.update(positional + [a.arg for a in args.kwonlyargs])
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                inner.bound.add(extra.arg)
        kind = "function"
        decorators: List[ast.expr] = []
        for dec in getattr(node, "decorator_list", []):
            special = dec.id if isinstance(dec, ast.Name) else None
            if special in SPECIAL_DECORATORS and scope.kind == "class":
                kind = SPECIAL_DECORATORS[special]
            elif isinstance(dec, ast.Attribute) and dec.attr in ("setter", "getter", "deleter") and scope.kind == "class":
                kind = "property"
            else:
                decorators.append(dec)
        body = node.body if isinstance(node.body, list) else [ast.Return(value=node.body)]
        bound_names(body, inner)
        self.funcs[fqn] = {
            "params": positional, "vararg": args.vararg.arg if args.vararg else None,
            "kwonly": [a.arg for a in args.kwonlyargs], "kwarg": args.kwarg.arg if args.kwarg else None,
            "kind": kind, "gen": False, "cls": inner.cls, "line": node.lineno, "guards": [],
        }
        self._bodies[fqn] = body
        start = len(self.cons)
        defaults = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        defaults += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        self.funcs[fqn]["none"] = [p for p, d in defaults if isinstance(d, ast.Constant) and d.value is None]
        for param, default in defaults:
            value = pointsto_exprs.literal(self, default, scope)
            if value and self.atoms and pointsto_atoms.number(default, self.module) is not None:
                # a number default holds where a call leaves the parameter out (bind_params)
                self.funcs[fqn].setdefault("defaults", {})[param] = value
            elif value:
                self.cons.append(("copy", "V:%s#%s" % (fqn, param), value))
        if inner.cls and positional and kind in ("function", "property"):
            self.cons.append(("const", "V:%s#%s" % (fqn, positional[0]), "I:" + inner.cls))
        elif inner.cls and positional and kind == "class":
            self.cons.append(("const", "V:%s#%s" % (fqn, positional[0]), "C:" + inner.cls))
        if self.atoms:  # a caller the solve does not see may pass anything (pointsto_atoms.OPEN)
            bound_first = bool(inner.cls and positional and kind in ("function", "property", "class"))
            for param in positional[1 if bound_first else 0:] + [a.arg for a in args.kwonlyargs] + [
                    a.arg for a in (args.vararg, args.kwarg) if a is not None]:
                self.cons.append(("const", "V:%s#%s" % (fqn, param), pointsto_atoms.OPEN))
        self.body(body, inner)
        if self.atoms and not (body and isinstance(body[-1], (ast.Return, ast.Raise))):
            # it may fall off its end: None, something else than any atom
            self.cons.append(("const", "V:%s#<return>" % fqn, pointsto_atoms.OTHER_NUMBER))
        self.funcs[fqn]["span"] = (start, len(self.cons))  # its constraints and its nested functions'
        value = self.const("F:" + fqn)
        for dec in reversed(decorators):
            dec_node = self.expr(dec, scope)
            if dec_node:
                out = self.temp()
                self.cons.append(("decorate", out, dec_node, value, self.scope_of(scope)))
                value = out
        if lambda_name is None:
            self.cons.append(("copy", self.store_node(scope, node.name), value))
        return value

    def klass(self, node: ast.ClassDef, scope: Scope) -> None:
        fqn = "%s.%s" % (scope.fqn, node.name)
        bases = [self.expr(b, scope) for b in node.bases]
        for kw in node.keywords:
            self.expr(kw.value, scope)
        inner = Scope("class", fqn, scope)
        bound_names(node.body, inner)
        fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        dataclass = any("dataclass" in ast.unparse(d) for d in node.decorator_list)
        self.classes[fqn] = {"bases": [b for b in bases if b], "defs": sorted(inner.bound),
                             "fields": fields if dataclass else None, "line": node.lineno}
        self.body(node.body, inner)
        value = self.const("C:" + fqn)
        for dec in reversed(node.decorator_list):
            dec_node = self.expr(dec, scope)
            if dec_node:
                out = self.temp()
                self.cons.append(("decorate", out, dec_node, value, self.scope_of(scope)))
                value = out
        self.cons.append(("copy", self.store_node(scope, node.name), value))

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, node: Optional[ast.expr], scope: Scope) -> Optional[str]:
        if node is None:
            return None
        return pointsto_exprs.expr(self, node, scope)


def _field_default(value: ast.expr) -> ast.expr:
    """A dataclass field `x: T = field(default_factory=F)` holds `F()` on each instance."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("field", "dataclasses.field"):
        for kw in value.keywords:
            if kw.arg == "default_factory":
                return ast.copy_location(ast.Call(func=kw.value, args=[], keywords=[]), value)
            if kw.arg == "default":
                return kw.value
    return value


def extract(source: str, module: str, is_package: bool = False, atoms: bool = False, tree=None) -> dict:
    """The constraints and definitions of one module, as plain data (cacheable)."""
    tree = tree if tree is not None else ast.parse(source)
    ex = Extractor(module, is_package, atoms)
    ex.run(tree)
    return {"module": module, "package": is_package, "cons": ex.cons, "funcs": ex.funcs,
            "classes": ex.classes, "globals": ex.globals, "all": ex.all, "sites": ex.sites,
            "spans": ex.spans}
