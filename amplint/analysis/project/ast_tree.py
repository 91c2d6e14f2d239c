"""The facts' one walk (facts/tree.py's Collector) over Python's `ast` instead of LibCST, for
the on-demand summaries of ast_summary.py: the same Frames (scopes, imports, bindings,
functions), call sites and assignments, in the same order, with `ast` nodes in them.

Where the two trees differ in what the walk would see, the file is refused (`Refused`) and
summarised from LibCST as before. REFUSED_TEXT and REFUSED_NODES are the whole gate: a
construct the LibCST summary learns to read later, which this walk does not model, is one
entry there.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from amplint.analysis.facts.tree import Frame
from amplint.analysis.project.ast_frames import AssignSite, CallSite, new_frame, release


class Refused(Exception):
    """This file is not summarised from `ast` (the reason is the message)."""


# Text that can make the LibCST summary read something this path does not build: detectron2's
# `train = dict(amp=dict(enabled=...))` setting, and line endings `ast` counts otherwise.
# (Other regions and settings need text that `needs_summary` sends to LibCST first.)
REFUSED_TEXT: Tuple[Tuple[str, str], ...] = (
    (r"\bamp\s*=", "detectron2 `amp=dict(enabled=...)` (frameworks._is_d2_amp_dict)"),
    (r"\r|\x0c", "line endings or form feeds"),
)
# Words a pattern cannot match without (a plain `in` test first: much cheaper than a search)
_NEEDLES = {r"\bamp\s*=": ("amp",), r"\r|\x0c": ("\r", "\x0c")}
_WORD = re.compile(r"\w")


class _Bounded:
    """`\\bword...` searched as `word...` (a literal prefix: re scans for it quickly; a leading
    `\\b` defeats that) with the boundary checked at each match: the word starts with a word
    character, so `\\b` there means "no word character before it". Matches of the rest cannot
    overlap (it ends at a non-word character), so checking each one finds the same first match."""

    def __init__(self, pattern: str) -> None:
        self._rest = re.compile(pattern[2:])

    def search(self, text: str):
        for match in self._rest.finditer(text):
            start = match.start()
            if start == 0 or _WORD.match(text, start - 1) is None:
                return match
        return None


def _compiled(pattern: str):
    if pattern.startswith(r"\b") and re.match(r"\w+\\s\*=$", pattern[2:]):
        return _Bounded(pattern)
    return re.compile(pattern)


_REFUSED_TEXT = [(_compiled(pattern), why, _NEEDLES.get(pattern, ())) for pattern, why in REFUSED_TEXT]

# Statements and expressions whose LibCST walk this one does not reproduce.
_REFUSED_NODE_NAMES = {
    "Match": "match statement (LibCST: no frame bookkeeping, own_statements skips cases)",
    "TryStar": "except* (cst.TryStar: not walked as a try)",
    "TypeAlias": "type alias statement",
}
REFUSED_NODES: Dict[type, str] = {
    getattr(ast, name): why for name, why in _REFUSED_NODE_NAMES.items() if hasattr(ast, name)
}  # (the Python running may not have them all: then it cannot parse them either)


def refusal(text: str) -> Optional[str]:
    """Why `text` is not summarised from `ast` (None: it may be)."""
    for pattern, why, needles in _REFUSED_TEXT:  # one search each: an alternation of them is slower
        if needles and not any(needle in text for needle in needles):
            continue
        if pattern.search(text):
            return why
    return None


def dotted(expr) -> Optional[Tuple[str, ...]]:
    kind = type(expr)
    if kind is ast.Name:  # most calls: a bare name
        return (expr.id,)
    if kind is not ast.Attribute and kind is not ast.Constant:
        return None
    parts: List[str] = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is ast.Name:
        parts.append(expr.id)
        return tuple(reversed(parts))
    if type(expr) is ast.Constant and (expr.value is None or type(expr.value) is bool):
        parts.append(str(expr.value))  # LibCST: `None`, `True`, `False` are names
        return tuple(reversed(parts))
    return None


def import_bindings(node) -> List[Tuple[str, str]]:
    """facts.syntax.import_bindings for `ast` imports."""
    found: List[Tuple[str, str]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname is not None:
                found.append((alias.asname, alias.name))
            else:
                first = alias.name.split(".")[0]
                found.append((first, first))
        return found
    if any(alias.name == "*" for alias in node.names):
        return found
    prefix = "." * (node.level or 0) + "".join(part + "." for part in (node.module.split(".") if node.module else ()))
    for alias in node.names:
        found.append((alias.asname or alias.name, prefix + alias.name))
    return found


def call_args(call: ast.Call) -> List[Tuple[Optional[str], str, ast.expr]]:
    """A call's arguments in source order as LibCST lists them: (keyword, star, value)."""
    out = [(None, "*", a.value) if type(a) is ast.Starred else (None, "", a) for a in call.args]
    keywords = call.keywords
    if not keywords:
        return out
    if out and _before(keywords[0], call.args[-1]):  # `f(a=1, *rest)`: back into source order
        items = [(a, item) for a, item in zip(call.args, out)]
        items += [(k, (k.arg, "" if k.arg is not None else "**", k.value)) for k in keywords]
        items.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
        return [item for _, item in items]
    return out + [(k.arg, "" if k.arg is not None else "**", k.value) for k in keywords]


