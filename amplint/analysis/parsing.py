"""Reading Python text into a tree: LibCST's parse, and Python's own syntax check.

The lowest layer that both the per-file engine and the project pass use."""

from __future__ import annotations

import ast
import contextlib
import os
import symtable
import threading
import warnings
from typing import Optional

import libcst as cst

from amplint.analysis.tree_cache import (  # noqa: F401 (the trees kept: tree_cache.py, re-exported)
    _accepted, _held_module, drop_held, hold_module, holding_modules, holding_trees, in_holding_trees,
    keep_held, keep_modules, own_tree, parsed_before, python_tree, tag_held,
)


def parse(source: str) -> cst.Module:
    """LibCST's tree of `source`; the same tree as an earlier reader's while it is held
    (`holding_modules`). The tree must not be changed (LibCST's nodes are immutable)."""
    module = _held_module(source)
    if module is not None:
        return module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _parsed_nodes_unvalidated():
            module = cst.parse_module(source)
    if in_holding_trees():  # a parse of the project pass: the lint after it may read it
        hold_module(source, module)
    return module


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
    if parsed_before(source):  # python_tree's `ast.parse` took it: the same parser, no error
        return None
    try:
        # Python's parser without turning its tree into Python objects (a third cheaper); a
        # symbol table needs the tree, so whatever it accepts parses. Anything it rejects (its
        # own checks too, e.g. `nonlocal` at module level) gets the answer of the AST below.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(source, "<amplint>", "exec")
        _accepted(source)  # (the same text again: an empty `__init__.py`, a copied file)
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
