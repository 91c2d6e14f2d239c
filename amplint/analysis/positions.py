"""Node -> CodeRange, the ranges of LibCST's `PositionProvider`, at about half its cost
(issue 34: the position pass was a quarter of the time on a large file).

LibCST's own state records a position by a generator-based context manager, splits every
token with a regular expression and builds two frozen dataclasses per node while it walks.
This state drives the same code generation (`Module._codegen`, so every node's own
`_codegen_impl` decides what is emitted and which ranges are recorded, in the same order with
the same overrides), keeps each range as a plain tuple and builds the CodeRange only for the
nodes asked for (a file's findings and fixes: a few of its nodes)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst
from libcst._position import CodePosition, CodeRange

from amplint.analysis.facts.syntax import code_children, iter_nodes
from amplint.analysis.parsing import python_tree

_NEWLINE = re.compile(r"\r\n?|\n")  # LibCST's NEWLINE_RE

Span = Tuple[int, int, int, int]


class _State:
    """Duck-typed `CodegenState` (the attributes and methods LibCST's nodes use)."""

    __slots__ = ("default_indent", "default_newline", "provider", "indent_tokens", "tokens",
                 "line", "column", "_stack", "_open", "spans")

    def __init__(self, default_indent: str, default_newline: str) -> None:
        self.default_indent = default_indent
        self.default_newline = default_newline
        self.provider = None
        self.indent_tokens: List[str] = []
        self.tokens: List[str] = []
        self.line = 1
        self.column = 0
        self._stack: List[Tuple[int, int]] = []
        self._open: List[tuple] = []
        self.spans: Dict[int, Span] = {}  # id(node) -> span

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)

    def decrease_indent(self) -> None:
        self.indent_tokens.pop()

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._stack.pop()
        key = id(node)  # the tree outlives the table; a node's own __hash__ is Python code
        if key not in self.spans:  # a syntactic range recorded inside wins
            self.spans[key] = (line, column, self.line, self.column)

    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_State":
        self._open.append((node, start_node, end_node, self.line, self.column))
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        node, start_node, end_node, line, column = self._open.pop()
        spans = self.spans
        if start_node is not None:
            line, column = spans[id(start_node)][:2]
        if end_node is not None:
            end_line, end_column = spans[id(end_node)][2:]
        else:
            end_line, end_column = self.line, self.column
        spans[id(node)] = (line, column, end_line, end_column)


class Positions:
    """Read-only mapping node -> CodeRange over the recorded spans; valid while the tree
    lives (the spans are keyed by the nodes' ids)."""

    __slots__ = ("_spans", "_module")

    def __init__(self, spans: Dict[int, Span], module: cst.Module) -> None:
        self._spans = spans
        self._module = module  # keeps the ids valid

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        line, column, end_line, end_column = self._spans[id(node)]
        return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))

    def span(self, node: cst.CSTNode) -> Span:
        """(line, column, end line, end column) without building a CodeRange."""
        return self._spans[id(node)]

    def __contains__(self, node: object) -> bool:
        return id(node) in self._spans

    def __len__(self) -> int:
        return len(self._spans)

    def get(self, node: cst.CSTNode, default=None):
        return self[node] if id(node) in self._spans else default


def node_positions(module: cst.Module) -> Positions:
    """The range of every node of `module`, as LibCST's `PositionProvider` gives it."""
    state = _State(module.default_indent, module.default_newline)
    module._codegen(state)  # type: ignore[arg-type]
    return Positions(state.spans, module)


def positions_of(module: cst.Module, source: str, wanted: Iterable[cst.CSTNode],
                 outlined: Optional[Tuple[Outline, ...]] = None) -> Positions:
    """The ranges of at least the `wanted` nodes (and of every node of the statements that
    hold them), the same as `node_positions` gives them, for the cost of those statements'
    code generation: a class, function, `with` or loop whose own header holds none of them
    is not generated, only the statements of its body that hold them (issue 34: a large file
    has findings in most functions, in few of their statements). Each statement is generated
    from its first line, found with Python's `ast` and checked against the text (`source` is
    the text `module` was parsed from). Anything unexpected (a node not found, a statement
    whose text is not where `ast` puts it) falls back to the whole module. `outlined`: the
    `outline` of the source's statements when known (a part of a large file: from the file's
    one `ast` parse), else the source is parsed here."""
    wanted_ids = {id(node) for node in wanted}
    plan = _Plan(wanted_ids, module.default_indent)
    body = module.body
    holders = 0
    for index, statement in enumerate(body):
        if not plan.remaining:
            break
        if plan.add(statement, (index,), ()):
            holders += 1
    if plan.remaining:
        return node_positions(module)
    # Python's parse costs about a quarter of the whole pass: worth it when at most half
    # the top-level statements hold the nodes, or when the statements to generate are at
    # most half of those read
    if holders > len(body) // 2 and 2 * plan.planned > plan.read:
        return node_positions(module)
    try:
        found = _statement_spans(module, source, plan.statements, outlined)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = None
    if found is not None and any(key not in found for key in wanted_ids):
        found = None
    return node_positions(module) if found is None else Positions(found, module)