def _before(a, b) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


_CHILDREN = {
    ast.Attribute: lambda n: (n.value,),
    ast.Subscript: lambda n: (n.value, n.slice),
    ast.BinOp: lambda n: (n.left, n.right),
    ast.UnaryOp: lambda n: (n.operand,),
    ast.Compare: lambda n: [n.left] + n.comparators,
    ast.BoolOp: lambda n: n.values,
    ast.Tuple: lambda n: n.elts,
    ast.List: lambda n: n.elts,
    ast.Set: lambda n: n.elts,
    ast.Starred: lambda n: (n.value,),
    ast.IfExp: lambda n: (n.test, n.body, n.orelse),
    ast.Slice: lambda n: (n.lower, n.upper, n.step),
    ast.Await: lambda n: (n.value,),
    ast.Yield: lambda n: (n.value,),
    ast.YieldFrom: lambda n: (n.value,),
}


_LEAVES = frozenset({ast.Name, ast.Constant})


class _ForClause:
    """A comprehension's `for` clause, pushed on the walk's stack just before its target."""

    __slots__ = ("clause",)

    def __init__(self, clause: ast.comprehension) -> None:
        self.clause = clause


class AstCollector:
    """facts/tree.py's Collector over `ast` (see its docstrings for what each step means)."""

    def __init__(self, module: ast.Module) -> None:
        self.module_frame = new_frame("module", module, None)
        self.frame = self.module_frame
        self.frames: List[Frame] = [self.module_frame]
        self.calls: List[CallSite] = []
        self.assigns: List[AssignSite] = []
        self.classes: Dict[str, Frame] = {}
        self._fallback: List[Set[str]] = []
        self._parent: ast.AST = module
        # what facts.tree's Collector counts for `Frame.aliases` (ast_aliases.keep_aliases)
        self.counts: Dict[Tuple[int, str], int] = {}  # (id(scope), name) -> bindings seen
        self.unaliasable: Set[str] = set()  # global/nonlocal, comprehension, lambda, del names
        self.walrus_names: Set[str] = set()
        self.comprehensions: List[Tuple[ast.comprehension, Frame]] = []  # as Collector's
        try:
            self._body(module.body)
        except BaseException:  # a refusal: no reader gets the frames made so far
            self.release()
            raise

    def release(self) -> None:
        """Drop the walk's records and break their cycles (ast_frames.release): called by the
        reader once it is done with them."""
        release(self.frames)
        self.calls, self.assigns, self.classes, self.comprehensions = [], [], {}, []
        self.frame = self.module_frame = None  # type: ignore[assignment]

    # -- traversal ------------------------------------------------------------------------
    def _body(self, stmts) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        kind = type(node)
        if kind in REFUSED_NODES:
            raise Refused(REFUSED_NODES[kind])
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            self._function(node)
        elif kind is ast.ClassDef:
            self._class(node)
        elif kind in (ast.Import, ast.ImportFrom):
            self._import(node)
        elif kind is ast.Assign:
            for target in node.targets:
                self._bind(target)
            self.assigns.append(AssignSite(tuple(node.targets), node.value, self.frame))
            for target in node.targets:
                self.expr(target, node)
            self.expr(node.value, node)
        elif kind is ast.AnnAssign:
            self._bind(node.target)
            if node.value is not None:
                self.assigns.append(AssignSite((node.target,), node.value, self.frame))
            self.expr(node.target, node)
            self.expr(node.annotation, node)
            self.expr(node.value, node)
        elif kind is ast.AugAssign:
            self._bind(node.target)
            self.expr(node.target, node)
            self.expr(node.value, node)
        elif kind in (ast.For, ast.AsyncFor):
            self.frame.scope.loops.append(node)
            self._bind(node.target)
            self.expr(node.target, node)
            self.expr(node.iter, node)
            self._body(node.body)
            self._body(node.orelse)
        elif kind in (ast.If, ast.While):
            self.expr(node.test, node)
            self._body(node.body)
            self._body(node.orelse)
        elif kind is ast.Try:
            self._try(node)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:  # parent: the With (whose parentheses LibCST may keep)
                self.expr(item.context_expr, node)
                self.expr(item.optional_vars, item)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars)
            frame = self._push("with", node)
            self._body(node.body)
            self._pop(frame)
        elif kind in (ast.Expr, ast.Return):
            if kind is ast.Return and node.value is not None:
                self.frame.scope.returns.append(node)
            self.expr(node.value, node)
        elif kind is ast.Raise:
            self.expr(node.exc, node)
            self.expr(node.cause, node)
        elif kind is ast.Assert:
            self.expr(node.test, node)
            self.expr(node.msg, node)
        elif kind is ast.Delete:
            for target in node.targets:
                self.unaliasable.update(code_names(target))
                self.expr(target, node)
        elif kind is ast.Global or kind is ast.Nonlocal:
            self.unaliasable.update(node.names)
        elif kind not in (ast.Pass, ast.Break, ast.Continue):
            raise Refused(f"statement {kind.__name__}")

    def expr(self, node, parent) -> None:
        """Pre-order, children in LibCST's field order; no frame for lambdas or comprehensions
        (the LibCST walk has none either). Names and constants hold no call: never pushed."""
        if node is None or type(node) in _LEAVES:
            return
        stack = [(node, parent)]
        calls, frame = self.calls, self.frame
        pop, push = stack.pop, stack.append
        attribute, call, leaves, children_of = ast.Attribute, ast.Call, _LEAVES, _CHILDREN
        while stack:
            current, parent = pop()
            kind = type(current)
            children: list
            if kind is attribute:  # a chain's links hold nothing: go to its base at once
                value = current.value
                while type(value) is attribute:
                    current, value = value, value.value
                if type(value) not in leaves:
                    push((value, current))
                continue
            if kind is call:  # (pushed last to first: the walk takes func, then the arguments)
                args = call_args(current)
                func = current.func
                calls.append(CallSite(current, frame, dotted(func), parent, args))
                for _, _, value in reversed(args):
                    if type(value) not in leaves:
                        push((value, current))
                if type(func) not in leaves:
                    push((func, current))
                continue
            read = children_of.get(kind)
            if read is not None:
                children = read(current)
            elif kind is ast.NamedExpr:
                self._bind(current.target)
                self.walrus_names.add(current.target.id)
                children = [current.target, current.value]
            elif kind is ast.Dict:
                children = []
                for key, value in zip(current.keys, current.values):
                    if key is not None:
                        children.append(key)
                    children.append(value)
            elif kind is ast.Lambda:
                self.unaliasable.update(arg.arg for arg in all_params(current.args))
                children = self._param_children(current.args) + [current.body]
            elif kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
                children = [current.elt] + self._generators(current.generators)
            elif kind is ast.DictComp:
                children = [current.key, current.value] + self._generators(current.generators)
            elif kind is ast.JoinedStr:
                children = [v for v in current.values if type(v) is ast.FormattedValue]
            elif kind is ast.FormattedValue:
                children = [current.value] + ([current.format_spec] if current.format_spec else [])
            elif kind is _ForClause:  # where LibCST's walk enters the CompFor
                self.comprehensions.append((current.clause, frame))
                continue
            else:
                children = [c for c in ast.iter_child_nodes(current) if isinstance(c, ast.expr)]
            for child in reversed(children):
                if child is not None and type(child) not in _LEAVES:
                    push((child, current))

    def _generators(self, generators) -> list:
        out: list = []
        for comp in generators:
            self.unaliasable.update(code_names(comp.target))
            out += [_ForClause(comp), comp.target, comp.iter] + list(comp.ifs)
        return out

    @staticmethod
    def _param_children(args: ast.arguments) -> list:
        """Parameters' annotations and defaults in LibCST's order: params, *args, keyword-only,
        **kwargs, then positional-only (each: annotation, then default)."""
        positional = list(args.posonlyargs) + list(args.args)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults))
        posonly, plain = pairs[: len(args.posonlyargs)], pairs[len(args.posonlyargs):]
        order = plain + ([(args.vararg, None)] if args.vararg else [])
        order += list(zip(args.kwonlyargs, args.kw_defaults))
        order += ([(args.kwarg, None)] if args.kwarg else []) + posonly
        out: list = []
        for arg, default in order:
            out += [arg.annotation, default]
        return [c for c in out if c is not None]

    # -- frames ---------------------------------------------------------------------------
    def _push(self, kind: str, node, name: str = "") -> Frame:
        frame = new_frame(kind, node, self.frame, name)
        self.frames.append(frame)
        self.frame = frame
        return frame

    def _pop(self, frame: Frame) -> None:
        self.frame = frame.parent  # type: ignore[assignment]

    def _try(self, node: ast.Try) -> None:
        scope = self.frame.scope
        before = dict(scope.imports)
        self._body(node.body)
        imported = {name for name, target in scope.imports.items() if before.get(name) != target}
        for handler in node.handlers:
            self._fallback.append(imported)
            if handler.name is not None:
                self._bind_name(self.frame.scope, handler.name)
            self._body(handler.body)
            self.expr(handler.type, handler)  # LibCST's fields: body, then type
            self._fallback.pop()
        self._body(node.orelse)
        self._body(node.finalbody)

    def _class(self, node: ast.ClassDef) -> None:
        for dec in node.decorator_list:
            self.expr(dec, node)
        for base in node.bases:
            if type(base) is ast.Starred:
                raise Refused("starred class base")
            self.expr(base, node)
        self._bind_name(self.frame.scope, node.name)
        frame = self._push("class", node, node.name)
        self.classes.setdefault(node.name, frame)
        self._body(node.body)
        self._pop(frame)

    def _function(self, node) -> None:
        for dec in node.decorator_list:
            self.expr(dec, node)
        for child in self._param_children(node.args):
            self.expr(child, node.args)
        scope = self.frame.scope
        self._bind_name(scope, node.name)
        frame = self._push("function", node, node.name)
        scope.functions.setdefault(node.name, frame)
        for arg in all_params(node.args):
            self._bind_name(frame, arg.arg)
        self._body(node.body)
        self._pop(frame)

    def _import(self, node) -> None:
        scope = self.frame.scope
        fallback = self._fallback[-1] if self._fallback else ()
        for bound, target in import_bindings(node):
            if not target.startswith("."):
                if scope.imports.get(bound, target) != target:
                    scope.alternatives.setdefault(bound, []).append(
                        target if bound in fallback else scope.imports[bound]
                    )
                if bound in fallback:
                    continue
                scope.imports[bound] = target

    def _bind_name(self, scope: Frame, name: str) -> None:
        scope.bindings.add(name)
        key = (id(scope), name)
        self.counts[key] = self.counts.get(key, 0) + 1

    def _bind(self, target) -> None:
        kind = type(target)
        if kind is ast.Name:
            self._bind_name(self.frame.scope, target.id)
        elif kind in (ast.Tuple, ast.List):
            for element in target.elts:
                self._bind(element)
        elif kind is ast.Starred:
            self._bind(target.value)


