"""Line numbers of chosen nodes: the line where each node's code generation starts (for a
statement, its first leading comment or blank line; for an expression, its first opening
parenthesis).

`node_lines(module, nodes)` generates the code of the whole module once. With the module's
source text and an anchor per node (the statement that holds it, which the file's walk
knows), `node_lines(module, nodes, source, anchors)` gives the same lines for a fraction of
that: Python's own parser (in C) gives where each statement starts, a node in a one-line
statement is on that line, a parameter of a multi-line `def` is on its `ast.arg`'s line, and
only the multi-line statements that hold another wanted node are generated, each up to its
last wanted node. Anything it cannot place (a node without an
anchor, a tree its statements do not match) falls back to generating the module's code."""

from __future__ import annotations

import ast
import re
import warnings
from typing import Dict, List, Mapping, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState

from amplint.analysis.parsing import python_tree


class _Done(Exception):
    """Every wanted node of a code generation has its line: stop generating."""


class _LineState(CodegenState):
    """Code generation that notes the line where each wanted node starts (much cheaper than
    LibCST's PositionProvider, which records a range for every node). `line`: the line the
    generated code starts on; with `stop`, it ends once every wanted node is seen."""

    __slots__ = ("wanted", "lines", "_done", "_line", "_left")

    def __init__(self, module: cst.Module, wanted, line: int = 1, stop: bool = False) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.lines: Dict[int, int] = {}
        self._done = 0
        self._line = line
        self._left = len(wanted) if stop else -1

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.lines:
            tokens = self.tokens
            if self._done < len(tokens):
                self._line += "".join(tokens[self._done:]).count("\n")
                self._done = len(tokens)
            self.lines[key] = self._line
            self._left -= 1
            if self._left == 0:
                raise _Done


def _generated_lines(module: cst.Module, root: cst.CSTNode, wanted, line: int = 1,
                     stop: bool = False) -> Dict[int, int]:
    state = _LineState(module, wanted, line, stop)
    try:
        root._codegen(state)
    except _Done:
        pass
    return state.lines


def node_lines(module: cst.Module, nodes, source: Optional[str] = None,
               anchors: Optional[Mapping[int, cst.CSTNode]] = None) -> Dict[int, int]:
    """id(node) -> the line where it starts, for the nodes of `module` among `nodes`.
    `source`: the text `module` was parsed from; `anchors`: id(node) -> the statement (of
    any depth) that holds it."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    if source is not None and anchors is not None:
        found = _anchored_lines(module, nodes, wanted, source, anchors)
        if found is not None:
            return found
    return _generated_lines(module, module, wanted, stop=True)  # nothing to note after the last


def call_anchors(calls, anchors: Optional[Dict[int, cst.CSTNode]] = None) -> Dict[int, cst.CSTNode]:
    """id(call) -> its anchor for `node_lines`, for a FileFacts tree's call sites: a call's
    simple statement line, else the compound statement it is in (which node_lines checks),
    else the one-line function it returns from (`def f(): return g()`)."""
    anchors = {} if anchors is None else anchors
    for site in calls:
        if site.line_stmt is not None:
            anchors[id(site.node)] = site.line_stmt
        elif site.top_stmt is not None and type(site.top_stmt) is not cst.SimpleStatementLine:
            anchors[id(site.node)] = site.top_stmt
        elif isinstance(site.frame.node, cst.BaseCompoundStatement):
            anchors[id(site.node)] = site.frame.node
    return anchors


def _anchored_lines(module, nodes, wanted, source: str, anchors) -> Optional[Dict[int, int]]:
    paired = _paired_statements(module, source)
    if paired is None:
        return None
    starts, twins, text_lines = paired
    groups: Dict[int, Tuple[cst.CSTNode, List[cst.CSTNode]]] = {}
    loose: List[cst.CSTNode] = []
    for node in nodes:
        anchor = anchors.get(id(node))
        if anchor is None or id(anchor) not in starts:
            loose.append(node)
        else:
            groups.setdefault(id(anchor), (anchor, []))[1].append(node)
    lines: Dict[int, int] = {}
    for key, (anchor, group) in groups.items():
        start, single = starts[key]
        if single:  # a one-line statement: everything in it but its leading lines is there
            for node in group:
                lines[id(node)] = start if node is anchor else single
            continue
        if type(anchor) is cst.FunctionDef:
            lines.update(_def_lines(anchor, group, twins[key], text_lines))
            group = [node for node in group if id(node) not in lines]
            if not group:
                continue
        ids = {id(node) for node in group}
        found = _generated_lines(module, anchor, ids, start, stop=True)
        lines.update(found)
        loose.extend(node for node in group if id(node) not in found)  # not under its anchor
    loose = [node for node in loose if id(node) not in lines]
    if loose:
        rest = {id(node) for node in loose}
        lines.update(_generated_lines(module, module, rest, 1, stop=True))
    return {key: line for key, line in lines.items() if key in wanted}


# -- where statements start, from Python's parser ---------------------------------------------

class _Mismatch(Exception):
    """The two parsers' statements do not pair up as expected: use code generation."""


