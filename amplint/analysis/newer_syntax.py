"""A file written for a newer Python than the one amplint runs under (PEP 695 `type X = ...`,
`def f[T](x)`, `class C[T]:`, Python 3.12's f-strings nesting their own quotes). LibCST reads them; Python's own parser, which the project pass and
the check of files without AMP terms use, rejects them. Such a file gets one line naming the
construct and the Python it needs (lerobot, requires-python >= 3.12, linted under 3.11 read as
four "syntax error: invalid syntax"), and the run goes on."""

from __future__ import annotations

import re
import sys
from typing import Optional, Tuple

import libcst as cst

# Text that may hold one of Python 3.12's constructs: only then is Python's parser asked (the
# lint of a file LibCST read does not otherwise ask it). Each pattern starts with a literal, which
# `re` scans for quickly (transformers' 53 MB of sources: 0.13 s CPU, six times less than one
# pattern of alternatives); a false candidate costs one check by Python's parser.
_TYPE_ALIAS = re.compile(r"type[ \t]+\w+[ \t]*(?:\[|=)")  # at a line's start (checked below)
_GENERICS = (re.compile(r"def[ \t]+\w+\["), re.compile(r"class[ \t]+\w+\["))
_FSTRING = re.compile(r"""f(?:"(?:[^"\n{]|\{[^}"\n]*\})*\{[^}"\n]*"|'(?:[^'\n{]|\{[^}'\n]*\})*\{[^}'\n]*')""")
_RUNNING = sys.version_info[:2]


def may_be_newer(source: str) -> bool:
    if _RUNNING >= (3, 12):
        return False
    for match in _TYPE_ALIAS.finditer(source):
        line = source.rfind("\n", 0, match.start()) + 1
        if not source[line:match.start()].strip():
            return True
    return any(pattern.search(source) for pattern in (*_GENERICS, _FSTRING))


def newer_construct(module: cst.Module) -> Optional[Tuple[str, Tuple[int, int]]]:
    """(the construct, the Python version it needs) of the first construct in `module` that
    the running Python cannot parse, or None."""
    finder = _Finder()
    module.visit(finder)
    return finder.found


def newer_syntax_line(error: str, module: cst.Module) -> Optional[str]:
    """The line for a file Python's parser rejected (`error`: `line:col: ...` as
    parsing.syntax_error gives it) when LibCST's `module` shows it is newer Python, else None."""
    found = newer_construct(module)
    if found is None:
        return None
    what, need = found
    where = error.split(": ", 1)[0]
    wanted = "%d.%d" % need
    return (
        f"{where}: Python {wanted} syntax ({what}); amplint runs under Python "
        f"{'%d.%d' % _RUNNING}, which cannot parse it: run amplint under Python >= {wanted} "
        "to check this file"
    )


class _Finder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: Optional[Tuple[str, Tuple[int, int]]] = None

    def _note(self, what: str, need: Tuple[int, int]) -> bool:
        if need > _RUNNING and self.found is None:
            self.found = (what, need)
        return self.found is None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None:
            return False
        type_alias = getattr(cst, "TypeAlias", None)
        if type_alias is not None and isinstance(node, type_alias):
            return self._note("a `type` alias statement, PEP 695", (3, 12))
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and getattr(node, "type_parameters", None):
            return self._note("type parameters in brackets, PEP 695", (3, 12))
        if isinstance(node, cst.FormattedString) and _nests_own_quote(node):
            return self._note("an f-string reusing its own quotes inside, PEP 701", (3, 12))
        if isinstance(node, cst.Match):
            return self._note("a `match` statement", (3, 10))
        try_star = getattr(cst, "TryStar", None)
        if try_star is not None and isinstance(node, try_star):
            return self._note("`except*`", (3, 11))
        return True


def _nests_own_quote(node: cst.FormattedString) -> bool:
    quote = node.start.lstrip("fFrRbB")
    module = cst.Module(body=[])
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            code = module.code_for_node(part.expression)
            if quote[0] in code or "\\" in code:
                return True
    return False
