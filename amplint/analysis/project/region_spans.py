"""Where a file's autocast-like openers and other blocks extend, from its `ast` (the value flow's
region bodies, pointsto_reach.py and value_seeds.py), parsed once per project pass."""

from __future__ import annotations

import ast
from typing import Dict, List, Tuple


_REGION_WORDS = ("autocast", "auto_fp16", "force_fp32", "custom_fwd", "custom_bwd")


def _names_region(node: ast.AST) -> bool:
    """Does this `with` item or decorator name an autocast-like opener (any `enabled`)?"""
    for sub in ast.walk(node):
        name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) else ""
        if any(word in name for word in _REGION_WORDS):
            return True
    return False


def spans(tree: ast.AST) -> Tuple[Dict[int, Tuple[int, int]], List[Tuple[int, int]]]:
    """line an opening is cited at -> (first, last) line of what runs under it (every `with` and
    decorated function); and the spans of those that name an autocast-like opener, enabled or
    not (a call there is the file's own region's business)."""
    found: Dict[int, Tuple[int, int]] = {}
    regions: List[Tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.items:
            span = (node.body[0].lineno, node.end_lineno or node.lineno)
            found.setdefault(node.items[0].context_expr.lineno, span)
            if any(_names_region(item.context_expr) for item in node.items):
                regions.append(span)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span = (node.body[0].lineno, node.end_lineno or node.lineno)
            for decorator in node.decorator_list:
                found.setdefault(decorator.lineno, span)
                if _names_region(decorator):
                    regions.append(span)
    return found, regions


def inside_region(project, path: str, line: int, within=None) -> bool:
    """Is `line` of `path` under one of the file's own autocast-like openers (nested in `within`,
    when given, and not `within` itself)?"""
    for a, b in file_spans(project, path)[1]:
        if a <= line <= b and (within is None or ((a, b) != within and within[0] <= a and b <= within[1])):
            return True
    return False


def file_spans(project, path: str):
    """`spans` of one file, parsed once per project pass."""
    memo = project.__dict__.setdefault("_value_spans", {})
    if path not in memo:
        try:
            memo[path] = spans(ast.parse(project.files[path]))
        except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError):
            memo[path] = ({}, [])
    return memo[path]
