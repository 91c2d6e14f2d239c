"""What a name, attribute or call of this file may hold, as the points-to resolver computes it
over every binding construct (arguments and parameters, defaults, returns, attributes of
instances and classes, containers, closures, decorators, `functools.partial`), with the atoms
rules ask about (project/pointsto_atoms.py): numbers an eps may be, `torch.device` objects,
models a half cast returns. One answer for every rule. Where the project pass solved this file
with the files its regions touch (project/bound_flow.py), its answer comes as an
EntryBoundSpans and covers the other files' calls too; otherwise the file is solved alone on
first use (one `ast` parse and one solve), by the rules whose own lookups found nothing.

A value holds on some path through the calls the resolver sees (it is context-insensitive): a
rule reads it where one path is enough for the hazard (a device type the region receives on
some call raises there), or where every value agrees (`only`)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.positions import positions_of

MODULE = "_amplint_file"
Span = Tuple[int, int, int, int]  # as `ast` gives it: line, column, end line, end column (UTF-8 bytes)


@dataclass(frozen=True)
class EntryBoundSpans:
    """The spans of this file whose values hold atoms, as the project's solve found them:
    (span, the atoms, whether the span also holds anything else). `module`: this file's module
    in the solve; `paths`: (module, displayed path) of the other files an atom comes from."""

    module: str
    spans: Tuple[Tuple[Span, Tuple[str, ...], bool], ...]
    paths: Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class EntryHalfRead:
    """The model the half cast at (line, column) of this file returns is read at `read`
    ("train.py:35", `code`) under the autocast region opened at `region` of another file."""

    line: int
    column: int
    read: str
    code: str
    region: str


# A file the project's solve did not cover is solved alone only up to this size: its cost grows
# with the file (fairseq's 400-1,000-line modules: ~10-150 ms each), and the project pass already
# solves the files its regions and half classes touch, where the hazards these values decide are
ALONE_MAX_LINES = 400
# what may make each kind of atom in a file's own text (the gate before a file is solved alone)
_TEXT = {"R": re.compile(r"\d[eE]-?\d|\d{5,}"), "device": re.compile(r"device\("),
         "half": re.compile(r"\.(?:half|bfloat16|to)\(")}


class BoundValues:
    def __init__(self, module: cst.Module, entries=(), source: Optional[str] = None, line_map=None) -> None:
        self.module = module
        self.entry = next((e for e in entries if isinstance(e, EntryBoundSpans)), None)
        self.half_entries = [e for e in entries if isinstance(e, EntryHalfRead)]
        self.source = source
        self.line_map = line_map
        self._built = False
        self.values_of: Dict[Span, Tuple[Set[str], bool]] = {}
        self.name = self.entry.module if self.entry is not None else MODULE
        self.paths = dict(self.entry.paths) if self.entry is not None else {}
        self._spans: Dict[int, Optional[Span]] = {}
        self.lines: List[str] = []
        self.ok = False
        self._kinds: Optional[Set[str]] = None

    def _text(self) -> str:
        if self.source is None:
            self.source = self.module.code
        return self.source

    def may_hold(self, kind: str) -> bool:
        """Can any expression of the file hold this kind of atom ("R", "device", "half")? Read
        from the project's entry, or from the file's text: no solve."""
        if self._kinds is None:
            if self.entry is not None:
                self._kinds = set()
                for _span, atoms, _other in self.entry.spans:
                    for atom in atoms:
                        self._kinds.add("R" if atom.startswith("R:") else "device" if atom.startswith("X:device")
                                        else "half" if atom.startswith("X:half") else "other")
            else:
                text = self._text()
                small = text.count("\n") <= ALONE_MAX_LINES
                self._kinds = {k for k, pattern in _TEXT.items() if small and pattern.search(text)}
        return kind in self._kinds

    def _build(self) -> None:
        self._built = True
        source = self._text()
        self.lines = source.splitlines()
        if self.entry is not None:
            if self.line_map is not None:  # a part of a large file: the entry's spans are the file's
                return
            self.values_of = {span: (set(atoms), other) for span, atoms, other in self.entry.spans}
        else:
            from amplint.analysis.project.pointsto_extract import extract
            from amplint.analysis.project.pointsto_solve import Solver

            try:
                found = extract(source, MODULE, atoms=True, tree=ast.parse(source))
                solver = Solver([found], atoms=True).solve()
            except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError):
                return
            for span, node in found["spans"].items():
                values = solver.vals.get(node, ())
                atoms = {v for v in values if v[:2] in ("R:", "X:") and v != "R:~"}  # "R:~": something else
                if atoms and any(v.startswith("I:") for v in values):
                    atoms.add("X:instance")  # also an instance of a class of the file
                if atoms:
                    self.values_of[span] = (atoms, node in solver.full or len(atoms) < len(values))
        self.ok = True

    def span_of(self, node: cst.CSTNode) -> Optional[Span]:
        """The node's span as `ast` gives it (positions of the statement holding it only)."""
        if not self._built:
            self._build()
        if not self.ok:
            return None
        key = id(node)
        if key not in self._spans:
            try:
                positions = positions_of(self.module, self._text(), [node])
                line, column, end_line, end_column = positions.span(node)
            except (KeyError, ValueError, RecursionError):
                self._spans[key] = None
                return None
            self._spans[key] = (line, self._bytes(line, column), end_line, self._bytes(end_line, end_column))
        return self._spans[key]

    def spans_of(self, nodes) -> Dict[int, Span]:
        """id(node) -> span for many nodes at once (one generation of the statements holding
        them)."""
        if not self._built:
            self._build()
        wanted = [n for n in nodes if id(n) not in self._spans]
        if self.ok and wanted:
            try:
                positions = positions_of(self.module, self._text(), wanted)
            except (KeyError, ValueError, RecursionError):
                positions = None
            for node in wanted:
                if positions is None or node not in positions:
                    self._spans[id(node)] = None
                    continue
                line, column, end_line, end_column = positions.span(node)
                self._spans[id(node)] = (line, self._bytes(line, column), end_line, self._bytes(end_line, end_column))
        return {id(n): self._spans.get(id(n)) for n in nodes}

    def _bytes(self, line: int, column: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text[:column].encode("utf-8"))

    def _texts(self, prefix: str) -> Set[str]:
        """The code of the one-line spans that hold atoms of `prefix` and nothing else: an
        expression whose code is none of them holds none (no position needed)."""
        memo = self.__dict__.setdefault("_text_index", {})
        if prefix not in memo:
            if not self._built:
                self._build()
            found = set()
            for (line, column, end_line, end_column), (atoms, other) in self.values_of.items():
                if not other and line == end_line and all(a.startswith(prefix) for a in atoms):
                    text = self.lines[line - 1].encode("utf-8") if 0 < line <= len(self.lines) else b""
                    found.add(text[column:end_column].decode("utf-8", "replace"))
            memo[prefix] = found
        return memo[prefix]

    def only(self, expr: cst.CSTNode, prefix: str) -> Optional[Set[str]]:
        """The atoms of `expr` when it holds some and nothing else, all starting with `prefix`."""
        if self.module.code_for_node(expr) not in self._texts(prefix):
            return None
        span = self.span_of(expr)
        found = self.values_of.get(span) if span is not None else None
        if found is None or found[1] or any(not v.startswith(prefix) for v in found[0]):
            return None
        return found[0]

    def numbers(self, expr: cst.CSTNode) -> Optional[Set[float]]:
        """The numbers `expr` holds when it holds nothing else (pointsto_atoms.number)."""
        found = self.only(expr, "R:") if self.may_hold("R") else None
        return {float(v[2:].split("@", 1)[0]) for v in found} if found else None

    def devices(self, expr: cst.CSTNode) -> Optional[List[str]]:
        """Where the `torch.device(...)` calls whose objects `expr` holds are ("line 12",
        "utils/misc.py:6"), when it holds those and nothing else."""
        found = self.only(expr, "X:device@") if self.may_hold("device") else None
        if not found:
            return None
        from amplint.analysis.project.pointsto_atoms import atom_site

        out = []
        for atom in sorted(found):
            module, line, _column = atom_site(atom)
            out.append("line %d" % line if module == self.name else "%s:%d" % (self.paths.get(module, module), line))
        return out

    def half_reads(self, cast: cst.Call) -> Set[Span]:
        """The spans of the file's names, attributes and calls that may hold the model the half
        cast `cast` returns."""
        key = self.span_of(cast) if self.may_hold("half") else None
        if key is None:
            return set()
        atom = "X:half@%s:%d:%d" % (self.name, key[0], key[1])
        return {span for span, (atoms, _other) in self.values_of.items() if span != key and atom in atoms}

    def casts_instance(self, cast: cst.Call) -> bool:
        """The half cast `cast` returns an instance of a project class (a model the resolver
        followed), whatever its name."""
        span = self.span_of(cast) if self.may_hold("half") else None
        found = self.values_of.get(span) if span is not None else None
        return found is not None and "X:instance" in found[0]

    def half_read_elsewhere(self, cast: cst.Call) -> Optional[EntryHalfRead]:
        """Where another file reads the model `cast` returns under its autocast region."""
        key = self.span_of(cast) if self.half_entries else None
        if key is None:
            return None
        return next((e for e in self.half_entries if (e.line, e.column) == key[:2]), None)
