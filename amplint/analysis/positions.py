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

from amplint.analysis.facts.syntax import code_children

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


def positions_of(module: cst.Module, source: str, wanted: Iterable[cst.CSTNode]) -> Positions:
    """The ranges of at least the `wanted` nodes (and of every node of the top-level
    statements that hold them), the same as `node_positions` gives them, for the cost of those
    statements' code generation: each such statement is generated from its first line, found
    with Python's `ast` and checked against the text (`source` is the text `module` was
    parsed from). Anything unexpected (a node not found, a statement whose text is not where
    `ast` puts it) falls back to the whole module."""
    wanted_ids = {id(node) for node in wanted}
    body = module.body
    # Python's parse costs about a quarter of the whole pass: worth it when at most half
    # the statements hold findings
    holders = _holders(body, wanted_ids, len(body) // 2)
    if holders is None:
        return node_positions(module)
    try:
        found = _statement_spans(module, source, holders)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = None
    return node_positions(module) if found is None else Positions(found, module)


def _holders(body, wanted_ids, most: int) -> Optional[List[int]]:
    """Indexes of the top-level statements holding the wanted nodes; None if one is not
    found, or if more than `most` statements hold them."""
    remaining = set(wanted_ids)
    holders: List[int] = []
    for index, statement in enumerate(body):
        if not remaining:
            break
        hit = False
        stack = [statement]
        while stack:
            node = stack.pop()
            key = id(node)
            if key in remaining:
                remaining.discard(key)
                hit = True
            stack.extend(code_children(node))
        if hit:
            holders.append(index)
            if len(holders) > most:
                return None
    return None if remaining else holders


def _statement_spans(module: cst.Module, source: str, holders: List[int]):
    tree = ast.parse(source)
    first: List[int] = []  # index of each LibCST statement's first `ast` statement
    count = 0
    for statement in module.body:
        first.append(count)
        count += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    if count != len(tree.body):
        return None
    starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]  # offset of each line
    spans: Dict[int, Span] = {}
    last = len(module.body) - 1
    for index in holders:
        statement = module.body[index]
        anchor = tree.body[first[index]]
        line = anchor.lineno
        lead = len(statement.leading_lines)
        decorators = getattr(statement, "decorators", ())
        if decorators:
            line = min([line] + [d.lineno for d in getattr(anchor, "decorator_list", ())])
            lead += len(decorators[0].leading_lines)
        line -= lead
        if line < 1 or line > len(starts):
            return None
        state = _State(module.default_indent, module.default_newline)
        state.line = line
        statement._codegen(state)  # type: ignore[arg-type]
        text = "".join(state.tokens)
        offset = starts[line - 1]
        if source[offset:offset + len(text)] != text:
            # the file's last line may have no newline (LibCST drops the token at the end)
            if not (index == last and not module.footer and not module.has_trailing_newline
                    and state.tokens and text[: -len(state.tokens[-1])] == source[offset:]):
                return None
        spans.update(state.spans)
    return spans