# statements whose body alone may be generated: those with one indented body and no other
# block (an `if` with `else`, a `try`, a loop with `else` are generated whole)
_DESCEND = (cst.ClassDef, cst.FunctionDef, cst.With, cst.For, cst.While)
_AST_KIND = {
    cst.ClassDef: (ast.ClassDef,), cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.With: (ast.With, ast.AsyncWith), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,),
}
_AST_DESCEND = tuple(kind for kinds in _AST_KIND.values() for kind in kinds)

# What placing a statement by its line needs of Python's `ast`: its kind, its line, its first
# line (its decorators' when it has some) and, for a block positions_of may descend into, the
# outlines of its body's statements (else None)
Outline = Tuple[type, int, int, Optional[tuple]]


def outline(statements: Iterable[ast.stmt], lines: Optional[Dict[int, int]] = None) -> Tuple[Outline, ...]:
    """The outlines of `ast` statements; with `lines`, their line numbers mapped through it
    (the file's line -> a part's line: a large file's parts are placed by its one parse)."""
    result = []
    for node in statements:
        line = node.lineno
        decorators = getattr(node, "decorator_list", None)
        first = min([line] + [d.lineno for d in decorators]) if decorators else line
        body = outline(node.body, lines) if isinstance(node, _AST_DESCEND) else None
        if lines is not None:
            line, first = lines[line], lines[first]
        result.append((type(node), line, first, body))
    return tuple(result)


class _Plan:
    """The statements to generate: (path of body indexes from the module, statement, the
    indentation tokens around it). Counts the nodes read and the nodes to generate."""

    def __init__(self, wanted_ids: set, default_indent: str) -> None:
        self.remaining = set(wanted_ids)
        self.default_indent = default_indent
        self.statements: List[Tuple[Tuple[int, ...], cst.CSTNode, Tuple[str, ...]]] = []
        self.read = 0
        self.planned = 0

    def _holds(self, roots) -> Tuple[bool, int]:
        """Whether the nodes under `roots` hold wanted ones (found ones leave `remaining`)."""
        remaining = self.remaining
        hit = False
        count = 0
        for root in roots:
            for node in iter_nodes(root):
                count += 1
                key = id(node)
                if key in remaining:
                    remaining.discard(key)
                    hit = True
        self.read += count
        return hit, count

    def add(self, statement: cst.CSTNode, path: Tuple[int, ...], indents: Tuple[str, ...]) -> bool:
        """Plan `statement` (its body's statements only, where it can); True if it holds a
        wanted node."""
        block = getattr(statement, "body", None)
        own = False
        if type(statement) in _DESCEND and type(block) is cst.IndentedBlock and getattr(
                statement, "orelse", None) is None and block.body and id(
                statement) not in self.remaining and id(block) not in self.remaining:
            header = [child for child in code_children(statement) if child is not block]
            header.extend(child for child in code_children(block)
                          if not isinstance(child, cst.BaseStatement))
            own = self._holds(header)[0]
            if not own:
                indent = self.default_indent if block.indent is None else block.indent
                found = False
                for index, child in enumerate(block.body):
                    if not self.remaining:
                        break
                    if self.add(child, path + (index,), indents + (indent,)):
                        found = True
                return found
        hit, count = self._holds([statement])
        if hit or own:
            self.statements.append((path, statement, indents))
            self.planned += count
        return hit or own


def _first_ast(statements) -> List[int]:
    """Index of each LibCST statement's first `ast` statement (a line `a; b` is two)."""
    first: List[int] = []
    count = 0
    for statement in statements:
        first.append(count)
        count += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    first.append(count)  # the total
    return first


def _statement_spans(module: cst.Module, source: str, planned, outlined=None):
    top = outline(python_tree(source).body) if outlined is None else outlined
    firsts: Dict[int, List[int]] = {}  # id(LibCST body list) -> _first_ast of it
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]  # offset of each line
    spans: Dict[int, Span] = {}
    last = len(module.body) - 1
    for path, statement, indents in planned:
        statements, nodes = module.body, top
        anchor: Outline = (ast.stmt, 0, 0, None)
        for depth, index in enumerate(path):
            first = firsts.get(id(statements))
            if first is None:
                first = firsts[id(statements)] = _first_ast(statements)
            if first[-1] != len(nodes):
                return None
            anchor = nodes[first[index]]
            if depth < len(path) - 1:
                holder = statements[index]
                if anchor[0] not in _AST_KIND.get(type(holder), ()) or anchor[3] is None:
                    return None
                statements, nodes = holder.body.body, anchor[3]
        line = anchor[1]
        lead = len(statement.leading_lines)
        decorators = getattr(statement, "decorators", ())
        if decorators:
            line = anchor[2]
            lead += len(decorators[0].leading_lines)
        line -= lead
        if line < 1 or line > len(starts):
            return None
        state = _State(module.default_indent, module.default_newline)
        state.indent_tokens.extend(indents)
        state.line = line
        statement._codegen(state)  # type: ignore[arg-type]
        text = "".join(state.tokens)
        offset = starts[line - 1]
        if source[offset:offset + len(text)] != text:
            # the file's last line may have no newline (LibCST drops the token at the end)
            if not (len(path) == 1 and path[0] == last and not module.footer
                    and not module.has_trailing_newline and state.tokens
                    and text[: -len(state.tokens[-1])] == source[offset:]):
                return None
        spans.update(state.spans)
    return spans
