"""Branch-exclusive local bindings for the class flow (flowfacts.py): a name that both arms of an
`if`/`else` (or `elif`) bind, read inside one arm, never holds what the other arm binds, as
neither arm runs after the other. yolov10's
cfg `entrypoint` binds `model = SAM(model)`, ..., `model = YOLO(model, task=task)` in sibling
`if/elif` arms; read flow-insensitively, `YOLO(model)` was handed the SAM instance too.

Such a read is written ("local", "model#3b") (flowvalues.Val): the If's number in the function
(pre-order, from 0) and the arm (a: body, b: orelse, an `elif` being the orelse's own If), one
pair per enclosing If that hides a binding of the name. Its FlowFunction.assigns entry is the
name's list less the values the hidden arms' assignments stored (`ArmLocals.settle`).

Kept flow-insensitive (the plain name): an If inside a `for`/`while` of the function (the other
arm ran on an earlier pass), a parameter, a `global`/`nonlocal` name, and bindings other than
plain assignments of a call (loop targets, `.append`, imports, aliases: never hidden; a call
makes the instances that matter, and the walk of the arms for reads is spared elsewhere)."""

from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import child_fields

# the values whose assignments an arm hides: calls (a constructor, a factory, a cast), which
# make what a sibling arm must not see; an alias (`model = self.model`) is left to the flow
_CST_VALUES = (cst.Call,)
_AST_VALUES = (ast.Call,)
_CST_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

Hidden = Dict[str, Tuple[str, Set[int]]]  # synthetic name -> (name, ids of the hidden targets)


class _Syntax:
    """The few questions the walk asks of one tree kind."""

    def body(self, node) -> list:
        raise NotImplementedError

    def statement(self, stmt) -> Tuple[str, list]:
        """("if", [body, orelse]) / ("loop", [blocks]) / ("scope", []) / ("other", [blocks])."""
        raise NotImplementedError

    def targets(self, stmts: list) -> List[Tuple[str, int]]:
        raise NotImplementedError

    def reads(self, stmts: list) -> List[Tuple[str, int]]:
        raise NotImplementedError

    def declared(self, node) -> Set[str]:
        """The function's parameters and `global`/`nonlocal` names."""
        raise NotImplementedError

    def _statements(self, stmts: list):
        """The statements of `stmts` and of their blocks, not of nested functions or classes."""
        stack = list(stmts)
        while stack:
            stmt = stack.pop()
            yield stmt
            for block in self.statement(stmt)[1]:
                stack.extend(block)


class _Cst(_Syntax):
    def body(self, node) -> list:
        body = node.body
        return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]

    def statement(self, stmt) -> Tuple[str, list]:
        if isinstance(stmt, cst.If):
            orelse = stmt.orelse
            if orelse is None:
                other: list = []
            elif isinstance(orelse, cst.If):
                other = [orelse]
            else:
                other = self.body(orelse)
            return "if", [self.body(stmt), other]
        if isinstance(stmt, (cst.For, cst.While)):
            return "loop", [self.body(stmt)] + ([self.body(stmt.orelse)] if stmt.orelse else [])
        if isinstance(stmt, _CST_SCOPES):
            return "scope", []
        if isinstance(stmt, cst.With):
            return "other", [self.body(stmt)]
        if isinstance(stmt, cst.Try):
            blocks = [self.body(stmt)] + [self.body(h) for h in stmt.handlers]
            blocks += [self.body(part) for part in (stmt.orelse, stmt.finalbody) if part is not None]
            return "other", blocks
        return "other", []

    def targets(self, stmts: list) -> List[Tuple[str, int]]:
        found: List[Tuple[str, int]] = []
        for stmt in self._statements(stmts):
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.Assign) and isinstance(small.value, _CST_VALUES):
                    for target in small.targets:
                        found.extend(_cst_names(target.target))
                elif isinstance(small, cst.AnnAssign) and isinstance(small.value, _CST_VALUES):
                    found.extend(_cst_names(small.target))
        return found

    def reads(self, stmts: list) -> List[Tuple[str, int]]:
        found: List[Tuple[str, int]] = []
        stack = list(stmts)
        while stack:
            node = stack.pop()
            if isinstance(node, _CST_SCOPES):
                continue
            if isinstance(node, cst.Name):
                found.append((node.value, id(node)))
                continue
            stack.extend(_cst_children(node))
        return found

    def declared(self, node) -> Set[str]:
        params = node.params
        names = {p.name.value for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params)}
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
        for stmt in self._statements(self.body(node)):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Global, cst.Nonlocal)):
                        names.update(n.name.value for n in small.names)
        return names


def _cst_names(target) -> List[Tuple[str, int]]:
    if isinstance(target, cst.Name):
        return [(target.value, id(target))]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [found for e in target.elements if not isinstance(e, cst.StarredElement)
                for found in _cst_names(e.value)]
    return []


def _cst_children(node) -> list:
    """The code nodes directly under `node` (syntax.iter_nodes' step, which cannot stop at a
    nested scope)."""
    found = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        for item in (value if type(value) in (list, tuple) else (value,)):
            if isinstance(item, cst.CSTNode):
                found.append(item)
    return found


