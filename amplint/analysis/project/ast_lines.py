"""Where LibCST's code generation puts a node, from `ast` positions and the text (for the
summaries of ast_summary.py): a call's line is that of its first own opening parenthesis,
which `ast` does not record; the parentheses around it are read from the text, and whatever
cannot be told apart for sure (an f-string, a string left open) is refused."""

from __future__ import annotations

import ast
from typing import List

from amplint.analysis.project.ast_tree import Refused, call_args, dotted
from amplint.analysis.project.ast_values import string_count


class SourcePositions:
    """Needs `self.lines` (the text's lines), `self.tree` (the AstCollector) and `self.sites`
    (id of a call node -> its CallSite)."""

    def _col(self, row: int, col: int) -> int:
        """A character column from `ast`'s UTF-8 byte offset (row: 0-based)."""
        text = self.lines[row]
        return col if text.isascii() else len(text.encode("utf-8")[:col].decode("utf-8", "replace"))

    def segment(self, node) -> str:
        rows = range(node.lineno - 1, node.end_lineno)
        start, end = self._col(rows[0], node.col_offset), self._col(rows[-1], node.end_col_offset)
        if len(rows) == 1:
            return self.lines[rows[0]][start:end]
        parts = [self.lines[rows[0]][start:]] + [self.lines[r] for r in rows[1:-1]] + [self.lines[rows[-1]][:end]]
        return "\n".join(parts)

    def one_string(self, node) -> bool:
        return string_count(self.segment(node)) == 1

    def annotation_text(self, node) -> str:
        """What LibCST generates for a parameter's annotation: its source, on one line and not
        in parentheses of its own (else refused)."""
        row = node.lineno - 1
        if node.end_lineno != node.lineno or not self.lines[row][: self._col(row, node.col_offset)].rstrip().endswith(":"):
            raise Refused("annotation on several lines or in parentheses")
        return self.segment(node)

    def subscript_elements(self, expr: ast.Subscript) -> list:
        index = expr.slice
        if type(index) is ast.Tuple and not self._starts_with_paren(index):
            if any(type(e) is ast.Starred for e in index.elts):
                raise Refused("starred subscript")
            return list(index.elts)
        return [index]

    def _starts_with_paren(self, node) -> bool:
        row = node.lineno - 1
        return self.lines[row][self._col(row, node.col_offset):].startswith("(")

    def line(self, node) -> int:
        """The line LibCST's code generation gives `node` (a call: its first own opening
        parenthesis; a parameter: its name). A call's is remembered on its CallSite."""
        if type(node) is ast.arg:
            return node.lineno
        site = self.sites.get(id(node))
        if site is not None and site.line:
            return site.line
        found = self._call_line(node, site)
        if site is not None:
            site.line = found
        return found

    def _call_line(self, node, site) -> int:
        row, col = node.lineno - 1, self._col(node.lineno - 1, node.col_offset)
        name = site.dotted if site is not None else dotted(node.func)
        if name and not self.lines[row].startswith(name[0], col):
            raise Refused("a call's position does not point at its name (f-string)")
        opens = self._opens(row, col)
        if not opens or opens[0] == row:
            return node.lineno
        if site is None:
            raise Refused("call not walked")
        parent = site.parent
        if type(parent) in (ast.FormattedValue, ast.JoinedStr):
            raise Refused("a multi-line parenthesised call in an f-string")
        syntactic = 0
        if type(parent) in (ast.With, ast.AsyncWith):
            syntactic = int(parent.items[0].context_expr is node and self._with_parens(parent))
        elif type(parent) is ast.Call and parent.func is not node and call_args(parent)[0][2] is node:
            syntactic = 1
        elif type(parent) is ast.ClassDef and parent.bases and parent.bases[0] is node:
            syntactic = 1
        elif type(parent) is ast.GeneratorExp and parent.elt is node:
            syntactic = 1
        elif type(parent) is ast.Tuple and parent.elts and parent.elts[0] is node and self._starts_with_paren(parent):
            syntactic = 1
        end_row = node.end_lineno - 1
        own = min(len(opens) - syntactic, self._closes(end_row, self._col(end_row, node.end_col_offset)))
        if own <= 0:
            return node.lineno
        return opens[len(opens) - own] + 1

    def _opens(self, row: int, col: int) -> List[int]:
        """The rows of the '(' directly before (row, col), left to right."""
        found: List[int] = []
        text = self.lines[row][:col]
        while True:
            stripped = text.rstrip(" \t")
            if stripped.endswith("("):
                found.append(row)
                text = stripped[:-1]
                continue
            if stripped:
                break
            row -= 1  # nothing left on this line: go on with the one above
            while row >= 0 and (not self.lines[row].strip() or self.lines[row].lstrip().startswith("#")):
                row -= 1
            if row < 0:
                break
            text = self.lines[row]
            if "#" in text:
                text = _without_comment(text)
            text = text.rstrip(" \t")
            if text.endswith("\\"):
                text = text[:-1]
        return list(reversed(found))

    def _with_parens(self, node) -> bool:
        """`with (a(), b()):`: LibCST's With holds the parentheses (its grammar's first choice:
        '(' items ')' ':'), not the first item; `with (a()) as b:` is a parenthesised item."""
        row = node.lineno - 1
        head = self.lines[row][self._col(row, node.col_offset):]
        head = head[len("async"):].lstrip() if head.startswith("async") else head
        if not head[len("with"):].lstrip().startswith("("):
            return False
        last = node.items[-1].optional_vars or node.items[-1].context_expr
        end_row = last.end_lineno - 1
        count, following = self._closes(end_row, self._col(end_row, last.end_col_offset), True)
        return count >= 1 and following == ":"

    def _closes(self, row: int, col: int, following: bool = False):
        """How many ')' directly follow (row, col) (and, with `following`, the character after
        them: ',' of a trailing comma is skipped)."""
        count = 0
        text = self.lines[row][col:]
        while True:
            stripped = text.lstrip(" \t")
            if stripped.startswith(")"):
                count += 1
                text = stripped[1:]
                continue
            if following and stripped.startswith(","):
                text = stripped[1:]
                continue
            if stripped and not stripped.startswith(("#", "\\")):
                return (count, stripped[0]) if following else count
            row += 1
            if row >= len(self.lines):
                return (count, "") if following else count
            text = self.lines[row]

def _without_comment(text: str) -> str:
    """A code line without its trailing comment (strings on the line are skipped)."""
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif text.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char == "#":
            return text[:index]
        elif char in "'\"":
            quote = text[index:index + 3] if text[index:index + 3] in ("'\'\'", '\"\"\"') else char
            index += len(quote) - 1
        index += 1
    if quote:
        raise Refused("a string open at the end of a line before a parenthesised call")
    return text
