"""Reading Python text into a tree: LibCST's parse, and Python's own syntax check.

The lowest layer that both the per-file engine and the project pass use."""

from __future__ import annotations

import ast
import collections
import contextlib
import symtable
import threading
import warnings
from typing import Optional

import libcst as cst


def parse(source: str) -> cst.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _parsed_nodes_unvalidated():
            return cst.parse_module(source)


def parse_validated(source: str) -> cst.Module:
    """LibCST's parse with every node validated: for the rare valid Python from which LibCST
    builds a node its own check rejects (`() if 0 else(lambda:())`, LibCST issue #1061), where
    this raises as LibCST always did."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cst.parse_module(source)


# LibCST validates every node it constructs (`CSTNode.__post_init__`), a tenth of a parse; its
# own note: "avoid validating the tree when parsing a file". A parse here skips it (nodes made
# later, by fixes, are validated as usual); one at a time, so that threads parsing together
# cannot leave it off, and always restored to LibCST's own method.
_VALIDATING = cst.CSTNode.__dict__.get("__post_init__")
_UNVALIDATED_PARSE = threading.Lock()


@contextlib.contextmanager
def _parsed_nodes_unvalidated():
    if _VALIDATING is None:  # another LibCST layout: leave it alone
        yield
        return
    with _UNVALIDATED_PARSE:
        cst.CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
        try:
            yield
        finally:
            cst.CSTNode.__post_init__ = _VALIDATING  # type: ignore[method-assign]


def _no_validation(self) -> None:
    return None


def syntax_error(source: str) -> Optional[str]:
    """`line:col: syntax error: message` as Python reports it, or None when it parses."""
    with _TREES_LOCK:
        if source in _TREES:  # python_tree's `ast.parse` took it: the same parser, no error
            return None
    try:
        # Python's parser without turning its tree into Python objects (a third cheaper); a
        # symbol table needs the tree, so whatever it accepts parses. Anything it rejects (its
        # own checks too, e.g. `nonlocal` at module level) gets the answer of the AST below.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(source, "<amplint>", "exec")
        return None
    except Exception:
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<amplint>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        return f"{exc.lineno or 1}:{exc.offset or 1}: syntax error: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"1:1: cannot parse: {type(exc).__name__}: {exc}"
    return None


def valid_python(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
            parse(source)
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return False
    return True


# Python's own tree of a text, shared by the readers that parse the same file one after another
# (issue 34): the lint's prefilter and the summary's statement starts, the protocol reader and the
# `ast` summary, the region seeds of the project pass. Lightning's full `-j 1` run made 153 `ast`
# parses of its 98 texts (132 with this). The readers only read the tree: one that changes it
# (ast_registrations) parses its own. The last few trees are kept, bounded by their texts' size:
# kept longer, trees cost the collector's passes more than their parses save (fairseq, 16
# trees: 119 parses on Lightning, but CPU up ~0.3 s on fairseq; 4 trees: down).
_TREES: "collections.OrderedDict[str, ast.Module]" = collections.OrderedDict()
_TREES_LOCK = threading.Lock()
_MAX_TREES = 4
_MAX_TREE_CHARS = 1 << 20  # the texts of the trees kept, together (a tree: ~10-20x its text)
_kept_chars = 0


def python_tree(source: str) -> ast.Module:
    """`ast.parse(source)` (warnings silenced), the same tree as the last readers' when they
    parsed the same text; raises as `ast.parse` does. The tree must not be changed."""
    global _kept_chars
    with _TREES_LOCK:
        tree = _TREES.get(source)
        if tree is not None:
            _TREES.move_to_end(source)
            return tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    if len(source) <= _MAX_TREE_CHARS // 4:
        with _TREES_LOCK:
            if source not in _TREES:
                _TREES[source] = tree
                _kept_chars += len(source)
            while len(_TREES) > _MAX_TREES or _kept_chars > _MAX_TREE_CHARS:
                _kept_chars -= len(_TREES.popitem(last=False)[0])
    return tree