class _Ast(_Syntax):
    def body(self, node) -> list:
        return list(node.body)

    def statement(self, stmt) -> Tuple[str, list]:
        kind = type(stmt)
        if kind is ast.If:
            return "if", [list(stmt.body), list(stmt.orelse)]
        if kind in (ast.For, ast.AsyncFor, ast.While):
            return "loop", [list(stmt.body)] + ([list(stmt.orelse)] if stmt.orelse else [])
        if kind in _AST_SCOPES:
            return "scope", []
        if kind in (ast.With, ast.AsyncWith):
            return "other", [list(stmt.body)]
        if kind is ast.Try or kind.__name__ == "TryStar":
            blocks = [list(stmt.body)] + [list(h.body) for h in stmt.handlers]
            blocks += [list(part) for part in (stmt.orelse, stmt.finalbody) if part]
            return "other", blocks
        return "other", []

    def targets(self, stmts: list) -> List[Tuple[str, int]]:
        found: List[Tuple[str, int]] = []
        for stmt in self._statements(stmts):
            kind = type(stmt)
            if kind is ast.Assign and isinstance(stmt.value, _AST_VALUES):
                for target in stmt.targets:
                    found.extend(_ast_names(target))
            elif kind is ast.AnnAssign and isinstance(stmt.value, _AST_VALUES):
                found.extend(_ast_names(stmt.target))
        return found

    def reads(self, stmts: list) -> List[Tuple[str, int]]:
        found: List[Tuple[str, int]] = []
        stack = list(stmts)
        while stack:
            node = stack.pop()
            if isinstance(node, _AST_SCOPES):
                continue
            if type(node) is ast.Name:
                found.append((node.id, id(node)))
                continue
            stack.extend(ast.iter_child_nodes(node))
        return found

    def declared(self, node) -> Set[str]:
        args = node.args
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        for stmt in self._statements(node.body):
            if type(stmt) in (ast.Global, ast.Nonlocal):
                names.update(stmt.names)
        return names


def _ast_names(target) -> List[Tuple[str, int]]:
    if type(target) is ast.Name:
        return [(target.id, id(target))]
    if type(target) in (ast.Tuple, ast.List):
        return [found for e in target.elts if type(e) is not ast.Starred for found in _ast_names(e)]
    return []


CST, AST = _Cst(), _Ast()


def arm_reads(function_node, syntax: _Syntax) -> Tuple[Dict[int, str], Hidden]:
    """(id of a name read -> its synthetic name, synthetic name -> (name, hidden target ids))
    for one function's body."""
    declared = None
    exclusions: Dict[int, List[Tuple[str, str, Set[int]]]] = {}  # read id -> [(pair, name, targets)]
    number = 0

    def walk(stmts: list, in_loop: bool) -> None:
        nonlocal number
        for stmt in stmts:
            kind, blocks = syntax.statement(stmt)
            if kind == "if":
                mine, number = number, number + 1
                if not in_loop and blocks[1]:  # an `if` with no `else` hides nothing
                    _hide(mine, blocks)
            for block in blocks:
                walk(block, in_loop or kind == "loop")

    def _hide(mine: int, arms: list) -> None:
        nonlocal declared
        bound = [syntax.targets(arm) for arm in arms]
        both = {name for name, _ in bound[0]} & {name for name, _ in bound[1]}
        if not both:
            return
        if declared is None:
            declared = syntax.declared(function_node)
        for side, arm in enumerate(arms):
            other: Dict[str, Set[int]] = {}
            for name, target in bound[1 - side]:
                if name in both and name not in declared:
                    other.setdefault(name, set()).add(target)
            if not other:
                continue
            pair = f"{mine}{'ab'[side]}"
            for name, read in syntax.reads(arm):
                if name in other:
                    exclusions.setdefault(read, []).append((pair, name, other[name]))

    walk(syntax.body(function_node), False)
    walk = _hide = None  # type: ignore[assignment]  # the closures hold each other: no cycle left to the collector
    reads: Dict[int, str] = {}
    hidden: Hidden = {}
    for read, found in exclusions.items():
        name = found[0][1]
        found.sort()
        synthetic = name + "#" + ",".join(pair for pair, _, _ in found)
        reads[read] = synthetic
        if synthetic not in hidden:
            hidden[synthetic] = (name, set().union(*(targets for _, _, targets in found)))
    return reads, hidden


class ArmLocals:
    """One file's branch-exclusive reads, asked per function as the collector reads names;
    `stored` records where each assignment's value went in its name's list."""

    def __init__(self, syntax: _Syntax) -> None:
        self.syntax = syntax
        self._functions: Dict[int, Tuple[Dict[int, str], Hidden]] = {}
        self._frames: Dict[int, Tuple[Dict[int, str], Hidden]] = {}  # id(frame) -> its function's
        self._stored: Dict[int, int] = {}  # target id -> index in assigns[name]
        self._used: Dict[str, Tuple[object, str]] = {}  # (function key, synthetic) -> frame key

    def read(self, name_node, frame, key_of) -> str:
        """The synthetic name of a read, or "" when the read sees every binding."""
        found = self._frames.get(id(frame))
        if found is None:
            function = frame.function
            if function is None:
                return ""
            found = self._functions.get(id(function))
            if found is None:
                found = self._functions[id(function)] = arm_reads(function.node, self.syntax)
            self._frames[id(frame)] = found
        if not found[0]:
            return ""
        synthetic = found[0].get(id(name_node), "")
        if synthetic:
            self._used.setdefault((key_of(frame), synthetic), found[1][synthetic])
        return synthetic

    def stored(self, target, values: list) -> None:
        self._stored[id(target)] = len(values) - 1

    def settle(self, functions) -> None:
        """Fills the synthetic names' assigns: the name's values less the hidden arms'."""
        for (key, synthetic), (name, targets) in sorted(self._used.items()):
            function = functions.get(key)
            if function is None:
                continue
            dropped = {self._stored[t] for t in targets if t in self._stored}
            function.assigns[synthetic] = [
                v for i, v in enumerate(function.assigns.get(name, ())) if i not in dropped
            ]