def code_names(node):
    """The names facts.tree's `_target_names` sees in an expression: LibCST holds an
    attribute's, a keyword's and a parameter's name as a Name node too."""
    for child in ast.walk(node):
        kind = type(child)
        if kind is ast.Name:
            yield child.id
        elif kind is ast.Attribute:
            yield child.attr
        elif kind is ast.keyword and child.arg is not None:
            yield child.arg
        elif kind is ast.arg:
            yield child.arg


def all_params(args: ast.arguments):
    yield from args.posonlyargs
    yield from args.args
    yield from args.kwonlyargs
    if args.vararg is not None:
        yield args.vararg
    if args.kwarg is not None:
        yield args.kwarg


def own_statements(body: List[ast.stmt], source_lines: List[str]):
    """facts.tree.own_statements over `ast`, in the same order: LibCST pushes a statement line
    (`a; b` is one) as one entry and a one-line suite (`if x: a; b`) as its small statements."""
    stack: list = [("block", body)]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            tag, value = node
            if tag == "line":
                yield from value
            else:
                stack.extend(_entries(value, source_lines))
            continue
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _is_compound(node):
            continue
        stack.append(("block", node.body))
        if type(node) is ast.If:
            if node.orelse:
                if len(node.orelse) == 1 and type(node.orelse[0]) is ast.If and _is_elif(node.orelse[0], source_lines):
                    stack.append(node.orelse[0])
                else:
                    stack.append(("block", node.orelse))
        elif getattr(node, "orelse", None):
            stack.append(("block", node.orelse))
        for handler in getattr(node, "handlers", ()):
            stack.append(("block", handler.body))
        if getattr(node, "finalbody", None):
            stack.append(("block", node.finalbody))


def _is_compound(node) -> bool:
    return isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith))


def _is_elif(node: ast.If, source_lines: List[str]) -> bool:
    return source_lines[node.lineno - 1][node.col_offset:].startswith("elif")


def _entries(body: List[ast.stmt], source_lines: List[str]) -> list:
    """A block's stack entries: statements sharing a line in an indented block are one line
    entry; in a suite on the header's line, each small statement is its own."""
    first = body[0]
    if source_lines[first.lineno - 1][: first.col_offset].strip():  # `if x: a; b`
        return [s if _is_compound(s) or isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                else ("line", [s]) for s in body]
    out: list = []
    for stmt in body:
        compound = _is_compound(stmt) or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if compound:
            out.append(stmt)
        elif out and type(out[-1]) is tuple and source_lines[stmt.lineno - 1][: stmt.col_offset].strip():
            out[-1][1].append(stmt)  # `a; b`: after the previous small statement on its line
        else:
            out.append(("line", [stmt]))
    return out
