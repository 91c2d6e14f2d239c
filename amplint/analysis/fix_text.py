"""A chosen set of fixes written into a module's text: node replacements applied together,
`import torch` added where a fix needs it, and each unchanged line's own ending kept."""

from __future__ import annotations

import difflib
from typing import Dict, List, Sequence

import libcst as cst

from amplint.analysis.diagnostics import Fix


class _Replacer(cst.CSTTransformer):
    def __init__(self, edits: Dict[cst.CSTNode, object]) -> None:
        super().__init__()
        self.edits = {id(node): new for node, new in edits.items()}

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        new = self.edits.get(id(original_node))
        if new is None:
            return updated_node
        return new


def _binds_torch(module: cst.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None and _root(alias.name) == "torch":
                            return True
    return False


def _root(expr: cst.BaseExpression) -> str:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def add_import_torch(module: cst.Module) -> cst.Module:
    """`import torch` after the docstring and `__future__` imports, among the imports if any."""
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    new = cst.parse_statement("import torch\n")
    for position in range(index, len(body)):
        if _is_import(body[position]):
            index = position
            break
    if index < len(body) and _is_import(body[index]):
        # head of the import block: comments above the block stay above it
        follower = body[index]
        new = new.with_changes(leading_lines=follower.leading_lines)
        body[index] = follower.with_changes(leading_lines=())
    elif index < len(body) and index > 0:
        new = new.with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(index, new)
    return module.with_changes(body=body)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_future_import(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and isinstance(stmt.body[0], cst.ImportFrom)
        and isinstance(stmt.body[0].module, cst.Name)
        and stmt.body[0].module.value == "__future__"
    )


def _is_import(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(
        stmt.body[0], (cst.Import, cst.ImportFrom)
    )


def apply_fixes(module: cst.Module, fixes: Sequence[Fix]) -> str:
    edits: Dict[cst.CSTNode, object] = {}
    for fix in fixes:
        edits.update(fix.edits)
    new_module = module.visit(_Replacer(edits))
    if any("torch" in fix.imports for fix in fixes) and not _binds_torch(new_module):
        new_module = add_import_torch(new_module)
    return new_module.code


def mixed_newlines(source: str) -> bool:
    crlf = source.count("\r\n")
    return 0 < crlf < source.count("\n")


def restore_newlines(original: str, fixed: str) -> str:
    """`fixed` (made from `original` with every line ending turned into "\n") with each
    unchanged line's own ending back; new lines get the file's most common ending."""
    old_lines = original.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in old_lines]
    new_lines = fixed.split("\n")
    ends_with_newline = fixed.endswith("\n")
    if ends_with_newline:
        new_lines.pop()
    dominant = "\r\n" if original.count("\r\n") * 2 >= original.count("\n") else "\n"
    out: List[str] = []
    matcher = difflib.SequenceMatcher(None, bare, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(old_lines[i1:i2])
        else:
            out.extend(line + dominant for line in new_lines[j1:j2])
    text = "".join(out)
    if not ends_with_newline and text.endswith(("\r\n", "\n")):
        text = text[: -2 if text.endswith("\r\n") else -1]
    elif ends_with_newline and not text.endswith("\n"):
        text += dominant
    return text
