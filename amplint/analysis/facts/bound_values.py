"""What a name, attribute or call of this file may hold, as the points-to resolver computes it
over every binding construct of the file (arguments and parameters, defaults, returns,
attributes of instances and classes, containers, closures, decorators, `functools.partial`),
with the atoms rules ask about (project/pointsto_atoms.py): numbers an eps may be, `torch.device`
objects, models a half cast returns. One answer for every rule, built on first use (one `ast`
parse and one solve of the file) by the rules whose own per-file lookups found nothing.

A value holds on some path through the file's calls: the resolver is context-insensitive, so a
rule reads it where one path is enough for the hazard (a device type the region receives on
some call raises there), or where every value agrees (`only`)."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.positions import node_positions

MODULE = "_amplint_file"


class BoundValues:
    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._built = False
        self.spans: Dict[Tuple[int, int, int, int], str] = {}
        self.solver = None
        self.positions = None
        self.lines: list = []

    def _build(self) -> None:
        self._built = True
        from amplint.analysis.project.pointsto_extract import extract
        from amplint.analysis.project.pointsto_solve import Solver

        source = self.module.code
        try:
            found = extract(source, MODULE, atoms=True, tree=ast.parse(source))
            self.solver = Solver([found], atoms=True).solve()
        except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError):
            return
        self.spans = found["spans"]
        self.lines = source.splitlines()
        self.positions = node_positions(self.module)

    def _key(self, node: cst.CSTNode) -> Optional[Tuple[int, int, int, int]]:
        if not self._built:
            self._build()
        if self.solver is None or node not in self.positions:
            return None
        line, column, end_line, end_column = self.positions.span(node)
        return line, self._bytes(line, column), end_line, self._bytes(end_line, end_column)

    def _bytes(self, line: int, column: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text[:column].encode("utf-8"))

    def values(self, expr: cst.CSTNode) -> Optional[Set[str]]:
        """What `expr` may hold; None when the resolver has no node for it or dropped values
        there (a node over its bound)."""
        key = self._key(expr)
        node = self.spans.get(key) if key is not None else None
        if node is None or node in self.solver.full:
            return None
        return set(self.solver.vals.get(node, ()))

    def only(self, expr: cst.CSTNode, prefix: str) -> Optional[Set[str]]:
        """The values of `expr` when it holds some and all of them start with `prefix` (no
        outside value, no other kind)."""
        found = self.values(expr)
        if not found or any(not v.startswith(prefix) for v in found):
            return None
        return found

    def numbers(self, expr: cst.CSTNode) -> Optional[Set[float]]:
        """The numbers `expr` holds when it holds nothing else (pointsto_atoms.number)."""
        found = self.only(expr, "R:")
        return {float(v[2:]) for v in found} if found else None

    def devices(self, expr: cst.CSTNode) -> Optional[Set[int]]:
        """The lines of the `torch.device(...)` calls whose objects `expr` holds, when it holds
        those and nothing else."""
        found = self.only(expr, "X:device@")
        return {int(v.split("@")[1].split(":")[0]) for v in found} if found else None

    def half_reads(self, cast: cst.Call) -> Dict[Tuple[int, int, int, int], str]:
        """Where the value the half cast `cast` returns is read (span -> node): the spans of the
        file's names, attributes and calls that may hold it."""
        key = self._key(cast)
        if key is None:
            return {}
        atom = "X:half@%d:%d" % key[:2]
        return {span: node for span, node in self.spans.items()
                if span != key and atom in self.solver.vals.get(node, ())}

    def span_of(self, node: cst.CSTNode) -> Optional[Tuple[int, int, int, int]]:
        return self._key(node)