_AST_OF = {
    cst.If: (ast.If,), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith), cst.Try: (ast.Try,),
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,),
}
_KEYWORDS = {
    cst.If: ("if", "elif"), cst.For: ("for", "async"), cst.While: ("while",),
    cst.With: ("with", "async"), cst.Try: ("try",), cst.FunctionDef: ("def", "async"),
    cst.ClassDef: ("class",),
}
for _cst_name, _ast_name, _words in (("TryStar", "TryStar", ("try",)), ("Match", "Match", ("match",))):
    if hasattr(cst, _cst_name) and hasattr(ast, _ast_name):
        _AST_OF[getattr(cst, _cst_name)] = (getattr(ast, _ast_name),)
        _KEYWORDS[getattr(cst, _cst_name)] = _words
_COMPOUND_AST = tuple(kind for kinds in _AST_OF.values() for kind in kinds)


def _def_lines(anchor: cst.FunctionDef, group, twin, text_lines: List[str]) -> Dict[int, int]:
    """The lines of the name and parameters in `group` of a `def` whose `ast` twin is `twin`.
    The name is on the `def` line when that line reads `def <name>`. A parameter's code
    generation starts at its star or name, and its `ast.arg` starts at its name; a star on
    another line than the name (`*\\n args`) is left to code generation."""
    lines: Dict[int, int] = {}
    if any(node is anchor.name for node in group):
        head = text_lines[twin.lineno - 1].lstrip()
        if re.match(r"(?:async\s+)?def\s+" + re.escape(anchor.name.value) + r"\b", head):
            lines[id(anchor.name)] = twin.lineno
    args = twin.args
    by_name = {arg.arg: arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    for arg in (args.vararg, args.kwarg):
        if arg is not None:
            by_name[arg.arg] = arg
    for node in group:
        if type(node) is not cst.Param:
            continue
        arg = by_name.get(node.name.value)
        if arg is None:
            continue
        star = node.star
        if isinstance(star, str) and star:
            before = text_lines[arg.lineno - 1].encode("utf-8")[:arg.col_offset]
            if not before.rstrip().endswith(star.encode()):
                continue
        lines[id(node)] = arg.lineno
    return lines


def statement_starts(module: cst.Module, source: str) -> Optional[Dict[int, Tuple[int, int]]]:
    """id(statement) -> (the line its code generation starts on, the line of a simple
    statement line that fits on one line, else 0), for every statement of `module`; None
    when Python's parser does not read `source` or its statements do not pair up."""
    paired = _paired_statements(module, source)
    return None if paired is None else paired[0]


_last_paired: tuple = (None, None, None)  # (module, source, its pairing): a file's summary and
# its protocol summary ask one after the other


def _paired_statements(module: cst.Module, source: str):
    """(`statement_starts`, id(compound statement) -> its `ast` twin, the source's lines), or
    None."""
    global _last_paired
    last = _last_paired
    if last[0] is module and last[1] is source:
        return last[2]
    paired = _pair_statements(module, source)
    _last_paired = (module, source, paired)
    return paired


def _pair_statements(module: cst.Module, source: str):
    if source.count("\r") != source.count("\r\n"):
        return None  # a lone CR: Python counts a line where the code generation does not
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = python_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    starts: Dict[int, Tuple[int, int]] = {}
    twins: Dict[int, ast.AST] = {}
    lines = source.split("\n")
    try:
        _block(module.body, tree.body, (starts, twins), lines)
    except (_Mismatch, IndexError, AttributeError):
        return None
    return starts, twins, lines


def _block(statements, nodes: list, found, lines: List[str]) -> None:
    starts = found[0]
    i = 0
    for stmt in statements:
        if type(stmt) is cst.SimpleStatementLine:
            count = len(stmt.body)
            group = nodes[i:i + count]
            i += count
            if len(group) != count or any(isinstance(node, _COMPOUND_AST) for node in group):
                raise _Mismatch
            first, last = group[0].lineno, group[-1].end_lineno
            start = first - len(stmt.leading_lines)
            _check_leading(lines, start, first)
            starts[id(stmt)] = (start, first if first == last else 0)
        else:
            if i >= len(nodes):
                raise _Mismatch
            _compound(stmt, nodes[i], found, lines)
            i += 1
    if i != len(nodes):
        raise _Mismatch


def _compound(stmt, node, found, lines: List[str]) -> None:
    starts, twins = found
    kind = type(stmt)
    if not isinstance(node, _AST_OF.get(kind, ())):
        raise _Mismatch
    decorators = getattr(stmt, "decorators", ())
    if decorators:
        if len(node.decorator_list) != len(decorators):
            raise _Mismatch
        head = node.decorator_list[0].lineno
        if not lines[head - 1].lstrip().startswith("@"):
            raise _Mismatch
        start = head - len(decorators[0].leading_lines) - len(stmt.leading_lines)
    else:
        head = node.lineno
        if not lines[head - 1].lstrip().startswith(_KEYWORDS[kind]):
            raise _Mismatch
        start = head - len(stmt.leading_lines)
    _check_leading(lines, start, head)
    starts[id(stmt)] = (start, 0)
    twins[id(stmt)] = node
    if kind is getattr(cst, "Match", None):
        if len(stmt.cases) != len(node.cases):
            raise _Mismatch
        for case, ast_case in zip(stmt.cases, node.cases):
            _body(case.body, ast_case.body, found, lines)
        return
    _body(stmt.body, node.body, found, lines)
    for handler, ast_handler in _pairs(getattr(stmt, "handlers", ()), getattr(node, "handlers", ())):
        _body(handler.body, ast_handler.body, found, lines)
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        if len(node.orelse) != 1:
            raise _Mismatch
        _compound(orelse, node.orelse[0], found, lines)
    elif orelse is not None:
        _body(orelse.body, node.orelse, found, lines)
    elif getattr(node, "orelse", None):
        raise _Mismatch
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        _body(final.body, node.finalbody, found, lines)


def _pairs(ours, theirs):
    if len(ours) != len(theirs):
        raise _Mismatch
    return zip(ours, theirs)


def _body(block, nodes: list, found, lines: List[str]) -> None:
    """A compound statement's body: an indented block pairs statement by statement; a body on
    the header's line (`if x: return y`) holds no statement line of its own."""
    if isinstance(block, cst.IndentedBlock):
        _block(block.body, nodes, found, lines)


def _check_leading(lines: List[str], start: int, head: int) -> None:
    """The lines a statement's leading lines take must be blank or comments."""
    if start < 1:
        raise _Mismatch
    for number in range(start, head):
        text = lines[number - 1].strip()
        if text and not text.startswith("#"):
            raise _Mismatch
